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
import { fromBigInt, rangeToCidrs, toBigInt } from '../ip/ranges.js';
import { compare } from './partition.js';
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
  return {
    rows: rows.map((r) => ({ start: r.start, end: r.end, key: `${r.asn} ${r.name}`, value: { asn: r.asn, name: r.name } })),
    badLines,
  };
};

/** What reading range CSVs gives, in parts a thread can hand over (its typed arrays moved: `transferables`). */
export interface RangeCsvParts<T> {
  /** Distinct values; a network's `offset` is its index here. */
  readonly owners: T[];
  readonly badLines: readonly BadLine[];
  readonly rows: number;
  /** Bytes read, and the newest file's modification time (ms since the epoch). */
  readonly bytes: number;
  readonly modified: number;
  /** The partition's pieces, sorted: first and last address (four words each; IPv4 at ::/96), owner. */
  readonly lo: Uint32Array;
  readonly hi: Uint32Array;
  readonly owner: Int32Array;
  /** The pieces' CIDR blocks per family, in address order. */
  readonly networks: Record<IpVersion, NetworkList>;
}

/**
 * Reads range CSV files into their partition and its networks.
 * @throws Error when a file cannot be read
 */
export function readRangeCsv<T>(files: readonly string[], read: RangeReader<T>): RangeCsvParts<T> {
  const { rows, badLines } = read(files);
  const stats = files.map((f) => statSync(f));
  const owners: T[] = [];
  const ids = new Map<string, number>();
  const items = rows.map((r, order) => {
    let id = ids.get(r.key);
    if (id === undefined) {
      id = owners.push(r.value) - 1;
      ids.set(r.key, id);
    }
    return { lo: toBigInt(r.start), hi: toBigInt(r.end), order, id };
  });
  const pieces = resolveRows(items);
  const lo = new Uint32Array(pieces.length * 4);
  const hi = new Uint32Array(pieces.length * 4);
  const owner = new Int32Array(pieces.length);
  const networks = { 4: new Networks(), 6: new Networks() };
  pieces.forEach((p, i) => {
    lo.set(fromBigInt(6, p.lo), i * 4);
    hi.set(fromBigInt(6, p.hi), i * 4);
    owner[i] = p.id;
    const v4 = p.hi <= V4_END;
    for (const c of cidrs(p.lo, p.hi)) {
      if (v4) networks[4].push(c.words, c.prefix - 96, p.id);
      networks[6].push(c.words, c.prefix, p.id);
    }
  });
  return {
    owners,
    badLines,
    rows: rows.length,
    bytes: stats.reduce((a, s) => a + s.size, 0),
    modified: Math.max(...stats.map((s) => s.mtimeMs)),
    lo,
    hi,
    owner,
    networks: { 4: networks[4].list(), 6: networks[6].list() },
  };
}

/** The typed arrays of read range CSVs, to move to another thread. */
export function transferables(parts: RangeCsvParts<unknown>): ArrayBuffer[] {
  const n = [parts.networks[4], parts.networks[6]];
  return [parts.lo, parts.hi, parts.owner, ...n.flatMap((l) => [l.words, l.prefix, l.owner])].map((a) => a.buffer as ArrayBuffer);
}

/** Range CSVs read (`readRangeCsv`), as a database the compiler walks. */
export class RangeCsv<T> {
  readonly owners: T[];
  readonly badLines: readonly BadLine[];
  readonly rows: number;
  readonly bytes: number;
  readonly modified: Date;
  private readonly parts: RangeCsvParts<T>;

  constructor(parts: RangeCsvParts<T>) {
    this.parts = parts;
    this.owners = parts.owners;
    this.badLines = parts.badLines;
    this.rows = parts.rows;
    this.bytes = parts.bytes;
    this.modified = new Date(parts.modified);
  }

  /** Every network of a family in address order: its first address (four words), prefix length (IPv4: 0-32) and owner. */
  forEachNetwork(version: IpVersion, fn: (words: Uint32Array, prefix: number, offset: number) => void): void {
    const n = this.parts.networks[version];
    const words = new Uint32Array(4);
    for (let i = 0; i < n.length; i++) {
      words.set(n.words.subarray(i * 4, i * 4 + 4));
      fn(words, n.prefix[i], n.owner[i]);
    }
  }

  /** The network that holds an address (as `MmdbFile.find`): its owner in `out.offset` (-1: none) and its prefix length. */
  find(version: IpVersion, words: ArrayLike<number>, out: Found): number {
    const { lo, hi, owner } = this.parts;
    const x = Uint32Array.from([words[0], words[1], words[2], words[3]]);
    let low = 0;
    let high = owner.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(lo, mid * 4, x, 0) <= 0) low = mid + 1;
      else high = mid;
    }
    const i = low - 1;
    out.offset = -1;
    if (i < 0 || compare(hi, i * 4, x, 0) < 0 || (version === 4 && (x[0] | x[1] | x[2]) !== 0)) return 0;
    const value = toBigInt({ version: 6, words: [x[0], x[1], x[2], x[3]] });
    const [first, last] = [lo, hi].map((a) => toBigInt({ version: 6, words: [a[i * 4], a[i * 4 + 1], a[i * 4 + 2], a[i * 4 + 3]] }));
    for (const c of cidrs(first, last)) {
      const start = toBigInt({ version: 6, words: c.words });
      if (value >= start && value < start + (1n << BigInt(128 - c.prefix))) {
        out.offset = owner[i];
        out.prefix = version === 4 ? c.prefix - 96 : c.prefix;
      }
    }
    return 0;
  }
}

/** A piece's CIDR blocks, in IPv6 terms (an IPv4 piece's at ::/96). */
function cidrs(lo: bigint, hi: bigint): { words: [number, number, number, number]; prefix: number }[] {
  if (hi <= V4_END)
    return rangeToCidrs({ version: 4, words: [0, 0, 0, Number(lo)] }, { version: 4, words: [0, 0, 0, Number(hi)] }).map((c) => ({
      ...c,
      prefix: c.prefix + 96,
    }));
  return rangeToCidrs({ version: 6, words: fromBigInt(6, lo) }, { version: 6, words: fromBigInt(6, hi) });
}

/** CIDR blocks in typed arrays: first address (four words), prefix length, owner. */
export interface NetworkList {
  readonly words: Uint32Array;
  readonly prefix: Uint8Array;
  readonly owner: Int32Array;
  readonly length: number;
}

/** A NetworkList being made. */
class Networks {
  words = new Uint32Array(4096);
  prefix = new Uint8Array(1024);
  owner = new Int32Array(1024);
  length = 0;

  push(words: ArrayLike<number>, prefix: number, owner: number): void {
    if (this.length === this.prefix.length) {
      const grow = <A extends Uint32Array | Uint8Array | Int32Array>(a: A): A => {
        const b = new (a.constructor as new (n: number) => A)(a.length * 2);
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

  /** The list, its arrays cut to its length (copies: moved to another thread, only their own bytes go). */
  list(): NetworkList {
    return {
      words: this.words.slice(0, this.length * 4),
      prefix: this.prefix.slice(0, this.length),
      owner: this.owner.slice(0, this.length),
      length: this.length,
    };
  }
}
