/**
 * What ranges of one route share while an export walks them. A record
 * differs from range to range of one dataset record only by `asn.route`,
 * the address masked to the record's route prefix; ranges of one route all
 * lie inside the route's block, so what is made for a route is dropped once
 * the walk (in address order) is past its block.
 */

import { NO_ROUTE } from '../dataset/layout.js';
import { formatCidr } from '../ip/format.js';
import { fromBigInt } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';

/** A route the walk is in: its text (`asn.route`), its last address, and what has been made for it. */
export interface Route<T> {
  readonly text: string;
  readonly end: bigint;
  readonly held: T;
}

export class Routes<T> {
  private readonly open = new Map<string, Route<T>>();
  constructor(private readonly make: () => T) {}

  /** The route of a range (its first address, and its ref's route prefix, not NO_ROUTE). */
  at(version: IpVersion, first: bigint, prefix: number): Route<T> {
    const shift = BigInt((version === 4 ? 32 : 128) - prefix);
    const start = (first >> shift) << shift;
    const key = `${version}/${start}/${prefix}`;
    let r = this.open.get(key);
    if (r === undefined) {
      // Routes the walk is past hold nothing a later range needs.
      for (const [k, old] of this.open) if (old.end < first) this.open.delete(k);
      r = { text: formatCidr(version, fromBigInt(version, start), prefix), end: start + (1n << shift) - 1n, held: this.make() };
      this.open.set(key, r);
    }
    return r;
  }
}

/**
 * Ranges' values made once per dataset record and route (`make` is asked
 * for the first range of each), so that a walk asks `lookup()` about
 * 2.6 million times, not 9 million, and ranges of one record share one
 * value. Records with no route are held by record, at most `LIMIT` at once.
 */
export class PerRoute<T> {
  private readonly routes = new Routes(() => new Map<number, T>());
  private readonly unrouted = new Map<number, T>();
  constructor(private readonly make: (version: IpVersion, first: bigint) => T) {}

  get(version: IpVersion, first: bigint, ref: number): T {
    const prefix = ref & 255;
    const held = prefix === NO_ROUTE ? this.unrouted : this.routes.at(version, first, prefix).held;
    let v = held.get(ref >>> 8);
    if (v === undefined) {
      if (held === this.unrouted && held.size >= LIMIT) held.clear();
      v = this.make(version, first);
      held.set(ref >>> 8, v);
    }
    return v;
  }
}

const LIMIT = 1 << 16;
