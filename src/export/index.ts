/**
 * `exportDataset()` and `iprecord export`: the compiled dataset's ranges
 * with their static records (`record.ts`), written for the engines that
 * join or look up addresses past one machine, with a `manifest.json`
 * beside (sources, versions, dates, feed states, licences).
 *
 * - `csv`: one row per CIDR block of each range (ClickHouse's `ip_trie`
 *   takes CIDR keys): `network,start_ip,end_ip`, the record's columns
 *   (`EXPORT_COLUMNS`, dotted as `enrich --fields` names them), and
 *   `record`, the record's JSON; or the chosen `fields`. Written as it is
 *   walked; `.gz` in the name compresses it.
 * - `mmdb`: one IPv6 tree with IPv4 at ::/96, every value stored once and
 *   pointed to (`mmdb.ts`); with a `schema`, in one of MaxMind's
 *   (`maxmind.ts`: City, ASN, Anonymous-IP, Enterprise).
 * - `parquet`: one file per family (`parquet.ts`), `<out>` with `.ipv4` and
 *   `.ipv6` before its extension, and DuckDB macros that join a log to both
 *   (`<out>` with `.duckdb.sql` for `.parquet`: `duckdb.ts`).
 */

import { createWriteStream, existsSync, lstatSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Dataset } from '../dataset/format.js';
import { ExportError, InvalidOptionsError } from '../contract/errors.js';
import { checkOptionNames } from '../engine/options.js';
import { removeLeftTemps, writeAtomic } from '../files/write.js';
import type { Engine } from '../engine/engine.js';
import { writeMmdb } from './mmdb.js';
import { MAXMIND_SCHEMAS, type MaxmindSchema, writeMaxmindMmdb } from './maxmind.js';
import { checkCsvFields, EXPORT_COLUMNS } from './record.js';
import { exportRanges, type ExportRange } from './ranges.js';
import { writeCsv } from './csv.js';
import { compiledDataset } from '../engine/inside.js';
import { duckdbMacros, duckdbMacrosFile, parquetPrefix } from './duckdb.js';

export type ExportFormat = 'csv' | 'mmdb' | 'parquet';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'mmdb', 'parquet'];

export interface ExportOptions {
  readonly format: ExportFormat;
  /** The file to write (replaced when complete; for Parquet, the name of the two files); the manifest goes beside it as `<out>.manifest.json`. `-`: standard output (CSV only, no manifest). */
  readonly out: string;
  /** CSV only: the columns after `network,start_ip,end_ip` (`CSV_FIELDS`: dotted columns, top-level keys as JSON, `record`); default every column of `EXPORT_COLUMNS` and `record`. */
  readonly fields?: readonly string[];
  /** MMDB only: the record in one of MaxMind's schemas (`maxmind.ts`), for the readers that take no other; default `iprecord`, the record's own keys. */
  readonly schema?: ExportSchema;
  /** Told the step and the share done (0 to 1) as the export goes, a few hundred times in all. */
  readonly progress?: (step: string, done: number) => void;
}

export type ExportSchema = 'iprecord' | MaxmindSchema;
export const EXPORT_SCHEMAS: readonly ExportSchema[] = ['iprecord', ...MAXMIND_SCHEMAS];

/** The files of a Parquet export named `out`: `records.parquet` gives `records.ipv4.parquet` and `records.ipv6.parquet`. */
export function parquetFiles(out: string): { 4: string; 6: string } {
  const prefix = parquetPrefix(out);
  return { 4: `${prefix}.ipv4.parquet`, 6: `${prefix}.ipv6.parquet` };
}

export interface ExportResult {
  /** Ranges exported, per family. */
  readonly ranges: { readonly v4: number; readonly v6: number };
  /** Rows written (CSV: CIDR blocks). */
  readonly rows: number;
  /** The size of what was written: the file or files on disk (gzipped, for a `.gz` CSV), or the bytes sent to standard output. */
  readonly bytes: number;
  /** A `.gz` CSV's text before compression; absent otherwise. */
  readonly uncompressed?: number;
  /** The manifest written beside the file; null for standard output. */
  readonly manifest: string | null;
}

