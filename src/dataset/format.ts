/**
 * The compiled dataset: every static part of every record, for the whole
 * address space, in one file that is mapped (or read) and answered from
 * without parsing. `src/compile/` writes it; the engine reads it.
 *
 * The IPv4 and IPv6 spaces are each one partition into ranges, each
 * range with one static record and the prefix length of the ASN network
 * it lies in (`asn.route` is the address masked to it). A static record is
 * a row of fragment ids: pieces of the record's JSON text, fully resolved
 * and rendered when the dataset was compiled, each stored once however
 * many records use it.
 *
 * File layout (little-endian; every section a multiple of 4 bytes, read as
 * typed arrays):
 *
 *     0  magic "IPRDSET1" (8 bytes)    8  u32 format version
 *    12  u32 counts: IPv4 ranges R4, IPv6 ranges R6, records N, locations L,
 *        countries C, networks M, threats T, fragments F, fragment bytes B
 *        (padded to 4), metadata bytes D (padded to 4): 10 words to 52
 *    52  u32 CRC-32 of bytes 64..end   56  reserved (zeros) to 64
 *    64  IPv4 index: 2^20 + 1 × u32 (first range starting in each block of 4 096 addresses)
 *        IPv4 starts: R4 × u32;  IPv4 refs: R4 × u32 (record << 8 | route prefix)
 *        IPv6 index: 2^20 + 1 × u32 (by the first 20 bits)
 *        IPv6 starts: R6 × 4 u32;  IPv6 refs: R6 × u32
 *        records: N × 3 u32 (location, network, threat)
 *        locations: L × 4 u32 (country, place fragment, point fragment, zone or NO_ZONE)
 *        countries: C × 5 u32 (head, middle, flag, after the flag's base, facts fragments)
 *        networks: M × 2 u32 (head, tail fragments)
 *        threats: T × 3 u32 (the object, and without is_vpn and scores; the
 *          threat flags of single sources, for threat feeds laid over at run time)
 *        fragment offsets: F + 1 × u32 into the fragment bytes
 *        fragment bytes: B (UTF-8 JSON text; see compile/fragments.ts)
 *        metadata: D bytes of JSON (zones, sources, build time), padded with spaces.
 */

import { crc32 } from 'node:zlib';
import { InvalidDatasetError } from '../errors.js';

export const DATASET_MAGIC = 'IPRDSET1';
export const DATASET_FORMAT_VERSION = 1;
export const HEADER = 64;
/** Index blocks: an address's first 20 bits. */
export const INDEX_SHIFT = 12;
export const INDEX_WORDS = (1 << 20) + 1;

export const NO_ZONE = 0xffffffff;
/** Route prefix of a range whose record has no network (no `asn.route`). */
export const NO_ROUTE = 255;

/** The tables after the ranges: rows of this many words, each word an index into the table named. */
export const TABLES = {
  records: ['locations', 'networks', 'threats'],
  locations: ['countries', 'fragments', 'fragments', 'zones'],
  countries: ['fragments', 'fragments', 'fragments', 'fragments', 'fragments'],
  networks: ['fragments', 'fragments'],
  threats: ['fragments', 'fragments', 'flags'],
} as const;
export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

export interface DatasetMeta {
  readonly zones: readonly string[];
  readonly builtAt: string;
  /** What the dataset was compiled from, in a form that tells when to compile again (`compile/cache.ts`). */
  readonly key: string;
  /** The databases it was compiled from. */
  readonly sources: readonly SourceInfo[];
}

/** A database a dataset was compiled from. */
export interface SourceInfo {
  readonly role: 'geo' | 'asn' | 'anonymous';
  /** The file, or the package the data came from. */
  readonly path: string;
  readonly schema: string;
  readonly databaseType: string;
  readonly buildEpoch: string;
  readonly ipVersion: 4 | 6;
  readonly nodeCount: number;
  readonly bytes: number;
}

