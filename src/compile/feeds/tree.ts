/**
 * `threat.bin`: the compiled threat feeds, and lookups over it.
 *
 * The compiler (`compile.ts`) reduces every feed to one partition of the
 * address space: merged ranges, each with the label of the feeds that list
 * all of its addresses (the union of every covering entry, pushed down).
 * This file stores that partition as a radix tree of two levels: the first
 * 20 bits of an IPv4 address index a bucket of 4 096 addresses, and a
 * bucket holds its merged ranges in order, keyed by the last 12 bits. A
 * lookup is one index read and a scan of a few keys (a binary search in
 * long buckets); the label it finds answers every threat question at once.
 *
 * An IPv4 entry is one u32: a 16-bit key, (address bits within the
 * bucket) << 1 | kind, above a 16-bit label (past 65 536 labels, the wide
 * form: zero there, and the labels in an array of their own), so that the
 * entry a search ends on holds its label. A range of one address
 * is one entry of kind END (1); a longer range is a START entry (0) at its
 * first address and an END entry at its last. For an address x the last
 * entry with key <= (x << 1 | 1) decides: START means x is inside, END
 * means x is inside only when its key is x's. Ranges that cross a bucket's
 * edge are cut there. IPv6 entries are the same with 128-bit keys (four
 * u32) and a u32 of kind (top bit) and label, in one sorted array.
 *
 * File layout (little-endian; every section a multiple of 4 bytes, read as
 * typed arrays without parsing):
 *
 *     0  magic "IPRTHRT1" (8 bytes)
 *     8  u32 format version (4)
 *    12  u32 IPv4 entries E4         16  u32 IPv6 entries E6
 *    20  u32 labels L                24  u32 blocklist references B
 *    28  u32 metadata bytes M        32  u32 flags (bit 0: wide IPv4 labels)
 *    36  u32 CRC-32 of bytes 64..end
 *    40  u32 IPv4 merged ranges      44  u32 IPv6 merged ranges
 *    48  reserved (zeros) to 64
 *    64  IPv4 bucket index: 1 048 577 × u32 (bucket b: entries index[b] to index[b+1])
 *        IPv4 entries: E4 × u32 (wide: then E4 × u32 labels)
 *        IPv6 keys: E6 × 4 u32; IPv6 kinds and labels: E6 × u32
 *        labels: L × 6 u32: flags, first blocklist reference, blocklist
 *        count, highest hit count, evidence counts (8 × u8: bogon,
 *        datacenter, tor, vpn, proxy, icloud_relay, attacker, abuser)
 *        blocklist references: B × u32 (indexes into the metadata's list)
 *        metadata: M bytes of JSON (feeds, blocklists, build time), padded
 *        with spaces to a multiple of 4.
 */

import { endianness } from 'node:os';
import { crc32 } from 'node:zlib';
import { InvalidDatasetError } from '../../errors.js';
import type { IpVersion } from '../../ip/parse.js';
import type { Category } from '../../record/threat.js';
import type { Blocklist } from '../../types.js';
import type { RangeList, RangeList6 } from './ranges.js';

export const THREAT_MAGIC = 'IPRTHRT1';
export const THREAT_FORMAT_VERSION = 4;
const HEADER = 64;
/** Buckets of 4096 addresses (an IPv4 address's first 20 bits). */
const SHIFT = 12;
export const BUCKETS = 1 << (32 - SHIFT);
const INDEX_WORDS = BUCKETS + 1;
/** Words of a label record. */
export const LABEL_WORDS = 6;
/** Labels that fit the 15 bits of a compact IPv4 entry. */
export const COMPACT_LABELS = 0x10000;
/** The low bit of an IPv4 key: an END entry. */
const END4 = 1;
/** Addresses per block of `find4Many`. */
const BLOCK = 64;
/** The address bits within a bucket. */
const LOW = (1 << SHIFT) - 1;
const END6 = 0x80000000;
const WIDE = 1;

