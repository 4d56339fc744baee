/**
 * The parts of a record's JSON that a table row gives, rendered once by
 * the compiler: the members' keys and values as the record prints them,
 * so that a record is written as a few copies with what changes per
 * lookup between them (`record/render.ts`). Each part is derived from the row's
 * values and the template (`contract/template.ts`); the compiler writes them
 * (`compile/write.ts`) and the whole-file check renders them again and
 * compares (`checkParts`, from `verify.ts`).
 *
 * - a location: its members from the first's value on
 *   (`37.42,"longitude":-122.08,"postal":null`), the key of the first
 *   ending the country's run before it, and its place's members likewise
 *   (`"Mountain View","region":"California",…`);
 * - a network: `asn` up to its route's value (`{"asn":"AS15169",…,"route":`)
 *   and after it (`,"type":"hosting"}`), and the `carrier` member
 *   (`,"carrier":{…}`; empty without a carrier); all empty without `asn`;
 * - a threat row: each form with the keys around it
 *   (`,"threat":{…},"count":`).
 */

import { ASN_MEMBERS, CARRIER_MEMBERS, LOCATION_MEMBERS, memberText, PLACE_MEMBERS } from '../contract/template.js';
import { CARRIER_AT, ESCAPED, LOC, NET, NET_PART, NO_STRING, PART_UTF8, PL, TABLE_NAMES, TABLES, THR, type TableName } from './layout.js';
import type { Dataset } from './format.js';
import { OTHER, type DatasetText } from './text.js';
import { utf8Bytes } from '../platform/bytes.js';

/** The JSON text of the value a row holds at `at` (`null` for none). */
export type JsonAt = (row: Uint32Array, at: number) => string;

/** A piece of a part: JSON text as it is, or the value a row holds at this offset. */
type Piece = string | number;

/**
 * A part of a table's rows: where a row holds its start and end, and its
 * pieces, the values read from the row itself or from the row of another
 * table it names (`of`: a location's place); empty where `when` is false.
 */
export interface PartColumn {
  readonly table: TableName;
  readonly at: number;
  readonly of?: { readonly table: TableName; readonly column: number };
  readonly when?: (rows: Uint32Array, at: number) => boolean;
  readonly pieces: readonly Piece[];
}

/** Members as pieces, each after its key (`{` before the first's when `opening`; no key before the first's when `bare`). */
function members<K extends string>(keys: readonly K[], column: (k: K) => number, first: 'bare' | 'key' | 'opening'): Piece[] {
  return keys.flatMap((k, i) => [i > 0 ? memberText(k) : first === 'bare' ? '' : memberText(k, first === 'opening'), column(k)]);
}

/** Pieces with neighbouring texts joined. */
function joined(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    if (typeof p === 'string' && typeof out[out.length - 1] === 'string') out[out.length - 1] += p;
    else if (p !== '') out.push(p);
  }
  return out;
}

const ROUTE = ASN_MEMBERS.indexOf('route');
type Stored = Exclude<(typeof ASN_MEMBERS)[number], 'route'>;
const hasAsn = (rows: Uint32Array, at: number) => rows[at + NET.asn] !== NO_STRING;

export const PART_COLUMNS: readonly PartColumn[] = [
  { table: 'locations', at: LOC.part, pieces: joined(members(LOCATION_MEMBERS, (k) => LOC[k], 'bare')) },
  {
    table: 'locations',
    at: LOC.placePart,
    of: { table: 'places', column: LOC.place },
    pieces: joined(members(PLACE_MEMBERS, (k) => PL[k], 'bare')),
  },
  {
    table: 'networks',
    at: NET_PART.head,
    when: hasAsn,
    pieces: joined([...members(ASN_MEMBERS.slice(0, ROUTE) as Stored[], (k) => NET[k], 'opening'), memberText('route')]),
  },
  {
    table: 'networks',
    at: NET_PART.tail,
    when: hasAsn,
    pieces: joined([...members(ASN_MEMBERS.slice(ROUTE + 1) as Stored[], (k) => NET[k], 'key'), '}']),
  },
  {
    table: 'networks',
    at: NET_PART.carrier,
    when: (rows, at) => hasAsn(rows, at) && rows[at + CARRIER_AT.mcc] !== NO_STRING,
    pieces: joined([memberText('carrier'), ...members(CARRIER_MEMBERS, (k) => CARRIER_AT[k], 'opening'), '}']),
  },
  { table: 'threats', at: THR.objectPart, pieces: [memberText('threat'), THR.object, memberText('count')] },
  { table: 'threats', at: THR.basicPart, pieces: [memberText('threat'), THR.basic, memberText('count')] },
];