/** A dataset file's sections, as typed arrays over its bytes (checked once, at open). */
export class Dataset {
  readonly index4: Uint32Array;
  readonly starts4: Uint32Array;
  readonly refs4: Uint32Array;
  readonly index6: Uint32Array;
  readonly starts6: Uint32Array;
  readonly refs6: Uint32Array;
  readonly records: Uint32Array;
  readonly locations: Uint32Array;
  readonly countries: Uint32Array;
  readonly networks: Uint32Array;
  readonly threats: Uint32Array;
  readonly fragmentOffsets: Uint32Array;
  /** The fragment bytes (a view of the file). */
  readonly fragments: Buffer;
  readonly meta: DatasetMeta;
  readonly bytes: number;

  /** Records in the file: a range's ref names one below this (checked per lookup, `findRange`). */
  readonly recordCount: number;
  private readonly buf: Buffer;
  private readonly rows: Record<TableName, number>;

  /**
   * Checks the header, the sections' sizes, the metadata, both indexes and
   * the fragment offsets, in a few milliseconds; not the checksum, the
   * ranges' refs nor the tables' rows (reads of the whole file:
   * `verify()`), so that opening costs nothing per range or record. A
   * range whose ref names no record is a typed error when a lookup meets
   * it.
   * @throws InvalidDatasetError for a bad magic, version, size, metadata, or an index out of range
   */
  constructor(buf: Buffer, name: string) {
    this.name = name;
    const bad: (what: string) => never = (what) => {
      throw new InvalidDatasetError(`${name} is not a valid iprecord dataset: ${what}.`);
    };
    if (buf.length < HEADER || buf.toString('latin1', 0, 8) !== DATASET_MAGIC) bad('bad magic');
    const version = buf.readUInt32LE(8);
    if (version !== DATASET_FORMAT_VERSION) bad(`format version ${version}, this iprecord reads ${DATASET_FORMAT_VERSION} (compile it again)`);
    const [r4, r6, n, l, c, m, t, f, fragmentBytes, metaBytes] = Array.from({ length: 10 }, (_, i) => buf.readUInt32LE(12 + i * 4));
    const rows = { records: n, locations: l, countries: c, networks: m, threats: t };
    const words = INDEX_WORDS * 2 + r4 * 2 + r6 * 5 + TABLE_NAMES.reduce((sum, k) => sum + rows[k] * TABLES[k].length, 0) + f + 1;
    const size = HEADER + words * 4 + fragmentBytes + metaBytes;
    if (size !== buf.length) bad(`its sections add up to ${size} bytes but the file has ${buf.length}`);
    const b = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
    this.buf = b;
    let at = b.byteOffset + HEADER;
    const take = (count: number) => {
      const a = new Uint32Array(b.buffer, at, count);
      at += count * 4;
      return a;
    };
    this.index4 = take(INDEX_WORDS);
    this.starts4 = take(r4);
    this.refs4 = take(r4);
    this.index6 = take(INDEX_WORDS);
    this.starts6 = take(r6 * 4);
    this.refs6 = take(r6);
    this.records = take(n * 3);
    this.locations = take(l * 4);
    this.countries = take(c * 5);
    this.networks = take(m * 2);
    this.threats = take(t * 3);
    this.fragmentOffsets = take(f + 1);
    const fragmentsAt = at - b.byteOffset;
    this.fragments = b.subarray(fragmentsAt, fragmentsAt + fragmentBytes);
    let meta: DatasetMeta | null = null;
    try {
      meta = JSON.parse(b.toString('utf8', fragmentsAt + fragmentBytes)) as DatasetMeta;
    } catch {
      // reported below
    }
    if (meta === null || typeof meta !== 'object' || !Array.isArray(meta.zones) || !Array.isArray(meta.sources)) bad('unreadable metadata');
    this.meta = meta as DatasetMeta;
    this.bytes = buf.length;
    this.recordCount = n;
    this.rows = rows;
    // Every index into another section in range, checked here so that lookups need not.
    for (const [label, index, count] of [
      ['IPv4', this.index4, r4],
      ['IPv6', this.index6, r6],
    ] as const) {
      if (count === 0 || index[0] !== 0 || index[INDEX_WORDS - 1] !== count) bad(`the ${label} index does not span its ranges`);
      if (!ascending(index)) bad(`a block of the ${label} index ends before it starts`);
    }
    if (this.starts4[0] !== 0 || this.starts6[0] !== 0 || this.starts6[1] !== 0 || this.starts6[2] !== 0 || this.starts6[3] !== 0) bad('a family does not start at its first address');
    const offsets = this.fragmentOffsets;
    if (offsets[0] !== 0 || offsets[f] > fragmentBytes) bad('the fragment offsets do not span the fragments');
    if (!ascending(offsets)) bad('a fragment ends before it starts');
  }

