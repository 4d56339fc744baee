/**
 * Range CSVs as a source of the compiler, read straight into networks: ASN
 * ranges (`start,end,asn,organisation`, the format of `@ip-location-db/asn`)
 * and geo ranges (`geo-csv.ts`). Rows are resolved into one sorted
 * partition where a later row wins on its own range (in the
 * @ip-location-db data the one nested row is the narrower announcement;
 * `row-partition.ts`),
 * each piece split into CIDR blocks (`asn.route` is the block that holds
 * the address). IPv4 rows also answer at ::/96 of IPv6, as in an MMDB's
 * IPv6 tree. Build time only.
 */

import { statSync } from 'node:fs';
import { readAsnCsv, type BadLine } from './asn/compile.js';
import type { Address } from '../ip/address.js';
import { rangeToCidrs, toBigInt } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import type { Found } from '../mmdb/reader.js';
import { resolveRows } from './row-partition.js';

const V4_END = (1n << 32n) - 1n;

/** A network owner as a row gives it. */
export interface AsnCsvOwner {
  readonly asn: number;
  readonly name: string;
}

/** One row of a range CSV: its range, and what it says (`key` tells equal values apart). */
export interface RangeRow<T> {
  readonly start: Address;
  readonly end: Address;
  readonly key: string;
  readonly value: T;
}

/** A reader of range CSV files: their rows and the lines it could not read. */
export type RangeReader<T> = (files: readonly string[]) => { rows: RangeRow<T>[]; badLines: BadLine[] };

/** The rows of ASN range CSVs. */
export const readAsnRows: RangeReader<AsnCsvOwner> = (files) => {
  const { rows, badLines } = readAsnCsv(files);
  return { rows: rows.map((r) => ({ start: r.start, end: r.end, key: `${r.asn} ${r.name}`, value: { asn: r.asn, name: r.name } })), badLines };
};

export class RangeCsv<T> {
  /** Distinct values; a network's `offset` is its index here. */
  readonly owners: T[] = [];
  readonly badLines: readonly BadLine[];
  readonly rows: number;
  /** Bytes read, and the newest file's modification time. */
  readonly bytes: number;
  readonly modified: Date;
  /** The partition's pieces, sorted: first and last address (IPv4 at ::/96), owner. */
  private readonly lo: bigint[] = [];
  private readonly hi: bigint[] = [];
  private readonly owner: number[] = [];
  /** The pieces' CIDR blocks per family, in address order. */
  private readonly networks: Record<IpVersion, Networks>;

  constructor(files: readonly string[], read: RangeReader<T>) {
    const { rows, badLines } = read(files);
    this.badLines = badLines;
    this.rows = rows.length;
    const stats = files.map((f) => statSync(f));
    this.bytes = stats.reduce((a, s) => a + s.size, 0);
    this.modified = new Date(Math.max(...stats.map((s) => s.mtimeMs)));
    const ids = new Map<string, number>();
    const items = rows.map((r, order) => {
      let id = ids.get(r.key);
      if (id === undefined) {
        id = this.owners.push(r.value) - 1;
        ids.set(r.key, id);
      }
      return { lo: toBigInt(r.start), hi: toBigInt(r.end), order, id };
    });
    const out = resolveRows(items);
    for (const p of out) {
      this.lo.push(p.lo);
      this.hi.push(p.hi);
      this.owner.push(p.id);
    }
    this.networks = { 4: new Networks(), 6: new Networks() };
    for (let i = 0; i < this.lo.length; i++) {
      const v4 = this.hi[i] <= V4_END;
      for (const c of this.cidrs(i)) {
        if (v4) this.networks[4].push(c.words, c.prefix - 96, this.owner[i]);
        this.networks[6].push(c.words, c.prefix, this.owner[i]);
      }
    }
  }

  /** Every network of a family in address order: its first address (four words), prefix length (IPv4: 0-32) and owner. */
  forEachNetwork(version: IpVersion, fn: (words: Uint32Array, prefix: number, offset: number) => void): void {
    const n = this.networks[version];
    const words = new Uint32Array(4);
    for (let i = 0; i < n.length; i++) {
      words.set(n.words.subarray(i * 4, i * 4 + 4));
      fn(words, n.prefix[i], n.owner[i]);
    }
  }

  /** The network that holds an address (as `MmdbFile.find`): its owner in `out.offset` (-1: none) and its prefix length. */
  find(version: IpVersion, words: ArrayLike<number>, out: Found): number {
    const x = toBigInt({ version: 6, words: [words[0], words[1], words[2], words[3]] });
    let lo = 0;
    let hi = this.lo.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.lo[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    out.offset = -1;
    if (i < 0 || this.hi[i] < x || (version === 4 && x > V4_END)) return 0;
    for (const c of this.cidrs(i)) {
      const first = toBigInt({ version: 6, words: c.words });
      if (x >= first && x < first + (1n << BigInt(128 - c.prefix))) {
        out.offset = this.owner[i];
        out.prefix = version === 4 ? c.prefix - 96 : c.prefix;
      }
    }
    return 0;
  }

  /** Piece i's CIDR blocks, in IPv6 terms (an IPv4 piece's at ::/96). */
  private cidrs(i: number) {
    const lo = this.lo[i];
    const hi = this.hi[i];
    if (hi <= V4_END) return rangeToCidrs({ version: 4, words: [0, 0, 0, Number(lo)] }, { version: 4, words: [0, 0, 0, Number(hi)] }).map((c) => ({ ...c, prefix: c.prefix + 96 }));
    return rangeToCidrs(
      { version: 6, words: [0, 1, 2, 3].map((w) => Number((lo >> BigInt(96 - 32 * w)) & 0xffffffffn)) as [number, number, number, number] },
      { version: 6, words: [0, 1, 2, 3].map((w) => Number((hi >> BigInt(96 - 32 * w)) & 0xffffffffn)) as [number, number, number, number] },
    );
  }
}

/** CIDR blocks in typed arrays: first address (four words), prefix length, owner. */
class Networks {
  words = new Uint32Array(4096);
  prefix = new Uint8Array(1024);
  owner = new Int32Array(1024);
  length = 0;

  push(words: ArrayLike<number>, prefix: number, owner: number): void {
    if (this.length === this.prefix.length) {
      const grow = <T extends Uint32Array | Uint8Array | Int32Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(a.length * 2);
        b.set(a);
        return b;
      };
      this.words = grow(this.words);
      this.prefix = grow(this.prefix);
      this.owner = grow(this.owner);
    }
    this.words.set(words, this.length * 4);
    this.prefix[this.length] = prefix;
    this.owner[this.length] = owner;
    this.length++;
  }
}
