/**
 * ASN range CSVs (`start,end,asn,organisation`, the format of
 * `@ip-location-db/asn`): their rows, read (`readAsnCsv`; the compiler
 * reads them straight into networks, `compile/range-csv.ts`), and an MMDB
 * of them in the GeoLite2-ASN schema (`compileAsnCsv`, exported by
 * `iprecord/build` for other readers). Each range is split into CIDR
 * blocks; `asn.route` is the block that holds the address. Where rows
 * overlap, a later row wins on its own range (in the @ip-location-db data
 * the one nested row is the narrower announcement).
 */

import { forEachCsvRow, type CsvBadLine } from '../csv-rows.js';
import { rangeToCidrs, toBigInt } from '../../ip/ranges.js';
import { parseIp, type Address } from '../../ip/address.js';
import { MmdbWriter, Typed } from '../../mmdb/writer.js';
import { capped } from '../geo/adapters/values.js';

/** A line of a file that could not be read as a row. */
export type BadLine = CsvBadLine;

export interface AsnCompileResult {
  readonly buffer: Buffer;
  readonly ranges: number;
  readonly networks: number;
  readonly badLines: readonly BadLine[];
}

/** `database_type` of the compiled file. */
export const ASN_DATABASE_TYPE = 'iprecord-ASN';
/** Version of the compiler's output: a change makes installed files rebuild. */
export const ASN_FORMAT_VERSION = 2;

/** One row of an ASN range CSV. */
export interface AsnRow {
  readonly start: Address;
  readonly end: Address;
  readonly asn: number;
  readonly name: string;
}

/** Reads ASN range CSVs (`start,end,asn,organisation`): the rows in file order, and the bad lines (never fatal). */
export function readAsnCsv(files: readonly string[]): { rows: AsnRow[]; badLines: BadLine[] } {
  const rows: AsnRow[] = [];
  const badLines = forEachCsvRow(files, (f, bad) => {
    if (!f || f.length < 3) return bad('expected start,end,asn,organisation');
    const start = parseIp(f[0]);
    const end = parseIp(f[1]);
    const asn = /^\d{1,10}$/.test(f[2]) ? Number(f[2]) : NaN;
    if (!start || !end || start.version !== end.version || !(asn >= 0 && asn < 2 ** 32)) return bad('invalid address range or AS number');
    if (toBigInt(start) > toBigInt(end)) return bad('Range start is after its end.');
    rows.push({ start, end, asn, name: capped(f[3] ?? '') });
  });
  return { rows, badLines };
}

/**
 * Reads and compiles the CSV files. Bad lines are reported, never fatal.
 * `source` is written into the metadata description (to tell when to rebuild).
 */
export function compileAsnCsv(files: readonly string[], source: string): AsnCompileResult {
  const writer = new MmdbWriter({ databaseType: ASN_DATABASE_TYPE, description: { en: source } });
  const { rows, badLines } = readAsnCsv(files);
  let networks = 0;
  for (const row of rows) {
    const cidrs = rangeToCidrs(row.start, row.end);
    const value = { autonomous_system_number: new Typed('uint32', row.asn), autonomous_system_organization: row.name };
    for (const c of cidrs) writer.insert(c.version, c.words, c.prefix, value);
    networks += cidrs.length;
  }
  return { buffer: writer.toBuffer(), ranges: rows.length, networks, badLines };
}