/** What the file says of one feed (for `info()`). */
export interface FeedMeta {
  readonly name: string;
  readonly categories: readonly Category[];
  readonly source: string;
  readonly format: string;
  readonly entries: number;
  readonly badLines: number;
  /** Distinct addresses covered, as a decimal string (IPv6 counts are large). */
  readonly addresses: string;
  readonly dataDate: string | null;
  readonly fetchedAt: string | null;
}

export interface ThreatMeta {
  readonly builtAt: string;
  readonly feeds: readonly FeedMeta[];
  readonly blocklists: readonly Blocklist[];
}

/** A slice of the IPv4 part of the file: buckets `from` to `to` (exclusive), encoded. */
export interface Slice4 {
  /** Entry offsets within the slice, one per bucket and one past the last. */
  readonly index: Uint32Array;
  readonly keys: Uint16Array;
  /** Labels as the slice's own table numbers them. */
  readonly labels: Uint32Array;
  /** Merged ranges. */
  readonly ranges: number;
  /** The first range's start and the last range's end with their labels, to join ranges across slices (null: no range). */
  readonly head: { readonly at: number; readonly label: number } | null;
  readonly tail: { readonly at: number; readonly label: number } | null;
}

/** What the compiler hands the file. */
export interface ThreatTables {
  /**
   * IPv4: the bucket index, the number of entries, and `fill`, which writes
   * them (key << 16 | label, or key << 16 alone with their labels apart
   * when `wide`: more labels than 16 bits hold) into the file's bytes; the
   * merged ranges.
   */
  readonly v4: {
    readonly index: Uint32Array;
    readonly count: number;
    readonly wide: boolean;
    readonly fill: (entries: Uint32Array, labels: Uint32Array | null) => void;
    readonly ranges: number;
  };
  /** Sorted, disjoint IPv6 ranges; each value a label (1 and up). */
  readonly v6: RangeList6;
  /** `LABEL_WORDS` words per label; label 0 is "no feed". */
  readonly labels: Uint32Array;
  readonly refs: Uint32Array;
  readonly meta: ThreatMeta;
}

function requireLittleEndian(): void {
  if (endianness() !== 'LE') throw new InvalidDatasetError('threat.bin is read and written on little-endian machines only.');
}

/**
 * Encodes the IPv4 ranges of buckets `from` to `to` (exclusive): values
 * mapped to labels, ranges without one left out, touching ranges with
 * equal labels joined, ranges cut at bucket edges. `part` holds sorted,
 * disjoint ranges within those buckets.
 */
export function encodeSlice4(part: RangeList, labelOf: (value: number) => number, from: number, to: number): Slice4 {
  // At most two entries per range and two more per bucket edge crossed (ranges are disjoint: each edge once).
  const most = 2 * part.length + 2 * (to - from);
  const out = new SliceWriter(to - from + 1, most, from);
  const { start, end, value } = part;
  // The range being joined: [first, last] with `label` (label 0: none yet).
  let first = 0;
  let last = 0;
  let label = 0;
  let lastValue = -1;
  let valueLabel = 0;
  let head: { at: number; label: number } | null = null;
  for (let i = 0; i < part.length; i++) {
    if (value[i] !== lastValue) {
      lastValue = value[i];
      valueLabel = labelOf(lastValue);
    }
    if (valueLabel === 0) continue;
    if (label === valueLabel && last + 1 === start[i]) last = end[i];
    else {
      if (label !== 0) out.put(first, last, label);
      // The slice's first range (label 0 only before it).
      else head = { at: start[i], label: valueLabel };
      first = start[i];
      last = end[i];
      label = valueLabel;
    }
  }
  if (label !== 0) out.put(first, last, label);
  out.finish(to);
  const n = out.n;
  return { index: out.index, keys: out.keys.subarray(0, n), labels: out.labels.subarray(0, n), ranges: out.ranges, head, tail: label === 0 ? null : { at: last, label } };
}