/** The dataset's exportable ranges, telling `progress` every 1/500 of the walk and at its end. */
function* walk(ds: Dataset, options: ExportOptions): Generator<ExportRange> {
  const tell = options.progress;
  let next = 0;
  for (const r of exportRanges(ds)) {
    if (tell !== undefined && r.done >= next) {
      tell('reading the ranges', r.done);
      next = r.done + 1 / 500;
    }
    yield r;
  }
  tell?.('reading the ranges', 1);
}

/**
 * Exports an engine's compiled dataset. The engine answers each range's
 * record (so an export says what `lookup()` says).
 * @throws InvalidOptionsError for a bad format or fields; ExportError when a file cannot be written (no such folder, a directory in its place, a full disk: the message names the file)
 */
export async function exportDataset(engine: Engine, options: ExportOptions): Promise<ExportResult> {
  if (options === null || typeof options !== 'object') throw new InvalidOptionsError('Export options must be an object.');
  checkOptionNames(options, ['format', 'out', 'fields', 'schema', 'progress'] satisfies readonly (keyof ExportOptions)[]);
  if (!EXPORT_FORMATS.includes(options.format))
    throw new InvalidOptionsError(`Unknown export format ${String(options.format)} (${EXPORT_FORMATS.join(', ')}).`);
  const schema = options.schema ?? 'iprecord';
  if (!EXPORT_SCHEMAS.includes(schema))
    throw new InvalidOptionsError(`Unknown export schema ${String(schema)} (${EXPORT_SCHEMAS.join(', ')}).`);
  if (schema !== 'iprecord' && options.format !== 'mmdb')
    throw new InvalidOptionsError(
      `schema ${schema} is MaxMind's, for an mmdb export; a ${options.format} export holds the record's own keys`,
    );
  if (options.fields !== undefined) {
    if (options.format !== 'csv')
      throw new InvalidOptionsError(`fields choose the columns of a csv export; a ${options.format} export holds every field`);
    checkCsvFields(options.fields);
  }
  const info = engine.info();
  // The bytes the engine answers from, not a second copy read from the file (which a reload may have replaced).
  const ds = compiledDataset(engine);
  if (options.out === '-') {
    if (options.format !== 'csv')
      throw new InvalidOptionsError(`a ${options.format} export is written to a file, not to standard output (-)`);
    const { ranges, rows, bytes } = await writeCsv(engine, walk(ds, options), process.stdout, false, csvFields(options));
    return { ranges, rows, bytes, manifest: null };
  }
  const targets = options.format === 'parquet' ? Object.values(parquetFiles(options.out)) : [options.out];
  const macros = options.format === 'parquet' ? [duckdbMacrosFile(options.out)] : [];
  for (const t of [...targets, ...macros, `${options.out}.manifest.json`]) checkTarget(t);
  for (const t of targets) removeLeftTemps(t);
  const temps = exportTempFiles(options);
  let written: { ranges: ExportResult['ranges']; rows: number; bytes: number };
  try {
    if (options.format === 'csv') {
      // Opened here, not by the stream on the thread pool: a signal's removal cannot run before the file is made.
      const stream = createWriteStream(temps[0], { fd: openSync(temps[0], 'w') });
      written = await writeCsv(engine, walk(ds, options), stream, /\.gz$/i.test(options.out), csvFields(options));
    } else if (options.format === 'mmdb') {
      written =
        schema === 'iprecord'
          ? await writeMmdb(engine, ds, walk(ds, options), temps[0])
          : await writeMaxmindMmdb(engine, ds, walk(ds, options), temps[0], schema);
      options.progress?.('writing the file', 1);
    } else {
      // Loaded when asked for: its writer is not needed to look addresses up.
      const { writeParquet } = await import('./parquet.js');
      written = await writeParquet(engine, ds, options, temps[0], temps[1]);
    }
    targets.forEach((t, i) => renameSync(temps[i], t));
  } catch (e) {
    for (const t of temps) rmSync(t, { force: true });
    // A system's error (ENOSPC, EIO, ...) names no file: this one does.
    throw (e as NodeJS.ErrnoException).code === undefined
      ? e
      : new ExportError(`cannot write ${options.out}: ${(e as Error).message}`, { cause: e });
  }
  const { ranges, rows, bytes } = written;
  // The DuckDB join of the two files, for a user to run rather than paste (duckdb.ts).
  for (const m of macros) writeAtomic(m, duckdbMacros(parquetPrefix(options.out)));
  const manifest = `${options.out}.manifest.json`;
  writeAtomic(manifest, JSON.stringify(manifestOf(info, options, ranges, rows), null, 2) + '\n');
  const onDisk = targets.reduce((n, t) => n + statSync(t).size, 0);
  return { ranges, rows, bytes: onDisk, ...(onDisk === bytes ? {} : { uncompressed: bytes }), manifest };
}

