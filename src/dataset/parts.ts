/**
 * The parts of a record's JSON that a table row gives, rendered once by
 * the compiler: the members' keys and values as the record prints them,
 * so that a record is written as a few copies with what changes per
 * lookup between them (`render.ts`). Each part is derived from the row's
 * values and the template (`record/template.ts`); the compiler writes them
 * (`compile/write.ts`) and the whole-file check renders them again and
 * compares (`verify.ts`).
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

import { ASN_MEMBERS, CARRIER_MEMBERS, LOCATION_MEMBERS, memberText, PLACE_MEMBERS } from '../record/template.js';
import { CARRIER_AT, LOC, NET, NET_PART, NO_STRING, PART_UTF8, PL, TABLES, THR, type TableName } from './layout.js';

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
  { table: 'locations', at: LOC.placePart, of: { table: 'places', column: LOC.place }, pieces: joined(members(PLACE_MEMBERS, (k) => PL[k], 'bare')) },
  { table: 'networks', at: NET_PART.head, when: hasAsn, pieces: joined([...members(ASN_MEMBERS.slice(0, ROUTE) as Stored[], (k) => NET[k], 'opening'), memberText('route')]) },
  { table: 'networks', at: NET_PART.tail, when: hasAsn, pieces: joined([...members(ASN_MEMBERS.slice(ROUTE + 1) as Stored[], (k) => NET[k], 'key'), '}']) },
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

/** A dataset whose rows (the first of each table, with their part columns) a dataset being made goes on from, and its parts. */
export interface RenderedBase {
  readonly parts: Buffer;
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
 * merge of feeds adds networks and threats). A part text met before (a
 * network's `,"type":"isp"}`) is stored once, another row's (a place's)
 * rendered once; a location's own, nearly always new, is not looked for.
 */
export function renderParts<T extends Record<TableName, Rows>>(tables: T, json: JsonAt, base?: RenderedBase): { parts: Buffer; tables: T } {
  const out = { ...tables };
  const from = (t: TableName) => base?.rows[t] ?? 0;
  for (const c of PART_COLUMNS) {
    const t = tables[c.table];
    if (out[c.table] === t && t.count > from(c.table)) out[c.table] = { count: t.count, rows: t.rows.slice(0, t.count * TABLES[c.table].length) } as T[TableName];
  }
  let buf = Buffer.alloc(Math.max(1 << 20, (base?.parts.length ?? 0) * 2));
  let used = base?.parts.copy(buf) ?? 0;
  const seen = new Map<string, number>();
  const all = Object.fromEntries(Object.entries(out).map(([t, r]) => [t, r.rows])) as Record<TableName, Uint32Array>;
  for (const c of PART_COLUMNS) {
    const { rows, count } = out[c.table];
    const width = TABLES[c.table].length;
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
      const text = renderPart(c, json, ...valuesOf(c, all, at));
      let start = seen.get(text);
      const bytes = Buffer.byteLength(text);
      if (start === undefined) {
        start = used;
        if (buf.length < used + bytes + 8) {
          const grown = Buffer.alloc(Math.max(buf.length * 2, used + bytes + 8));
          buf.copy(grown, 0, 0, used);
          buf = grown;
        }
        buf.write(text, used);
        used = (used + bytes + 7) & ~7;
        if (used >= PART_UTF8) throw new Error('too much text for one dataset');
        if (c.of === undefined && c.table !== 'locations') seen.set(text, start);
      }
      rows[at + c.at] = start;
      rows[at + c.at + 1] = (start + bytes + (bytes === text.length ? 0 : PART_UTF8)) >>> 0;
    }
  }
  return { parts: buf.subarray(0, used), tables: out };
}