/** The entries of a slice as they are written: each range cut at bucket edges, the index filled as buckets are passed. */
class SliceWriter {
  readonly index: Uint32Array;
  readonly keys: Uint16Array;
  readonly labels: Uint32Array;
  n = 0;
  ranges = 0;
  /** Buckets below this one have their index set. */
  private bucket: number;

  constructor(
    buckets: number,
    most: number,
    private readonly from: number,
  ) {
    this.index = new Uint32Array(buckets);
    this.keys = new Uint16Array(most);
    this.labels = new Uint32Array(most);
    this.bucket = from;
  }

  put(first: number, last: number, label: number): void {
    this.ranges++;
    const { index, keys, labels, from } = this;
    let n = this.n;
    let bucket = this.bucket;
    let cur = first;
    for (;;) {
      const b = cur >>> SHIFT;
      while (bucket <= b) index[bucket++ - from] = n;
      const stop = last - cur > LOW - (cur & LOW) ? (cur | LOW) >>> 0 : last;
      if (stop !== cur) {
        labels[n] = label;
        keys[n++] = (cur & LOW) << 1;
      }
      labels[n] = label;
      keys[n++] = ((stop & LOW) << 1) | END4;
      if (stop === last) break;
      cur = stop + 1;
    }
    this.n = n;
    this.bucket = bucket;
  }

  /** Sets the index of the buckets left, up to `to`. */
  finish(to: number): void {
    while (this.bucket <= to) this.index[this.bucket++ - this.from] = this.n;
  }
}

function countV6(v6: RangeList6): number {
  const w = v6.words;
  let n = 0;
  for (let i = 0; i < v6.length; i++) {
    const at = i * 8;
    n += w[at] === w[at + 4] && w[at + 1] === w[at + 5] && w[at + 2] === w[at + 6] && w[at + 3] === w[at + 7] ? 1 : 2;
  }
  return n;
}

/** Writes IPv6 keys (four words each), then their kinds and labels, into `out` from word `at`. */
function writeV6(v6: RangeList6, entryCount: number, out: Uint32Array, at: number): void {
  const w = v6.words;
  let key = at;
  let kind = at + entryCount * 4;
  for (let i = 0; i < v6.length; i++) {
    const r = i * 8;
    const single = w[r] === w[r + 4] && w[r + 1] === w[r + 5] && w[r + 2] === w[r + 6] && w[r + 3] === w[r + 7];
    if (!single) {
      for (let k = 0; k < 4; k++) out[key++] = w[r + k];
      out[kind++] = v6.value[i];
    }
    for (let k = 4; k < 8; k++) out[key++] = w[r + k];
    out[kind++] = (END6 | v6.value[i]) >>> 0;
  }
}

/** The bytes of `threat.bin`. */
export function encodeThreat(t: ThreatTables): Buffer {
  requireLittleEndian();
  const labelCount = t.labels.length / LABEL_WORDS;
  const wide = t.v4.wide;
  const e4 = t.v4.count;
  const e6 = countV6(t.v6);
  const metaBytes = Buffer.from(JSON.stringify(t.meta), 'utf8');
  const metaLength = Math.ceil(metaBytes.length / 4) * 4;
  const words = INDEX_WORDS + e4 * (wide ? 2 : 1) + e6 * 5 + t.labels.length + t.refs.length;
  const buf = Buffer.allocUnsafeSlow(HEADER + words * 4 + metaLength);
  buf.fill(0, 0, HEADER);
  const body = new Uint32Array(buf.buffer, buf.byteOffset + HEADER, words);
  body.set(t.v4.index, 0);
  let at = INDEX_WORDS;
  t.v4.fill(body.subarray(at, at + e4), wide ? body.subarray(at + e4, at + 2 * e4) : null);
  at += wide ? 2 * e4 : e4;
  writeV6(t.v6, e6, body, at);
  at += e6 * 5;
  body.set(t.labels, at);
  at += t.labels.length;
  body.set(t.refs, at);
  metaBytes.copy(buf, HEADER + words * 4);
  buf.fill(0x20, HEADER + words * 4 + metaBytes.length);
  buf.write(THREAT_MAGIC, 0, 'latin1');
  buf.writeUInt32LE(THREAT_FORMAT_VERSION, 8);
  buf.writeUInt32LE(e4, 12);
  buf.writeUInt32LE(e6, 16);
  buf.writeUInt32LE(labelCount, 20);
  buf.writeUInt32LE(t.refs.length, 24);
  buf.writeUInt32LE(metaLength, 28);
  buf.writeUInt32LE(wide ? WIDE : 0, 32);
  buf.writeUInt32LE(t.v4.ranges, 40);
  buf.writeUInt32LE(t.v6.length, 44);
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 36);
  return buf;
}