/** The temporary files an export writes before it renames them into place (what to remove if it is stopped). */
export function exportTempFiles(options: Pick<ExportOptions, 'format' | 'out'>): string[] {
  const targets = options.format === 'parquet' ? Object.values(parquetFiles(options.out)) : [options.out];
  const temps = targets.map((t) => `${t}.${process.pid}.tmp`);
  // The MMDB's data section streams to a file beside it.
  return options.format === 'mmdb' ? [...temps, `${temps[0]}.data`] : temps;
}

/**
 * Refuses, before any work, a path an export cannot rightly replace: one
 * in a folder that is not there, or one that is there and is not a regular
 * file (a directory, a device, a FIFO, a symbolic link: name the file itself).
 * @throws ExportError naming the path
 */
export function checkTarget(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ExportError(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
    const parent = dirname(path);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) throw new ExportError(`cannot write ${path}: ${parent} is not a folder`);
    return;
  }
  if (st.isFile()) return;
  const what = st.isDirectory() ? 'a directory' : st.isSymbolicLink() ? 'a symbolic link (name the file itself)' : 'not a regular file';
  throw new ExportError(`cannot write ${path}: it is ${what}`);
}

/** A CSV export's columns after the addresses. */
const csvFields = (options: ExportOptions): readonly string[] => options.fields ?? [...EXPORT_COLUMNS, 'record'];

/** What an export was made from, under which terms. */
function manifestOf(info: ReturnType<Engine['info']>, options: ExportOptions, ranges: ExportResult['ranges'], rows: number) {
  return {
    format: options.format,
    ...(options.format === 'mmdb' ? { schema: options.schema ?? 'iprecord' } : {}),
    file: options.out,
    exportedAt: new Date().toISOString(),
    ranges,
    rows,
    ...(options.format === 'csv' ? { columns: ['network', 'start_ip', 'end_ip', ...csvFields(options)] } : {}),
    dataset: info.dataset,
    sources: info.databases.map((d) => ({
      role: d.role,
      origin: d.origin,
      from: d.from,
      dataDate: d.dataDate,
      databaseType: d.databaseType,
    })),
    feeds: info.feeds.map((f) => ({ name: f.name, state: f.state, source: f.source, dataDate: f.dataDate, entries: f.entries })),
    licences: [
      'Location data: DB-IP Lite, CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). Attribution required: "IP Geolocation by DB-IP" with a link to https://db-ip.com/.',
      'Network data: @ip-location-db/asn (RouteViews, the RIRs via the NRO, DB-IP ASN Lite), CC BY 4.0.',
      'Threat feeds: each list under its own terms (see the feeds and their sources above).',
    ],
  };
}
