/**
 * The bytes of a dataset file (`dataset/format.ts`) from what the compiler
 * made: both families' ranges, the interned rows and text, the metadata.
 * Build time only.
 */

import { crc32 } from 'node:zlib';
import {
  countWords,
  CRC_AT,
  DATASET_FORMAT_VERSION,
  DATASET_MAGIC,
  HEADER,
  INDEX_SHIFT,
  INDEX_WORDS,
  layout,
  pad8,
  TABLE_NAMES,
  TABLES,
  type Counts,
  type DatasetMeta,
  type TableName,
} from '../dataset/format.js';
import type { Interner } from './intern.js';

/** A family's ranges and refs (record << 8 | route prefix), merged where neighbours share a ref. */
export interface Family {
  readonly starts: Uint32Array;
  readonly refs: Uint32Array;
  readonly length: number;
}

/** What a dataset holds besides its ranges: the tables' rows and the text. */
export interface Sections {
  readonly tables: Readonly<Record<TableName, { readonly rows: Uint32Array; readonly count: number }>>;
  /** The text's ASCII part, and its other part in UTF-8 with its length in UTF-16 code units. */
  readonly ascii: Buffer;
  readonly other: Buffer;
  readonly otherUnits: number;
}

/** The dataset file's bytes, from what the compiler interned. */
export function write(v4: Family, v6: Family, intern: Interner, meta: DatasetMeta): Buffer {
  const otherText = intern.text.other.join('');
  return writeSections(
    v4,
    v6,
    {
      tables: intern.tables,
      ascii: Buffer.from(intern.text.ascii.join(''), 'latin1'),
      other: Buffer.from(otherText, 'utf8'),
      otherUnits: otherText.length,
    },
    meta,
  );
}

/** The dataset file's bytes. */
export function writeSections(v4: Family, v6: Family, sections: Sections, meta: DatasetMeta): Buffer {
  const { ascii, other, tables } = sections;
  const metaText = Buffer.from(JSON.stringify(meta), 'utf8');
  const counts: Counts = {
    v4: v4.length,
    v6: v6.length,
    rows: Object.fromEntries(TABLE_NAMES.map((t) => [t, tables[t].count])) as Counts['rows'],
    asciiBytes: ascii.length,
    otherUnits: sections.otherUnits,
    otherBytes: other.length,
    metaBytes: pad8(metaText.length),
  };
  const at = layout(counts);
  const buf = Buffer.alloc(at.size);
  buf.write(DATASET_MAGIC, 0, 'latin1');
  [DATASET_FORMAT_VERSION, ...countWords(counts)].forEach((v, i) => buf.writeUInt32LE(v, 8 + i * 4));
  const put = (section: number, a: ArrayLike<number>) => new Uint32Array(buf.buffer, buf.byteOffset + section, a.length).set(a);
  put(
    at.index4,
    index(v4, (i) => v4.starts[i * 4 + 3]),
  );
  put(
    at.starts4,
    Uint32Array.from({ length: v4.length }, (_, i) => v4.starts[i * 4 + 3]),
  );
  put(at.refs4, v4.refs);
  put(
    at.index6,
    index(v6, (i) => v6.starts[i * 4]),
  );
  put(at.starts6, v6.starts);
  put(at.refs6, v6.refs);
  for (const t of TABLE_NAMES) put(at[t], tables[t].rows.subarray(0, tables[t].count * TABLES[t].length));
  ascii.copy(buf, at.ascii);
  other.copy(buf, at.other);
  buf.fill(0x20, at.meta, at.size);
  metaText.copy(buf, at.meta);
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), CRC_AT);
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
