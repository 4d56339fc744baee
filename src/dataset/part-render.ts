/**
 * Rendering the parts (`parts.ts`) of every row into a parts section: what
 * the compiler writes (`compile/write.ts`), and what a packed file's open
 * makes (`PACKED.parts`, `format.ts`).
 */

import { ESCAPED, NO_STRING, PART_UTF8, TABLES, type TableName } from './layout.js';
import { NULL, PART_COLUMNS, renderPart, valuesOf, type JsonAt, type PartColumn } from './parts.js';
import { jsonText, OTHER, type DatasetText } from './text.js';
import { copyBytes, utf8Bytes, utf8Length, writeUtf8 } from '../platform/bytes.js';

/** A dataset whose rows (the first of each table, with their part columns) a dataset being made goes on from, and its parts. */
export interface RenderedBase {
  readonly parts: Uint8Array;
  readonly rows: Readonly<Record<TableName, number>>;
}

/** A table's rows as the compiler holds them. */
export interface Rows {
  readonly rows: Uint32Array;
  readonly count: number;
}

/**
 * Renders every row's parts: the parts section (each part from a multiple
 * of 8 bytes, zeros between) and the tables with each row's part columns
 * set (copies of those that have parts). Rows of a base dataset keep its
 * parts, which come first, and only the rows after them are rendered (a
 * merge of feeds adds networks and threats). A part of the same values as
 * one met before (a network's `,"type":"isp"}`: values are stored once, so
 * the same starts are the same text) is stored once, another row's (a
 * place's) rendered once; a location's own, nearly always new, is not
 * looked for. A part of ASCII values is copied from the text's bytes;
 * one with a value outside ASCII is rendered as text (`renderPart`).
 * What a packed file's open runs too (`PACKED.parts`), with `share` false
 * (a part met before not looked for: a section a fifth larger, half the
 * time): about 0.2 s for the lite edition of the default data.
 */
export function renderParts<T extends Record<TableName, Rows>>(
  tables: T,
  text: DatasetText,
  base?: RenderedBase,
  share = true,
): { parts: Uint8Array; tables: T } {
  const out = { ...tables };
  const from = (t: TableName) => base?.rows[t] ?? 0;
  for (const c of PART_COLUMNS) {
    const t = tables[c.table];
    if (out[c.table] === t && t.count > from(c.table))
      out[c.table] = { count: t.count, rows: t.rows.slice(0, t.count * TABLES[c.table].length) } as T[TableName];
  }
  const section = new PartsSection(base?.parts);
  const json: JsonAt = (row, at) => jsonText(text, row, at);
  // Parts met, by their texts around the values (one number per kind of part) and the values' starts.
  const seen = new Map<string, readonly [number, number]>();
  const kinds = new Map<string, number>();
  const all = Object.fromEntries(Object.entries(out).map(([t, r]) => [t, r.rows])) as Record<TableName, Uint32Array>;
  for (const c of PART_COLUMNS) {
    const { rows, count } = out[c.table];
    const width = TABLES[c.table].length;
    const pieces = c.pieces.map((p) => (typeof p === 'string' ? utf8Bytes(p) : p));
    const shape = c.pieces.map((p) => (typeof p === 'string' ? p : '')).join('\u0000');
    const kind = kinds.get(shape) ?? kinds.set(shape, kinds.size).size - 1;
    const shared = share && c.of === undefined && c.table !== 'locations';
    // The first row naming each row of another table, whose part the others share.
    const first = new Map<number, number>();
    for (let r = from(c.table), at = r * width; r < count; r++, at += width) {
      if (c.of !== undefined) {
        const of = rows[at + c.of.column];
        const known = first.get(of);
        if (known !== undefined) {
          rows[at + c.at] = rows[known + c.at];
          rows[at + c.at + 1] = rows[known + c.at + 1];
          continue;
        }
        first.set(of, at);
      }
      const [vr, vat] = valuesOf(c, all, at);
      const empty = c.when !== undefined && !c.when(vr, vat);
      let key: string | undefined;
      if (shared && !empty) {
        key = String(kind);
        for (const p of pieces) if (typeof p === 'number') key += `,${vr[vat + p]}`;
      }
      let part = key === undefined ? undefined : seen.get(key);
      if (part === undefined) {
        part = empty ? section.empty() : section.add(c, pieces, vr, vat, text, json);
        if (key !== undefined) seen.set(key, part);
      }
      rows[at + c.at] = part[0];
      rows[at + c.at + 1] = part[1];
    }
  }
  return { parts: section.bytes(), tables: out };
}

