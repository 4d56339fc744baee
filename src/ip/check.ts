/**
 * An address parsed and checked for a lookup: what keeps it from having a
 * record (malformed, private, reserved), with the service's messages.
 * Reuses its buffers: one per engine, whose lookups are synchronous.
 */

import {
  InvalidIpError,
  invalidIpMessage,
  PrivateIpError,
  privateIpMessage,
  ReservedIpError,
  reservedIpMessage,
} from '../contract/errors.js';
import { carriesIpv4 } from './embedded.js';
import { formatIp } from './format.js';
import { parseIpInto, parsedCanonically, type IpVersion } from './parse.js';
import { classify, SpecialKind, type SpecialTable } from './special.js';
import type { BulkError } from '../contract/types.js';
import { utf8Bytes, utf8Length, writeUtf8 } from '../platform/bytes.js';

/** What keeps an address from having a record. */
export const enum Bad {
  None,
  Invalid,
  Private,
  Reserved,
}

/** The error code of each finding of `check()` (`IprecordError.code`). */
export const BAD_CODES = ['', 'INVALID_IP', 'PRIVATE_IP', 'RESERVED_IP'] as const;

/** An address parsed and checked (its words are the check's). */
export class Parsed {
  version: IpVersion = 4;
  kind: SpecialKind = SpecialKind.None;
  /** Its canonical text once known: the text given when that is a dotted quad, else found when first asked for. */
  known: string | null = null;
  /** The text it was parsed from. */
  given = '';

  constructor(private readonly words: Uint32Array) {}

  /**
   * Its canonical text: an IPv6 address's is found only when asked for (a record written as bytes writes it from the
   * words), the text given where that is already canonical (as addresses in logs mostly are), else made.
   */
  get text(): string {
    return (this.known ??= formatIp(this.version, this.words));
  }
}

export class AddressCheck {
  /** The address parsed (four words, most significant first; IPv4 in the last). */
  readonly words = new Uint32Array(4);
  readonly parsed = new Parsed(this.words);

  constructor(readonly special: SpecialTable) {}

  /** Parses and checks an address into `words` and `parsed`: what keeps it from having a record, if anything. */
  check(ip: unknown): Bad {
    if (typeof ip !== 'string') return Bad.Invalid;
    let version = parseIpInto(ip, this.words);
    if (version === 0) return Bad.Invalid;
    if (version === 6 && carriesIpv4(this.words)) {
      // ::a.b.c.d and 64:ff9b::a.b.c.d answer as a.b.c.d (`embedded.ts`).
      this.words[0] = 0;
      version = 4;
    }
    const p = this.parsed;
    p.version = version;
    // A dotted quad that parsed is already canonical, and so is IPv6 text the parser found spelled canonically.
    p.known = version === 4 ? (ip.indexOf(':') < 0 ? ip : null) : parsedCanonically() ? ip : null;
    p.given = ip;
    p.kind = classify(this.special, version, this.words);
    return p.kind === SpecialKind.Private ? Bad.Private : p.kind === SpecialKind.Reserved ? Bad.Reserved : Bad.None;
  }

  /**
   * `check()`, with what it finds thrown.
   * @throws InvalidIpError, PrivateIpError, ReservedIpError
   */
  address(ip: unknown): Parsed {
    const bad = this.check(ip);
    if (bad === Bad.Invalid) throw new InvalidIpError(ip);
    if (bad === Bad.Private) throw new PrivateIpError(this.parsed.text);
    if (bad === Bad.Reserved) throw new ReservedIpError(this.parsed.text);
    return this.parsed;
  }

  /** The service's message for what `check(ip)` found (the address as parsed in `parsed`). */
  message(bad: Bad, ip: unknown): string {
    return bad === Bad.Invalid
      ? invalidIpMessage(ip)
      : bad === Bad.Private
        ? privateIpMessage(this.parsed.text)
        : reservedIpMessage(this.parsed.text);
  }

  /** What `check(ip)` found as a value, as `bulk()` answers a bad entry (`tryLookup()`, a selection's `try()`). */
  failure(bad: Bad, ip: unknown): BulkError {
    return failureOf(bad, this.message(bad, ip));
  }

  /**
   * Writes `JSON.stringify(failure(bad, ip))` as UTF-8 into `target` from
   * `at` where it fits whole (else nothing); its length in bytes. A private
   * or reserved address's from the JSON around its canonical text (ASCII,
   * nothing to escape), with no string made but that text.
   */
  writeFailure(bad: Bad, ip: unknown, target: Uint8Array, at: number): number {
    if (bad === Bad.Invalid) {
      const json = JSON.stringify(this.failure(bad, ip));
      const n = utf8Length(json);
      if (n <= target.length - at) writeUtf8(target, json, at);
      return n;
    }
    const [head, tail] = bad === Bad.Private ? PRIVATE_JSON : RESERVED_JSON;
    const text = this.parsed.text;
    const n = head.length + text.length + tail.length;
    if (n <= target.length - at) {
      // A few dozen bytes: copied here (a call into the runtime per piece costs more than the copy).
      target.set(head, at);
      let p = at + head.length;
      for (let i = 0; i < text.length; i++) target[p++] = text.charCodeAt(i);
      target.set(tail, p);
    }
    return n;
  }
}

/** The error value of a finding with its message. */
function failureOf(bad: Bad, message: string): BulkError {
  return { message, code: BAD_CODES[bad], status: 400 };
}

/** The JSON of a private and a reserved address's error, before and after the address's text. */
const around = (bad: Bad, message: (ip: string) => string) =>
  JSON.stringify(failureOf(bad, message('@')))
    .split('@')
    .map((t) => utf8Bytes(t));
const PRIVATE_JSON = around(Bad.Private, privateIpMessage);
const RESERVED_JSON = around(Bad.Reserved, reservedIpMessage);