/** A loaded `threat.bin`: lookups over typed arrays on the file's bytes. */
export class ThreatTree {
  readonly meta: ThreatMeta;
  readonly labelCount: number;
  /** Merged ranges stored, per family. */
  readonly ranges: { readonly v4: number; readonly v6: number };
  readonly bytes: number;
  private readonly index4: Uint32Array;
  /** IPv4 entries: key (address bits within the bucket, then the kind) << 16 | label. */
  private readonly entries4: Uint32Array;
  /** Labels of IPv4 entries in the wide form, else null. */
  private readonly labels4: Uint32Array | null;
  private readonly keys6: Uint32Array;
  private readonly kinds6: Uint32Array;
  private readonly labels: Uint32Array;
  private readonly refs: Uint32Array;

  /**
   * Checks and maps a file's bytes.
   * @throws InvalidDatasetError for a bad magic, version, size or checksum, or a record out of range.
   */
  constructor(buf: Buffer, name: string) {
    const bad: (what: string) => never = (what) => {
      throw new InvalidDatasetError(`${name} is not a valid threat.bin: ${what}.`);
    };
    if (buf.length < HEADER || buf.toString('latin1', 0, 8) !== THREAT_MAGIC) bad('bad magic');
    const version = buf.readUInt32LE(8);
    if (version !== THREAT_FORMAT_VERSION) bad(`format version ${version}, this iprecord reads ${THREAT_FORMAT_VERSION} (run iprecord build or update again)`);
    requireLittleEndian();
    const e4 = buf.readUInt32LE(12);
    const e6 = buf.readUInt32LE(16);
    const labelCount = buf.readUInt32LE(20);
    const refCount = buf.readUInt32LE(24);
    const metaLength = buf.readUInt32LE(28);
    const wide = (buf.readUInt32LE(32) & WIDE) !== 0;
    const words = INDEX_WORDS + e4 * (wide ? 2 : 1) + e6 * 5 + labelCount * LABEL_WORDS + refCount;
    const size = HEADER + words * 4 + metaLength;
    if (size !== buf.length) bad(`its sections add up to ${size} bytes but the file has ${buf.length}`);
    if (labelCount < 1) bad('no label table');
    if (crc32(buf.subarray(HEADER)) !== buf.readUInt32LE(36)) bad('checksum mismatch');
    // Typed arrays need 4-byte alignment within their ArrayBuffer.
    const b = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
    let at = b.byteOffset + HEADER;
    const take = (n: number) => {
      const a = new Uint32Array(b.buffer, at, n);
      at += n * 4;
      return a;
    };
    this.index4 = take(INDEX_WORDS);
    this.entries4 = take(e4);
    this.labels4 = wide ? take(e4) : null;
    this.keys6 = take(e6 * 4);
    this.kinds6 = take(e6);
    this.labels = take(labelCount * LABEL_WORDS);
    this.refs = take(refCount);
    this.labelCount = labelCount;
    this.ranges = { v4: buf.readUInt32LE(40), v6: buf.readUInt32LE(44) };
    this.bytes = buf.length;
    let meta: ThreatMeta | null = null;
    try {
      meta = JSON.parse(b.toString('utf8', b.length - metaLength)) as ThreatMeta;
    } catch {
      // reported below
    }
    if (meta === null || typeof meta !== 'object' || !Array.isArray(meta.feeds) || !Array.isArray(meta.blocklists)) bad('unreadable metadata');
    this.meta = meta as ThreatMeta;
    // Every index into another section in range, checked once here, so that lookups need not (a pass of a few ms over millions of entries).
    const index = this.index4;
    if (index[0] !== 0 || index[BUCKETS] !== e4) bad('the IPv4 index does not span the entries');
    for (let i = 1; i <= BUCKETS; i++) if (index[i] < index[i - 1]) bad(`IPv4 bucket ${i - 1} ends before it starts`);
    let top4 = 0;
    if (this.labels4 === null) for (let i = 0; i < e4; i++) top4 = Math.max(top4, this.entries4[i] & 0xffff);
    else for (let i = 0; i < e4; i++) top4 = Math.max(top4, this.labels4[i]);
    if (top4 >= labelCount) bad(`an IPv4 entry has label ${top4} of ${labelCount}`);
    let top6 = 0;
    for (let i = 0; i < e6; i++) top6 = Math.max(top6, this.kinds6[i] & 0x7fffffff);
    if (top6 >= labelCount) bad(`an IPv6 entry has label ${top6} of ${labelCount}`);
    for (let l = 0; l < labelCount; l++) {
      const first = this.labels[l * LABEL_WORDS + 1];
      const n = this.labels[l * LABEL_WORDS + 2];
      if (first + n > refCount) bad(`label ${l} has blocklists out of range`);
    }
    const lists = meta.blocklists.length;
    for (let i = 0; i < refCount; i++) if (this.refs[i] >= lists) bad(`blocklist reference ${i} out of range`);
  }

