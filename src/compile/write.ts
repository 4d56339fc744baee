/**
 * A dataset file (`docs/dataset-format.md`) from what the compiler made:
 * both families' ranges, the interned rows and text, the metadata; as
 * bytes in memory or written to a file section by section (the file is
 * never whole in memory: a merge's peak is the base and the ranges). Build
 * time only.
 */

import { closeSync, openSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { fileCrc } from '../files/checksum.js';
import {
  compactIndexBits,
  CRC_AT,
  headerWords,
  indexBits,
  PACKED,
  DATASET_FORMAT_VERSION,
  DATASET_MAGIC,
  HEADER,
  layout,
  pad8,
  rangeIndex,
  TABLE_NAMES,
  TABLES,
  type Counts,
  type DatasetMeta,
  type TableName,
} from '../dataset/format.js';
import type { Interner } from './intern.js';
import { PART_COLUMNS } from '../dataset/parts.js';
import { renderParts, type RenderedBase, type Rows } from '../dataset/part-render.js';
import { DatasetText } from '../dataset/text.js';

/** A family's ranges as the file holds them (starts: one word per IPv4 range, four per IPv6 range) and refs (record << 8 | route prefix), merged where neighbours share a ref. */
export interface Family {
  readonly starts: Uint32Array;
  readonly refs: Uint32Array;
  readonly length: number;
}

/** What a dataset holds besides its ranges: the tables' rows and the text (the parts are rendered from them). */
export interface Sections {
  readonly tables: Readonly<Record<TableName, Rows>>;
  /** The text's ASCII part, and its other part in UTF-8 with its length in UTF-16 code units. */
  readonly ascii: Buffer;
  readonly other: Buffer;
  readonly otherUnits: number;
}

/** The sections of what the compiler interned. */
export function internedSections(intern: Interner): Sections {
  const otherText = intern.text.other.join('');
  return {
    tables: intern.tables,
    ascii: Buffer.from(intern.text.ascii.join(''), 'latin1'),
    other: Buffer.from(otherText, 'utf8'),
    otherUnits: otherText.length,
  };
}

/** A compiled dataset, to be written as a file or made into bytes. */
export class CompiledDataset {
  /** The tables with their part columns set, and the parts (`dataset/parts.ts`; `base`: a dataset whose rows it goes on from, as a merge's). */
  private readonly rendered: { parts: Uint8Array; tables: Record<TableName, Rows> };

  /**
   * @param packed the file packed as `PACKED` says (a lite dataset's both): its parts are then not rendered here but at
   *   each open, and its indexes are compact
   */
  constructor(
    readonly v4: Family,
    readonly v6: Family,
    readonly sections: Sections,
    readonly meta: DatasetMeta,
    base?: RenderedBase,
    private readonly packed = 0,
  ) {
    const text = new DatasetText(sections.ascii, sections.other, sections.otherUnits, 'the dataset being written');
    this.rendered =
      packed & PACKED.parts
        ? { parts: new Uint8Array(0), tables: withoutParts(sections.tables) }
        : renderParts(sections.tables, text, base);
  }

  get ranges(): { v4: number; v6: number } {
    return { v4: this.v4.length, v6: this.v6.length };
  }

  get records(): number {
    return this.sections.tables.records.count;
  }

  /** The file's bytes. */
  toBuffer(): Buffer {
    const chunks: Uint8Array[] = [];
    const header = this.emit((bytes) => chunks.push(bytes));
    return Buffer.concat([header, ...chunks]);
  }

  /** Writes the file to `path` (made or emptied); its size in bytes. */
  writeFile(path: string): number {
    const fd = openSync(path, 'w');
    try {
      let size = HEADER;
      writeAll(fd, Buffer.alloc(HEADER), 0);
      const header = this.emit((bytes) => {
        writeAll(fd, bytes, size);
        size += bytes.length;
      });
      writeAll(fd, header, 0);
      return size;
    } finally {
      closeSync(fd);
    }
  }

  /** Gives the bytes after the header to `out` in order; the header (with their checksum). */
  private emit(out: (bytes: Uint8Array) => void): Buffer {
    const { v4, v6, sections, meta } = this;
    const { ascii, other } = sections;
    const { parts, tables } = this.rendered;
    const metaText = Buffer.from(JSON.stringify(meta), 'utf8');
    const packed = this.packed;
    const bits = packed === 0 ? indexBits : compactIndexBits;
    const v6starts = packed & PACKED.v6 ? packStarts6(v6) : { starts: v6.starts.subarray(0, v6.length * 4), fine: new Uint32Array(0) };
    const counts: Counts = {
      v4: v4.length,
      v6: v6.length,
      rows: Object.fromEntries(TABLE_NAMES.map((t) => [t, tables[t].count])) as Counts['rows'],
      asciiBytes: ascii.length,
      otherUnits: sections.otherUnits,
      otherBytes: other.length,
      partsBytes: parts.length,
      metaBytes: pad8(metaText.length),
      packed,
      bits4: bits(v4.length),
      bits6: bits(v6.length),
      fine6: v6starts.fine.length / 3,
    };
    let crc = 0;
    let at = HEADER;
    const put = (a: Uint8Array | Uint32Array) => {
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      // Nothing for an empty section: zlib's crc32 of no bytes over an empty ArrayBuffer (a null pointer) is its initial value, 0.
      if (bytes.length === 0) return;
      crc = crc32(bytes, crc);
      out(bytes);
      at += bytes.length;
      const pad = pad8(at) - at;
      if (pad > 0) put(new Uint8Array(pad));
    };
    put(rangeIndex(v4.length, counts.bits4, (i) => v4.starts[i]));
    put(v4.starts.subarray(0, v4.length));
    put(v4.refs.subarray(0, v4.length));
    put(rangeIndex(v6.length, counts.bits6, (i) => v6.starts[i * 4]));
    put(v6starts.starts);
    put(v6starts.fine);
    put(v6.refs.subarray(0, v6.length));
    for (const t of TABLE_NAMES) put(tables[t].rows.subarray(0, tables[t].count * TABLES[t].length));
    put(ascii);
    put(other);
    put(parts);
    const metaBytes = Buffer.alloc(counts.metaBytes, 0x20);
    metaText.copy(metaBytes);
    put(metaBytes);
    if (at !== layout(counts).size) throw new Error(`the dataset's sections add up to ${at} bytes, its layout to ${layout(counts).size}`);
    const header = Buffer.alloc(HEADER);
    header.write(DATASET_MAGIC, 0, 'latin1');
    header.writeUInt32LE(DATASET_FORMAT_VERSION, 8);
    for (const [at, word] of headerWords(counts)) header.writeUInt32LE(word, at);
    header.writeUInt32LE(fileCrc(header, CRC_AT, crc), CRC_AT);
    return header;
  }
}

/** Writes all of `bytes` at `position`. */
function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** IPv6 starts packed (`PACKED.v6`): each one's first two words, and the fine section of those whose last two are not zero. */
function packStarts6(v6: Family): { starts: Uint32Array; fine: Uint32Array } {
  const starts = new Uint32Array(v6.length * 2);
  const fine: number[] = [];
  for (let i = 0; i < v6.length; i++) {
    starts[i * 2] = v6.starts[i * 4];
    starts[i * 2 + 1] = v6.starts[i * 4 + 1];
    if ((v6.starts[i * 4 + 2] | v6.starts[i * 4 + 3]) !== 0) fine.push(i, v6.starts[i * 4 + 2], v6.starts[i * 4 + 3]);
  }
  return { starts, fine: Uint32Array.from(fine) };
}

/** Tables with every part column zero (a packed file's: its parts are rendered at open); those without parts as they are. */
function withoutParts<T extends Record<TableName, Rows>>(tables: T): T {
  const out = { ...tables };
  for (const c of PART_COLUMNS) {
    const width = TABLES[c.table].length;
    if (out[c.table] === tables[c.table]) {
      const t = tables[c.table];
      out[c.table] = { count: t.count, rows: t.rows.slice(0, t.count * width) } as T[TableName];
    }
    const rows = out[c.table].rows;
    for (let at = c.at; at < rows.length; at += width) rows[at] = rows[at + 1] = 0;
  }
  return out;
}
