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
import { formatIp, isFormatV6 } from './format.js';
import { parseIpInto, type IpVersion } from './parse.js';
import { classify, SpecialKind, type SpecialTable } from './special.js';
import type { BulkError } from '../contract/types.js';

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
    return (this.known ??= this.version === 6 && isFormatV6(this.given, this.words) ? this.given : formatIp(this.version, this.words));
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
    // A dotted quad that parsed is already canonical.
    p.known = version === 4 && ip.indexOf(':') < 0 ? ip : null;
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
    return { message: this.message(bad, ip), code: BAD_CODES[bad], status: 400 };
  }
}
