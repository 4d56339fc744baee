/**
 * Canonical text of an address: dotted quad for IPv4, RFC 5952 for IPv6
 * (lower case, no leading zeros, the longest run of two or more zero groups
 * written `::`, the first such run on a tie).
 */

import type { IpVersion } from './parse.js';

/** Dotted quad of a uint32. */
export function formatV4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/** Hex digits of 0..255 without leading zeros, and with two digits. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16));
const HEX2 = HEX.map((h) => h.padStart(2, '0'));

/** A 16-bit group in hex without leading zeros. */
function hex(n: number): string {
  return n < 256 ? HEX[n] : HEX[n >>> 8] + HEX2[n & 255];
}

/** Groups `from` to `to` (exclusive) of four words, in hex, joined by colons. */
function groups(words: ArrayLike<number>, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) {
    const w = words[i >>> 1];
    s += (i === from ? '' : ':') + hex(i & 1 ? w & 0xffff : w >>> 16);
  }
  return s;
}

/** Group `i` (0 to 7) of four words. */
export const group = (words: ArrayLike<number>, i: number): number => (i & 1 ? words[i >>> 1] & 0xffff : words[i >>> 1] >>> 16);

/** The run of zero groups RFC 5952 writes `::`: its first group and length (the longest of two or more, the first on a tie), or -1 and 0. */
export function zeroRun(words: ArrayLike<number>): [start: number, length: number] {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (group(words, i) !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && group(words, j) === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  return bestStart < 0 ? [-1, 0] : [bestStart, bestLen];
}

/** RFC 5952 text of four words. */
export function formatV6(words: ArrayLike<number>): string {
  const [start, length] = zeroRun(words);
  if (start < 0) return groups(words, 0, 8);
  return groups(words, 0, start) + '::' + groups(words, start + length, 8);
}

/** Canonical text of a parsed address. */
export function formatIp(version: IpVersion, words: ArrayLike<number>): string {
  return version === 4 ? formatV4(words[3]) : formatV6(words);
}

/** The network of `prefix` bits that contains the address, as CIDR text. */
export function formatCidr(version: IpVersion, words: ArrayLike<number>, prefix: number): string {
  const masked = maskWords(version, words, prefix);
  return `${formatIp(version, masked)}/${prefix}`;
}

/** The address with every bit past `prefix` cleared. */
export function maskWords(version: IpVersion, words: ArrayLike<number>, prefix: number): number[] {
  return maskInto(version, words, prefix, [0, 0, 0, 0]);
}

/** The address with every bit past `prefix` cleared, in `out`. */
export function maskInto<T extends Uint32Array | number[]>(version: IpVersion, words: ArrayLike<number>, prefix: number, out: T): T {
  out[0] = words[0];
  out[1] = words[1];
  out[2] = words[2];
  out[3] = words[3];
  const first = version === 4 ? 3 : 0;
  const bits = version === 4 ? prefix + 96 : prefix;
  for (let w = first; w < 4; w++) {
    const keep = bits - w * 32;
    if (keep >= 32) continue;
    out[w] = keep <= 0 ? 0 : (out[w] & (0xffffffff << (32 - keep))) >>> 0;
  }
  return out;
}