  /** The label of an address (0: no feed lists it). */
  find(version: IpVersion, words: ArrayLike<number>): number {
    return version === 4 ? this.find4(words[3]) : this.find6(words);
  }

  /** The label of an IPv4 address given as a uint32. */
  find4(ip: number): number {
    const b = ip >>> SHIFT;
    return this.search4(ip, this.index4[b], this.index4[b + 1]);
  }

  /**
   * Labels of many IPv4 addresses (uint32) into `out`: the answers of
   * `find4`, two to three times faster for a batch. The index reads of a
   * block of addresses come first, then a read of each bucket's first
   * entry, then the searches: the memory reads of different addresses
   * overlap instead of waiting one after the other.
   */
  find4Many(ips: ArrayLike<number>, out: Uint32Array): void {
    const index = this.index4;
    const entries = this.entries4;
    const lo = this.blockLo;
    const hi = this.blockHi;
    for (let from = 0; from < ips.length; from += BLOCK) {
      const n = Math.min(BLOCK, ips.length - from);
      for (let i = 0; i < n; i++) {
        const b = ips[from + i] >>> SHIFT;
        lo[i] = index[b];
        hi[i] = index[b + 1];
      }
      let touch = 0;
      for (let i = 0; i < n; i++) if (lo[i] < hi[i]) touch |= entries[lo[i]];
      this.touched = touch;
      for (let i = 0; i < n; i++) out[from + i] = this.search4(ips[from + i], lo[i], hi[i]);
    }
  }

  /** Bucket bounds of a block of `find4Many`. */
  private readonly blockLo = new Uint32Array(BLOCK);
  private readonly blockHi = new Uint32Array(BLOCK);
  /** The first entries' bits of the last block, kept so that their reads are not optimised away. */
  touched = 0;