/** The rows a part's values are read from, and where: a row of the column's table at `at`, or the row of another table it names. */
export function valuesOf(c: PartColumn, tables: Readonly<Record<TableName, Uint32Array>>, at: number): [Uint32Array, number] {
  if (c.of === undefined) return [tables[c.table], at];
  return [tables[c.of.table], tables[c.table][at + c.of.column] * TABLES[c.of.table].length];
}

/** The text of a part, from the row whose values it holds (`valuesOf`). */
export function renderPart(c: PartColumn, json: JsonAt, rows: Uint32Array, at: number): string {
  if (c.when !== undefined && !c.when(rows, at)) return '';
  let s = '';
  for (const p of c.pieces) s += typeof p === 'string' ? p : json(rows, at + p);
  return s;
}

/**
 * Every row's parts where the row says, and each the rendering of the
 * values it is made of (`parts.ts`): what a record's JSON is copied from.
 * Compared piece by piece with the text's bytes; a part shared by rows
 * naming one row of another table (a place's) once.
 */
export function checkParts(ds: Dataset, text: DatasetText, bad: (what: string) => never): void {
  const bytes = ds.partBytes;
  const tables = Object.fromEntries(TABLE_NAMES.map((t) => [t, ds[t]])) as Record<TableName, Uint32Array>;
  for (const c of PART_COLUMNS) {
    const rows = ds[c.table];
    const width = TABLES[c.table].length;
    const pieces = c.pieces.map((p) => (typeof p === 'string' ? utf8Bytes(p) : p));
    // Per row of another table, the start (plus one) and end of the part found to be its.
    const seen = c.of === undefined ? null : new Uint32Array((ds[c.of.table].length / TABLES[c.of.table].length) * 2);
    for (let at = 0; at < rows.length; at += width) {
      const start = rows[at + c.at];
      const utf8 = rows[at + c.at + 1] >= PART_UTF8;
      const end = (rows[at + c.at + 1] & ~PART_UTF8) >>> 0;
      const of = c.of === undefined ? -1 : rows[at + c.of.column];
      if (seen !== null && seen[of * 2] === start + 1 && seen[of * 2 + 1] === rows[at + c.at + 1]) continue;
      const [vr, vat] = valuesOf(c, tables, at);
      if (
        start % 8 !== 0 ||
        end < start ||
        end > bytes.length ||
        !partIs(c, pieces, vr, vat, bytes, start, end, text, ds) ||
        utf8 === isAscii(bytes, start, end)
      )
        bad(`${c.table} row ${at / width} has a part that is not its values rendered`);
      if (seen !== null) {
        seen[of * 2] = start + 1;
        seen[of * 2 + 1] = rows[at + c.at + 1];
      }
    }
  }
}

export const NULL = utf8Bytes('null');

function isAscii(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] > 0x7f) return false;
  return true;
}

/** Whether `bytes` from `start` to `end` are the part `c` of the values at `vat` in `vr` (`pieces`: its texts as bytes). */
function partIs(
  c: PartColumn,
  pieces: readonly (Uint8Array | number)[],
  vr: Uint32Array,
  vat: number,
  bytes: Uint8Array,
  start: number,
  end: number,
  text: DatasetText,
  ds: Dataset,
): boolean {
  if (c.when !== undefined && !c.when(vr, vat)) return start === end;
  const ascii = text.ascii;
  let p = start;
  for (const piece of pieces) {
    let from: Uint8Array;
    let s: number;
    let n: number;
    if (typeof piece !== 'number') [from, s, n] = [piece, 0, piece.length];
    else if (vr[vat + piece] === NO_STRING) [from, s, n] = [NULL, 0, 4];
    else if (vr[vat + piece] < OTHER) [from, s, n] = [ascii, vr[vat + piece], ((vr[vat + piece + 1] & ~ESCAPED) >>> 0) - vr[vat + piece]];
    // A value outside ASCII: the whole part rendered.
    else
      return sameText(
        bytes,
        start,
        end,
        renderPart(c, (row, at) => ds.json(row, at), vr, vat),
      );
    if (p + n > end) return false;
    for (let i = 0; i < n; i++) if (bytes[p + i] !== from[s + i]) return false;
    p += n;
  }
  return p === end;
}

/** Whether bytes `start` to `end` are `text` in UTF-8 (ASCII compared in place). */
function sameText(b: Uint8Array, start: number, end: number, text: string): boolean {
  if (text.length === end - start) {
    let i = 0;
    while (i < text.length && text.charCodeAt(i) === b[start + i]) i++;
    if (i === text.length) return true;
    // Not ASCII: the same length in code units and bytes cannot be the same text.
    if (text.charCodeAt(i) < 0x80) return false;
  }
  const t = utf8Bytes(text);
  if (t.length !== end - start) return false;
  for (let i = 0; i < t.length; i++) if (b[start + i] !== t[i]) return false;
  return true;
}
