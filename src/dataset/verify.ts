/**
 * The whole-file check of a dataset (`Dataset.verify()`): what opening a
 * file leaves out. A file that passes answers only well-formed records,
 * whoever wrote it:
 *
 * - the checksum of every byte after the header (accidental damage);
 * - each family's starts strictly ascending and its index exactly the
 *   first range starting in each block (a lookup finds the range that
 *   holds the address, not a neighbour);
 * - every range's record in its table, its route prefix within the family
 *   (or none), and a route exactly where its network writes one;
 * - every table row's ids inside their tables, every value's slice inside
 *   the text and valid JSON (a string without escapes where it says so),
 *   so that every record the writers put together is JSON text
 *   (`record/render.ts`); country codes strings, threat values objects;
 * - every row's parts (`parts.ts`) the rendering of its values, said to be
 *   ASCII exactly where it is;
 * - every zone name one the runtime knows.
 *
 * Under 1 s for the default data, off the lookup
 * thread where the engine can (`verify-thread.ts`), and once per file
 * (`seal.ts`).
 */

import type { ZoneRules } from '../time/zone.js';
import { REGISTRY_STATEMENTS } from './registry-statements.js';
import { wholeFileCrc } from '../files/checksum.js';
import { InvalidDatasetError } from '../contract/errors.js';
import {
  COUNTRY,
  CRC_AT,
  CTY,
  ESCAPED,
  HEADER,
  NET,
  NETWORK,
  NO_ROUTE,
  NO_SHARE,
  NO_STRING,
  NO_ZONE,
  RECORD,
  TABLE_NAMES,
  TABLES,
  THR,
  THREAT,
  TYPED_BY,
  ZONE_FROM,
  rangeIndex,
  type Counts,
} from './layout.js';
import type { Dataset } from './format.js';
import { isJsonValue } from './json-scan.js';
import { checkParts } from './parts.js';
import { OTHER, type DatasetText } from './text.js';
import { readU32 } from './layout.js';

/** What the check reads of a dataset besides its public sections. */
export interface VerifyParts {
  readonly buf: Uint8Array;
  readonly counts: Counts;
  readonly text: DatasetText;
}

/** @throws InvalidDatasetError naming the first defect found */
export function verifyDataset(ds: Dataset, parts: VerifyParts): void {
  const bad = (what: string): never => {
    throw new InvalidDatasetError(`${ds.name} is not a valid iprecord dataset: ${what}.`);
  };
  const { buf, counts, text } = parts;
  if (wholeFileCrc(buf, HEADER, CRC_AT) !== readU32(buf, CRC_AT)) bad('checksum mismatch');
  checkIndex4(ds, bad);
  checkIndex6(ds, bad);
  text.verify();
  checkTables(ds, counts, text, bad);
  checkTexts(ds, text, bad);
  const hasRoute = checkValues(ds, bad);
  checkParts(ds, text, bad);
  checkRefs(ds, hasRoute, bad);
  checkZones(ds, bad);
}

type Bad = (what: string) => never;

/** IPv4: starts strictly ascending from 0, and index[b] the number of ranges starting before block b. */
function checkIndex4(ds: Dataset, bad: Bad): void {
  const { starts4: s, index4: index } = ds;
  for (let i = 1; i < s.length; i++) if (s[i] <= s[i - 1]) bad(`IPv4 range ${i} does not start after range ${i - 1}`);
  sameIndex(
    'IPv4',
    index,
    rangeIndex(s.length, 32 - ds.shift4, (i) => s[i]),
    bad,
  );
}

/** IPv6: starts (four words each) strictly ascending from ::, and the index by its first bits as for IPv4. */
function checkIndex6(ds: Dataset, bad: Bad): void {
  const { starts6: s, index6: index } = ds;
  const n = s.length / 4;
  for (let i = 1; i < n; i++) {
    const a = (i - 1) * 4;
    const b = i * 4;
    const after =
      s[b] !== s[a]
        ? s[b] > s[a]
        : s[b + 1] !== s[a + 1]
          ? s[b + 1] > s[a + 1]
          : s[b + 2] !== s[a + 2]
            ? s[b + 2] > s[a + 2]
            : s[b + 3] > s[a + 3];
    if (!after) bad(`IPv6 range ${i} does not start after range ${i - 1}`);
  }
  sameIndex(
    'IPv6',
    index,
    rangeIndex(n, 32 - ds.shift6, (i) => s[i * 4]),
    bad,
  );
}

