/**
 * Writing `threat.bin` (`tree-format.ts` states its layout): IPv4 slices
 * encoded into bucketed entries, then the whole file.
 */

import { wholeFileCrc } from '../../files/checksum.js';
import type { RangeList } from './ranges.js';
import type { RangeList6 } from './ranges6.js';
import {
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
  type Slice4,
  type ThreatTables,
} from './tree-format.js';

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
  return {
    index: out.index,
    keys: out.keys.subarray(0, n),
    labels: out.labels.subarray(0, n),
    ranges: out.ranges,
    head,
    tail: label === 0 ? null : { at: last, label },
  };
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
      // Buckets up to this one start here (most of them empty: filled at once, not one by one).
      if (bucket <= b) {
        index.fill(n, bucket - from, b + 1 - from);
        bucket = b + 1;
      }
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
    if (this.bucket <= to) this.index.fill(this.n, this.bucket - this.from, to + 1 - this.from);
    this.bucket = Math.max(this.bucket, to + 1);
  }
}

/**
 * `dst[at + i] = src[i] + offset` for a bucket index (`src` never
 * decreases): a run of equal values (empty buckets, most of them) is found
 * by galloping and filled at once, so that a slice with few entries costs
 * a few steps per entry rather than one per bucket.
 */
export function copyShifted(src: Uint32Array, dst: Uint32Array, at: number, offset: number): void {
  for (let i = 0; i < src.length;) {
    const v = src[i];
    // The run of v ends before `hi`: gallop out, then halve back in.
    let lo = i + 1;
    let step = 1;
    while (lo < src.length && src[lo] === v) {
      lo += step;
      step *= 2;
    }
    let hi = Math.min(lo, src.length);
    lo = Math.max(i + 1, lo - (step >> 1));
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (src[m] === v) lo = m + 1;
      else hi = m;
    }
    dst.fill(v + offset, at + i, at + lo);
    i = lo;
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
  buf.writeUInt32LE(wholeFileCrc(buf, HEADER, CRC_AT), CRC_AT);
  return buf;
}
