/**
 * The bytes of a dataset file (`dataset/format.ts`) from what the compiler
 * made: both families' ranges, the interned rows and fragments, the
 * metadata. Build time only.
 */

import { crc32 } from 'node:zlib';
import { DATASET_FORMAT_VERSION, DATASET_MAGIC, HEADER, INDEX_SHIFT, INDEX_WORDS, TABLE_NAMES, TABLES, type DatasetMeta } from '../dataset/format.js';
import type { Interner } from './intern.js';

/** A family's ranges and refs (record << 8 | route prefix), merged where neighbours share a ref. */
export interface Family {
  readonly starts: Uint32Array;
  readonly refs: Uint32Array;
  readonly length: number;
}

/** The dataset file's bytes. */
export function write(v4: Family, v6: Family, intern: Interner, meta: DatasetMeta): Buffer {
  const fragmentBytes = intern.fragments.list.map((f) => Buffer.from(f, 'utf8'));
  const fragmentSize = fragmentBytes.reduce((n, b) => n + b.length, 0);
  const fragmentPadded = (fragmentSize + 3) & ~3;
  const metaText = JSON.stringify(meta);
  const metaSize = (Buffer.byteLength(metaText) + 3) & ~3;
  const tables = TABLE_NAMES.map((t) => intern.tables[t].rows.subarray(0, intern.tables[t].count * TABLES[t].length));
  const words = INDEX_WORDS * 2 + v4.length * 2 + v6.length * 5 + tables.reduce((n, t) => n + t.length, 0) + intern.fragments.list.length + 1;
  const buf = Buffer.alloc(HEADER + words * 4 + fragmentPadded + metaSize);
  buf.fill(0x20, HEADER + words * 4 + fragmentPadded);
  buf.write(DATASET_MAGIC, 0, 'latin1');
  const counts = [v4.length, v6.length, ...TABLE_NAMES.map((t) => intern.tables[t].count), intern.fragments.list.length, fragmentPadded, metaSize];
  [DATASET_FORMAT_VERSION, ...counts].forEach((v, i) => buf.writeUInt32LE(v, 8 + i * 4));
  const out = new Uint32Array(buf.buffer, buf.byteOffset + HEADER, words);
  let at = 0;
  const put = (a: ArrayLike<number>) => {
    out.set(a, at);
    at += a.length;
  };
  put(index(v4, (i) => v4.starts[i * 4 + 3]));
  put(Uint32Array.from({ length: v4.length }, (_, i) => v4.starts[i * 4 + 3]));
  put(v4.refs);
  put(index(v6, (i) => v6.starts[i * 4]));
  put(v6.starts);
  put(v6.refs);
  for (const t of tables) put(t);
  const offsets = new Uint32Array(intern.fragments.list.length + 1);
  fragmentBytes.forEach((b, i) => (offsets[i + 1] = offsets[i] + b.length));
  put(offsets);
  let byte = HEADER + words * 4;
  for (const b of fragmentBytes) byte += b.copy(buf, byte);
  buf.write(metaText, HEADER + words * 4 + fragmentPadded, 'utf8');
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 52);
  return buf;
}

/** For each block of an address's first 20 bits, the first range whose start (its first word: `top`) is in it or after it. */
function index(family: Family, top: (range: number) => number): Uint32Array {
  const idx = new Uint32Array(INDEX_WORDS);
  let r = 0;
  for (let block = 0; block < INDEX_WORDS - 1; block++) {
    while (r < family.length && top(r) >>> INDEX_SHIFT < block) r++;
    idx[block] = r;
  }
  idx[INDEX_WORDS - 1] = family.length;
  return idx;
}