/** The index a file holds is the one its starts make (compared as bytes; the first block that differs named). */
function sameIndex(family: string, index: Uint32Array, made: Uint32Array, bad: Bad): void {
  let b = 0;
  while (b < made.length && index[b] === made[b]) b++;
  if (b === made.length && index.length === made.length) return;
  bad(`the ${family} index says block ${b} starts at range ${index[b]}, its first range is ${made[b]}`);
}

/** Every id of a table row inside the table it names; every text slice inside the text. */
function checkTables(ds: Dataset, counts: Counts, text: DatasetText, bad: Bad): void {
  const sizes: Record<string, number> = { ...counts.rows, zones: ds.meta.zones.length, flags: 256 };
  for (const table of TABLE_NAMES) {
    const cols: readonly string[] = TABLES[table];
    const a = ds[table];
    const width = cols.length;
    for (let col = 0; col < width; col++) {
      const target = cols[col];
      if (target === 'text') {
        const i = firstBadText(a, col, width, text);
        if (i >= 0) bad(`${table} row ${(i - col) / width} refers to text ${a[i]}-${(a[i + 1] & ~ESCAPED) >>> 0} past its end`);
      } else if (target in sizes) {
        const i = firstPast(a, col, width, sizes[target], target === 'zones' ? NO_ZONE : -1);
        if (i >= 0) bad(`${table} row ${(i - col) / width} refers to ${target} ${a[i]} of ${sizes[target]}`);
      } else if (target === 'zoneFrom') {
        const i = firstPast(a, col, width, ZONE_FROM.length, -1);
        if (i >= 0) bad(`${table} row ${(i - col) / width} says its zone came from ${a[i]}, of ${ZONE_FROM.length} ways`);
      } else if (target === 'typedBy') {
        for (let i = col; i < a.length; i += width) {
          const share = (a[i] >>> 8) & 255;
          if ((a[i] & 255) >= TYPED_BY.length || (share > 100 && share !== NO_SHARE))
            bad(`${table} row ${(i - col) / width} says its type was decided by ${a[i] & 255}, share ${share}`);
          else if (TYPED_BY[a[i] & 255] === 'registry' && a[i] >>> 16 >= REGISTRY_STATEMENTS.length)
            bad(
              `${table} row ${(i - col) / width} says a registry's statement ${a[i] >>> 16} decided its type, of ${REGISTRY_STATEMENTS.length}`,
            );
        }
      }
    }
  }
}

/** The first word of column `col` at or past `limit` (and not `except`), or -1. */
function firstPast(a: Uint32Array, col: number, width: number, limit: number, except: number): number {
  for (let i = col; i < a.length; i += width) if (a[i] >= limit && a[i] !== except) return i;
  return -1;
}

function firstBadText(a: Uint32Array, col: number, width: number, text: DatasetText): number {
  for (let i = col; i < a.length; i += width) if (a[i] !== NO_STRING && !text.spans(a[i], (a[i + 1] & ~ESCAPED) >>> 0)) return i;
  return -1;
}

/**
 * Every text value: valid JSON, and a string without escapes where its
 * end says so (read as the text between its quotes). Values of the ASCII
 * part are checked as bytes, each slice once.
 */
function checkTexts(ds: Dataset, text: DatasetText, bad: Bad): void {
  // The end each start was checked with (plus one; 0: not yet): a start may be given with another end.
  const seen = new Uint32Array(text.ascii.length);
  const ascii = text.ascii;
  for (const table of TABLE_NAMES) {
    const cols: readonly string[] = TABLES[table];
    const a = ds[table];
    for (let col = 0; col < cols.length; col++) {
      if (cols[col] !== 'text') continue;
      for (let i = col; i < a.length; i += cols.length) {
        const start = a[i];
        if (start === NO_STRING) continue;
        const end = a[i + 1];
        const escaped = end >= ESCAPED;
        let ok: boolean;
        if (start < OTHER && !escaped) {
          if (seen[start] === end + 1) continue;
          seen[start] = end + 1;
          ok = ascii[start] === 0x22 ? plainString(ascii, start, end) : isJsonValue(ascii.subarray(start, end));
        } else {
          const t = text.slice(start, escaped ? (end & ~ESCAPED) >>> 0 : end);
          try {
            const v: unknown = JSON.parse(t);
            ok = typeof v !== 'string' ? !escaped && t[0] !== '"' : escaped || t.length === v.length + 2;
          } catch {
            ok = false;
          }
        }
        if (!ok) bad(`${table} row ${(i - col) / cols.length} refers to text that is not a JSON value as its end says`);
      }
    }
  }
}