  /** The label of an IPv4 address among the entries `first` to `hi` (its bucket). */
  private search4(ip: number, first: number, hi: number): number {
    const entries = this.entries4;
    let lo = first;
    // The last entry whose key is at most the address's bits within the bucket (of either kind), whatever its label.
    const low = ip & LOW;
    const probe = ((((low << 1) | END4) << 16) | 0xffff) >>> 0;
    if (hi - lo <= 16) {
      // A short bucket (the usual case): a scan of one cache line with one mispredicted branch.
      while (lo < hi && entries[lo] <= probe) lo++;
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (entries[mid] <= probe) lo = mid + 1;
        else hi = mid;
      }
    }
    if (lo === first) return 0;
    const e = entries[lo - 1];
    const key = e >>> 16;
    // START: the address is inside; END: only the end itself.
    if ((key & END4) !== 0 && key >>> 1 !== low) return 0;
    return this.labels4 === null ? e & 0xffff : this.labels4[lo - 1];
  }

  /** The label of an IPv6 address (four words, most significant first). */
  find6(w: ArrayLike<number>): number {
    const k = this.keys6;
    const w0 = w[0];
    const w1 = w[1];
    const w2 = w[2];
    const w3 = w[3];
    let lo = 0;
    let hi = this.kinds6.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * 4;
      const atMost = k[at] !== w0 ? k[at] < w0 : k[at + 1] !== w1 ? k[at + 1] < w1 : k[at + 2] !== w2 ? k[at + 2] < w2 : k[at + 3] <= w3;
      if (atMost) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return 0;
    const kind = this.kinds6[lo - 1];
    if (kind >= END6) {
      const at = (lo - 1) * 4;
      if (k[at] !== w0 || k[at + 1] !== w1 || k[at + 2] !== w2 || k[at + 3] !== w3) return 0;
    }
    return kind & 0x7fffffff;
  }

  /**
   * Calls `fn` for every stored range of a family with its label, in
   * address order (first and last address as four words; IPv4 ranges are
   * cut at the edges of 4 096-address buckets). For the dataset compiler.
   */
  forEachRange(version: IpVersion, fn: (lo: readonly number[], hi: readonly number[], label: number) => void): void {
    if (version === 4) {
      const entries = this.entries4;
      for (let b = 0; b < BUCKETS; b++) {
        const base = (b << SHIFT) >>> 0;
        let start = -1;
        for (let i = this.index4[b]; i < this.index4[b + 1]; i++) {
          const key = entries[i] >>> 16;
          const address = (base + (key >>> 1)) >>> 0;
          const label = this.labels4 === null ? entries[i] & 0xffff : this.labels4[i];
          if ((key & END4) === 0) start = address;
          else {
            fn([0, 0, 0, start < 0 ? address : start], [0, 0, 0, address], label);
            start = -1;
          }
        }
      }
      return;
    }
    const k = this.keys6;
    let start: number[] | null = null;
    for (let i = 0; i < this.kinds6.length; i++) {
      const words = [k[i * 4], k[i * 4 + 1], k[i * 4 + 2], k[i * 4 + 3]];
      if (this.kinds6[i] < END6) start = words;
      else {
        fn(start ?? words, words, this.kinds6[i] & 0x7fffffff);
        start = null;
      }
    }
  }

  flags(label: number): number {
    return this.labels[label * LABEL_WORDS];
  }

  hits(label: number): number {
    return this.labels[label * LABEL_WORDS + 3];
  }

  /** Evidence counts per category (bit order of `CATEGORIES`). */
  counts(label: number): number[] {
    const a = this.labels[label * LABEL_WORDS + 4];
    const b = this.labels[label * LABEL_WORDS + 5];
    return [a & 255, (a >>> 8) & 255, (a >>> 16) & 255, a >>> 24, b & 255, (b >>> 8) & 255, (b >>> 16) & 255, b >>> 24];
  }

  blocklists(label: number): Blocklist[] {
    const first = this.labels[label * LABEL_WORDS + 1];
    const n = this.labels[label * LABEL_WORDS + 2];
    const out: Blocklist[] = [];
    for (let i = 0; i < n; i++) out.push(this.meta.blocklists[this.refs[first + i]]);
    return out;
  }
}
