/**
 * Addresses as values, for code off the hot path (builders, tests, the CLI).
 * The engine itself parses into a reused word buffer with `parseIpInto`.
 */

import { formatIp } from './format.js';
import { parseIpInto, type IpVersion } from './parse.js';

export interface Address {
  readonly version: IpVersion;
  /** Four uint32 words, most significant first; IPv4 in `words[3]`. */
  readonly words: readonly [number, number, number, number];
}

/** Parses an address, or returns null when the text is not one. */
export function parseIp(text: string): Address | null {
  const out = new Uint32Array(4);
  const version = parseIpInto(text, out);
  if (version === 0) return null;
  return { version, words: [out[0], out[1], out[2], out[3]] };
}

/** Canonical text (dotted quad, or RFC 5952) of an address. */
export function canonicalIp(text: string): string | null {
  const a = parseIp(text);
  return a === null ? null : formatIp(a.version, a.words);
}

/** Parses `a.b.c.d/n` or `x::/n`; returns null when it is not a CIDR. */
export function parseCidr(text: string): { address: Address; prefix: number } | null {
  const slash = text.indexOf('/');
  if (slash < 0) {
    const address = parseIp(text);
    return address && { address, prefix: address.version === 4 ? 32 : 128 };
  }
  const address = parseIp(text.slice(0, slash));
  const digits = text.slice(slash + 1);
  if (!address || !/^\d{1,3}$/.test(digits)) return null;
  const prefix = Number(digits);
  if (prefix > (address.version === 4 ? 32 : 128)) return null;
  return { address, prefix };
}