  readonly name: string;

  /**
   * What the constructor leaves out: the checksum of the whole file, that
   * every range's ref names a record and every table row's ids are in
   * range (a read of each byte; about 0.2-0.3 s for the default data).
   * @throws InvalidDatasetError naming the defect
   */
  verify(): void {
    if (crc32(this.buf.subarray(HEADER)) !== this.buf.readUInt32LE(52)) throw new InvalidDatasetError(`${this.name} is not a valid iprecord dataset: checksum mismatch.`);
    for (const refs of [this.refs4, this.refs6]) {
      for (let i = 0; i < refs.length; i++) {
        const prefix = refs[i] & 255;
        if (refs[i] >>> 8 >= this.recordCount || (prefix > 128 && prefix !== NO_ROUTE)) throw this.badRef(refs[i]);
      }
    }
    const sizes = { ...this.rows, fragments: this.fragmentOffsets.length - 1, zones: this.meta.zones.length, flags: 256 };
    for (const table of TABLE_NAMES) {
      const cols = TABLES[table];
      const a = this[table];
      cols.forEach((target, col) => {
        const row = below(a, col, cols.length, sizes[target], target === 'zones' ? NO_ZONE : -1);
        if (row >= 0) throw new InvalidDatasetError(`${this.name} is not a valid iprecord dataset: ${table} row ${row} refers to ${target} ${a[row * cols.length + col]} of ${sizes[target]}.`);
      });
    }
  }

  /** The error of a range whose ref names no record. */
  badRef(ref: number): InvalidDatasetError {
    return new InvalidDatasetError(`${this.name} is not a valid iprecord dataset: a range refers to record ${ref >>> 8} of ${this.recordCount}.`);
  }

  /** The range of an IPv4 address (a uint32): its ref (record << 8 | route prefix). */
  find4(ip: number): number {
    const block = ip >>> INDEX_SHIFT;
    const starts = this.starts4;
    let lo = this.index4[block];
    let hi = this.index4[block + 1];
    // The last range that starts at or before the address: in the block, else the one before it. A block holds a
    // few ranges (a scan of a cache line); some hold hundreds (a binary search).
    if (hi - lo <= 16) {
      while (lo < hi && starts[lo] <= ip) lo++;
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (starts[mid] <= ip) lo = mid + 1;
        else hi = mid;
      }
    }
    return this.refs4[lo - 1];
  }

  /** The range of an IPv6 address (four words, most significant first): its ref. */
  find6(w: ArrayLike<number>): number {
    const s = this.starts6;
    const w0 = w[0];
    const w1 = w[1];
    const w2 = w[2];
    const w3 = w[3];
    const block = w0 >>> INDEX_SHIFT;
    let lo = this.index6[block];
    let hi = this.index6[block + 1];
    // Binary search for the first range starting after the address.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * 4;
      const atMost = s[at] !== w0 ? s[at] < w0 : s[at + 1] !== w1 ? s[at + 1] < w1 : s[at + 2] !== w2 ? s[at + 2] < w2 : s[at + 3] <= w3;
      if (atMost) lo = mid + 1;
      else hi = mid;
    }
    return this.refs6[lo - 1];
  }

  /** A fragment's bytes (a view of the file). */
  fragment(id: number): Buffer {
    return this.fragments.subarray(this.fragmentOffsets[id], this.fragmentOffsets[id + 1]);
  }
}

/** Whether a column never decreases. */
function ascending(a: Uint32Array): boolean {
  for (let i = 1; i < a.length; i++) if (a[i] < a[i - 1]) return false;
  return true;
}

/** The first row whose column `col` (of `width`) is at least `limit` and not `except`, or -1. */
function below(a: Uint32Array, col: number, width: number, limit: number, except: number): number {
  for (let i = col; i < a.length; i += width) if (a[i] >= limit && a[i] !== except) return (i - col) / width;
  return -1;
}