/** The bytes of a part whose values are all in the text's ASCII part (or null); -1 when one is not. */
function asciiPartLength(pieces: readonly (Uint8Array | number)[], vr: Uint32Array, vat: number): number {
  let n = 0;
  for (const p of pieces) {
    if (typeof p !== 'number') n += p.length;
    else if (vr[vat + p] === NO_STRING) n += 4;
    else if (vr[vat + p] < OTHER) n += ((vr[vat + p + 1] & ~ESCAPED) >>> 0) - vr[vat + p];
    else return -1;
  }
  return n;
}

/** Writes at `to` of `out` the part of `asciiPartLength`, from the texts and the text's ASCII bytes. */
function copyAsciiPart(
  pieces: readonly (Uint8Array | number)[],
  vr: Uint32Array,
  vat: number,
  ascii: Uint8Array,
  out: Uint8Array,
  to: number,
): void {
  for (const p of pieces) {
    if (typeof p !== 'number') to += copyBytes(p, out, to, 0, p.length);
    else if (vr[vat + p] === NO_STRING) to += copyBytes(NULL, out, to, 0, 4);
    else to += copyBytes(ascii, out, to, vr[vat + p], (vr[vat + p + 1] & ~ESCAPED) >>> 0);
  }
}

/** The parts section being written: each part from a multiple of 8 bytes, zeros between; grown by doubling. */
class PartsSection {
  private buf: Uint8Array;
  private used: number;

  /** @param base the parts of a base dataset, which come first */
  constructor(base?: Uint8Array) {
    this.buf = new Uint8Array(Math.max(1 << 16, (base?.length ?? 0) * 2));
    this.used = base === undefined ? 0 : copyBytes(base, this.buf, 0, 0, base.length);
  }

  /** An empty part's start and end. */
  empty(): [number, number] {
    return [this.used, this.used];
  }

  /** Adds the part `c` of the values at `vat` in `vr`: its start and end (PART_UTF8 set: not ASCII). */
  add(
    c: PartColumn,
    pieces: readonly (Uint8Array | number)[],
    vr: Uint32Array,
    vat: number,
    text: DatasetText,
    json: JsonAt,
  ): [number, number] {
    const start = this.used;
    let bytes = asciiPartLength(pieces, vr, vat);
    let utf8 = false;
    if (bytes >= 0) {
      this.room(bytes);
      copyAsciiPart(pieces, vr, vat, text.ascii, this.buf, start);
    } else {
      const t = renderPart(c, json, vr, vat);
      bytes = utf8Length(t);
      this.room(bytes);
      writeUtf8(this.buf, t, start);
      utf8 = bytes !== t.length;
    }
    this.used = (start + bytes + 7) & ~7;
    if (this.used >= PART_UTF8) throw new Error('too much text for one dataset');
    return [start, (start + bytes + (utf8 ? PART_UTF8 : 0)) >>> 0];
  }

  /** The section's bytes (the slack let go). */
  bytes(): Uint8Array {
    return this.used === this.buf.length ? this.buf : this.buf.slice(0, this.used);
  }

  private room(bytes: number): void {
    if (this.buf.length >= this.used + bytes + 8) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.used + bytes + 8));
    copyBytes(this.buf, grown, 0, 0, this.used);
    this.buf = grown;
  }
}
