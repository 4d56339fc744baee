/**
 * What an address resolved to, kept per address by the engine: logs and
 * clients come back to the same addresses, and each tree walk (location,
 * network, threat feeds) is a chain of dependent reads through files far
 * larger than the processor's caches. A direct-mapped table: an address
 * has one slot (a hash of its words), and a new address takes the slot
 * over. It answers for one snapshot, and empties itself when given
 * another. Where addresses do not come back (every one new), keeping them
 * costs more than it saves: the memo then rests, and tries again now and
 * then.
 */

import type { IpVersion } from '../ip/parse.js';
import type { AsnPart, AsnRecord, GeoPart, Snapshot } from '../snapshot.js';
import type { Threat } from '../types.js';

/** log2 of the slots: 131 072 addresses (9 MiB). */
const BITS = 17;
const SLOTS = 1 << BITS;
/** Lookups per window: the memo decides per window whether it is worth keeping. */
export const WINDOW = 16_384;
/** A window in which fewer than one lookup in this many hit makes the memo rest. */
const MIN_HIT_SHARE = 8;
/** Windows a resting memo sits out before it tries again. */
export const REST = 7;
/** References per slot. */
const REFS = 5;

/** What an address resolved to: the location, the network (its ASN record; where `asnRecordOf` found it) and the threat object. */
export interface Resolution {
  geo: GeoPart | null;
  asn: AsnRecord | null;
  /** The ASN network's prefix length, database and leaf (see `Snapshot.asnRecordOf`). */
  prefix: number;
  source: number;
  leaf: number;
  threat: Threat;
}

export class AddressMemo {
  /** The snapshot the slots answer for. */
  private snap: Snapshot | null = null;
  /**
   * Per slot, eight numbers (32 bytes, half a cache line): the address's
   * four words (an IPv4 address in the last), then its version (0 when
   * the slot is empty), and the ASN network's prefix length, leaf (plus 2:
   * a leaf may be -2) and database.
   */
  private readonly keys = new Uint32Array(8 * SLOTS);
  /**
   * Per slot, five references: location, ASN record, threat object, and,
   * made when first asked for, the IPv6 route's text (for the byte
   * writers) and the network part (for `lookup()`).
   */
  private readonly refs: unknown[] = new Array<unknown>(REFS * SLOTS).fill(null);
  /** Lookups left in this window, hits in it, and windows left to rest (0: in use). */
  private left = WINDOW;
  private hits = 0;
  private resting = 0;

  /**
   * Whether this lookup should use the memo; counts the lookups of the
   * window, and at its end decides whether the next is worth it.
   */
  use(): boolean {
    if (this.left === 0) {
      if (this.resting > 0) this.resting--;
      else if (this.hits * MIN_HIT_SHARE < WINDOW) this.resting = REST;
      this.left = WINDOW;
      this.hits = 0;
    }
    this.left--;
    return this.resting === 0;
  }

  /** The slot of an address (its hash). */
  slot(version: IpVersion, w: ArrayLike<number>): number {
    const h = version === 4 ? w[3] : w[0] ^ Math.imul(w[1], 0x85ebca6b) ^ Math.imul(w[2], 0xc2b2ae35) ^ Math.imul(w[3], 0x27d4eb2f);
    return Math.imul(h ^ (h >>> 16), 0x9e3779b1) >>> (32 - BITS);
  }

  /** Whether `slot` holds the address, for `snap` (a new snapshot empties every slot). */
  has(snap: Snapshot, slot: number, version: IpVersion, w: ArrayLike<number>): boolean {
    if (snap !== this.snap) {
      this.clear();
      this.snap = snap;
      return false;
    }
    const keys = this.keys;
    const at = slot * 8;
    if (keys[at + 4] !== version || keys[at + 3] !== w[3] || (version === 6 && (keys[at] !== w[0] || keys[at + 1] !== w[1] || keys[at + 2] !== w[2]))) return false;
    this.hits++;
    return true;
  }

  /** Empties every slot (and lets go of the snapshot's parts). */
  clear(): void {
    this.keys.fill(0);
    this.refs.fill(null);
    this.snap = null;
  }

  /** Gives `slot` to an address and what it resolved to. */
  set(slot: number, version: IpVersion, w: ArrayLike<number>, r: Resolution): void {
    const keys = this.keys;
    const at = slot * 8;
    keys[at] = w[0];
    keys[at + 1] = w[1];
    keys[at + 2] = w[2];
    keys[at + 3] = w[3];
    keys[at + 4] = version;
    keys[at + 5] = r.prefix;
    keys[at + 6] = r.leaf + 2;
    keys[at + 7] = r.source;
    const refs = this.refs;
    const ref = slot * REFS;
    refs[ref] = r.geo;
    refs[ref + 1] = r.asn;
    refs[ref + 2] = r.threat;
    refs[ref + 3] = null;
    refs[ref + 4] = null;
  }

  /** What the address in `slot` resolved to, into `r`. */
  get(slot: number, r: Resolution): void {
    const keys = this.keys;
    const at = slot * 8;
    r.prefix = keys[at + 5];
    r.leaf = keys[at + 6] - 2;
    r.source = keys[at + 7];
    const refs = this.refs;
    const ref = slot * REFS;
    r.geo = refs[ref] as GeoPart | null;
    r.asn = refs[ref + 1] as AsnRecord | null;
    r.threat = refs[ref + 2] as Threat;
  }

  /** The IPv6 route text kept in `slot`, or null. */
  routeAt(slot: number): string | null {
    return this.refs[slot * REFS + 3] as string | null;
  }

  /** Keeps the IPv6 route text of `slot`; returns it. */
  setRoute(slot: number, route: string): string {
    this.refs[slot * REFS + 3] = route;
    return route;
  }

  /** The network part kept in `slot`, or null. */
  partAt(slot: number): AsnPart | null {
    return this.refs[slot * REFS + 4] as AsnPart | null;
  }

  /** Keeps the network part of `slot`; returns it. */
  setPart(slot: number, part: AsnPart): AsnPart {
    this.refs[slot * REFS + 4] = part;
    return part;
  }
}