/** A quoted string with nothing to unescape: no quote, backslash or control character between its quotes. */
function plainString(b: Uint8Array, start: number, end: number): boolean {
  if (end - start < 2 || b[end - 1] !== 0x22) return false;
  for (let i = start + 1; i < end - 1; i++) if (b[i] === 0x22 || b[i] === 0x5c || b[i] < 0x20) return false;
  return true;
}

/**
 * What the writers read of a value besides its being JSON: a country code
 * that is a string or null (`flag` is made from it), threat objects that
 * are objects; per network row, whether it writes a route (it has an AS
 * number).
 */
function checkValues(ds: Dataset, bad: Bad): Uint8Array {
  const c = ds.countries;
  for (let at = 0; at < c.length; at += COUNTRY) {
    const code: unknown = JSON.parse(ds.json(c, at + CTY.country_code));
    if (code !== null && typeof code !== 'string') bad(`country row ${at / COUNTRY} has a country code that is not a string`);
  }
  const th = ds.threats;
  for (let at = 0; at < th.length; at += THREAT) {
    if (!ds.json(th, at + THR.object).startsWith('{') || !ds.json(th, at + THR.basic).startsWith('{'))
      bad(`threat row ${at / THREAT} is not a JSON object`);
  }
  const n = ds.networks;
  const hasRoute = new Uint8Array(n.length / NETWORK);
  for (let row = 0; row < hasRoute.length; row++) hasRoute[row] = n[row * NETWORK + NET.asn] === NO_STRING ? 0 : 1;
  return hasRoute;
}

/** Every range's record in its table, its prefix within its family or none, and none exactly where its network writes no route. */
function checkRefs(ds: Dataset, hasRoute: Uint8Array, bad: Bad): void {
  // Whether each record's network writes a route: read in order here, not once per range.
  const routed = new Uint8Array(ds.recordCount);
  for (let r = 0; r < routed.length; r++) routed[r] = hasRoute[ds.records[r * RECORD + 1]];
  for (const [label, refs, bits] of [
    ['IPv4', ds.refs4, 32],
    ['IPv6', ds.refs6, 128],
  ] as const) {
    const i = firstBadRef(refs, bits, routed);
    if (i < 0) continue;
    const record = refs[i] >>> 8;
    const prefix = refs[i] & 255;
    if (record >= ds.recordCount) bad(`${label} range ${i} refers to record ${record} of ${ds.recordCount}`);
    if (prefix > bits && prefix !== NO_ROUTE) bad(`${label} range ${i} has a route prefix of ${prefix} bits`);
    bad(
      `${label} range ${i} has ${prefix === NO_ROUTE ? 'no route where its network writes one' : 'a route where its network writes none'}`,
    );
  }
}

function firstBadRef(refs: Uint32Array, bits: number, routed: Uint8Array): number {
  for (let i = 0; i < refs.length; i++) {
    const record = refs[i] >>> 8;
    const prefix = refs[i] & 255;
    if (record >= routed.length || (prefix > bits && prefix !== NO_ROUTE) || (prefix !== NO_ROUTE) !== (routed[record] === 1)) return i;
  }
  return -1;
}

/** Every zone name one the dataset's zone table has well-formed rules for. */
function checkZones(ds: Dataset, bad: Bad): void {
  const { zones, rules } = ds.meta.timeZones;
  for (const name of ds.meta.zones) {
    const r = typeof name === 'string' && Object.hasOwn(zones, name) ? (rules[zones[name]] as ZoneRules | undefined) : undefined;
    if (r === undefined) bad(`zone ${JSON.stringify(name)} is not a time zone of its table`);
    else if (!wellFormed(r)) bad(`the rules of zone ${name} are not well formed`);
  }
}

/** Periods with an offset and an abbreviation each, ending in order (the last holds on). */
function wellFormed(r: ZoneRules): boolean {
  const { o, a, u } = r;
  if (!Array.isArray(o) || !Array.isArray(a) || !Array.isArray(u) || o.length === 0 || a.length !== o.length || u.length !== o.length - 1)
    return false;
  if (!o.every((m) => Number.isInteger(m) && Math.abs(m) < 24 * 60) || !a.every((s) => typeof s === 'string' && s !== '')) return false;
  return u.every((m, i) => Number.isInteger(m) && (i === 0 || m > u[i - 1]));
}
