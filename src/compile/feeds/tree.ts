/**
 * Reading `threat.bin` (`tree-format.ts` states its layout): lookups of
 * addresses, one at a time or in blocks, and the walk of every range.
 */

import { wholeFileCrc } from '../../files/checksum.js';
import { InvalidDatasetError } from '../../contract/errors.js';
import type { IpVersion } from '../../ip/parse.js';
import type { Blocklist } from '../../contract/types.js';
import type { ThreatMeta } from '../../dataset/threat-meta.js';
import {
  BLOCK,
  BUCKETS,
  CRC_AT,
  END4,
  END6,
  HEADER,
  INDEX_WORDS,
  LABEL_WORDS,
  LOW,
  requireLittleEndian,
  SHIFT,
  THREAT_FORMAT_VERSION,
  THREAT_MAGIC,
  WIDE,
} from './tree-format.js';

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
    if (version !== THREAT_FORMAT_VERSION)
      bad(`format version ${version}, this iprecord reads ${THREAT_FORMAT_VERSION} (run iprecord build or update again)`);
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
    if (wholeFileCrc(buf, HEADER, CRC_AT) !== buf.readUInt32LE(CRC_AT)) bad('checksum mismatch');
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
    if (meta === null || typeof meta !== 'object' || !Array.isArray(meta.feeds) || !Array.isArray(meta.blocklists))
      bad('unreadable metadata');
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
      const { entries4: entries, index4: index } = this;
      // Bucket by bucket (a range is cut at each bucket's edge), from entry to entry: the next bucket holding one found
      // by halving, not by passing every empty one.
      for (let b = 0, next = 0; next < index[BUCKETS]; b++) {
        for (let hi = BUCKETS; b < hi;) {
          const mid = (b + hi) >>> 1;
          if (index[mid + 1] <= next) b = mid + 1;
          else hi = mid;
        }
        const base = (b << SHIFT) >>> 0;
        let start = -1;
        for (let i = index[b]; i < index[b + 1]; i++, next++) {
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
