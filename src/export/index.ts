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
 *   pointed to (`mmdb.ts`).
 * - `parquet`: one file per family (`parquet.ts`), `<out>` with `.ipv4` and
 *   `.ipv6` before its extension.
 */

import { createWriteStream, existsSync, lstatSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import type { Dataset } from '../dataset/format.js';
import { ExportError, InvalidOptionsError } from '../errors.js';
import { writeAtomic } from '../files/write.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt, rangeToCidrs } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import type { Engine } from '../engine.js';
import { writeMmdb } from './mmdb.js';
import { checkCsvFields, EXPORT_COLUMNS, fieldValues, flatten, recordAt } from './record.js';
import { exportRanges, type ExportRange } from './ranges.js';
import { PerRoute } from './routes.js';
import type { FamilyWritten } from './parquet.js';
import { startWorker } from '../threads.js';

export type ExportFormat = 'csv' | 'mmdb' | 'parquet';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'mmdb', 'parquet'];

export interface ExportOptions {
  readonly format: ExportFormat;
  /** The file to write (replaced when complete; for Parquet, the name of the two files); the manifest goes beside it as `<out>.manifest.json`. `-`: standard output (CSV only, no manifest). */
  readonly out: string;
  /** CSV only: the columns after `network,start_ip,end_ip` (`CSV_FIELDS`: dotted columns, top-level keys as JSON, `record`); default every column of `EXPORT_COLUMNS` and `record`. */
  readonly fields?: readonly string[];
  /** Told the step and the share done (0 to 1) as the export goes, a few hundred times in all. */
  readonly progress?: (step: string, done: number) => void;
}

/** The files of a Parquet export named `out`: `records.parquet` gives `records.ipv4.parquet` and `records.ipv6.parquet`. */
export function parquetFiles(out: string): { 4: string; 6: string } {
  const m = /^(.*?)(\.parquet)?$/i.exec(out)!;
  return { 4: `${m[1]}.ipv4.parquet`, 6: `${m[1]}.ipv6.parquet` };
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
 * A CSV cell: quoted where it holds a quote, comma or line break, and where
 * it starts with an apostrophe (the city 's-Gravendeel): ClickHouse reads a
 * cell that starts with one as a single-quoted string unless told
 * `format_csv_allow_single_quotes=0`.
 */
export const csvText = (v: string | number | boolean | null | undefined): string => {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) || s.charCodeAt(0) === 0x27 ? `"${s.replace(/"/g, '""')}"` : s;
};

/** Writes chunks, waiting when the stream asks to; the first error of the file or the compressor fails the next call. */
class Out {
  bytes = 0;
  private readonly head: Writable;
  /** Rejects with the first error of either stream. */
  private readonly broken: Promise<never>;
  private pending: string[] = [];
  private size = 0;
  constructor(
    private readonly file: Writable,
    gzip: boolean,
  ) {
    if (gzip) {
      const z = createGzip();
      z.pipe(this.file);
      this.head = z;
    } else this.head = this.file;
    this.broken = new Promise<never>((_, reject) => {
      this.file.once('error', reject);
      this.head.once('error', reject);
    });
    // Seen by whichever call comes next.
    this.broken.catch(() => undefined);
  }
  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 1 << 20) await this.flush();
  }
  private async flush(): Promise<void> {
    const chunk = this.pending.join('');
    this.pending = [];
    this.size = 0;
    this.bytes += Buffer.byteLength(chunk);
    if (!this.head.write(chunk)) await Promise.race([once(this.head, 'drain'), this.broken]);
  }
  async end(): Promise<void> {
    await this.flush();
    if (this.file === process.stdout) {
      // Standard output is not ended (the process goes on writing to it): what was written is out once an empty write is.
      await Promise.race([new Promise<void>((resolve, reject) => this.file.write('', (e) => (e ? reject(e) : resolve()))), this.broken]);
      return;
    }
    this.head.end();
    await Promise.race([once(this.file, 'finish'), this.broken]);
  }
}

/**
 * Exports an engine's compiled dataset. The engine answers each range's
 * record (so an export says what `lookup()` says).
 * @throws InvalidOptionsError for a bad format or fields; ExportError when a file cannot be written (no such folder, a directory in its place, a full disk: the message names the file)
 */
export async function exportDataset(engine: Engine, options: ExportOptions): Promise<ExportResult> {
  if (!EXPORT_FORMATS.includes(options.format)) throw new InvalidOptionsError(`Unknown export format ${String(options.format)} (${EXPORT_FORMATS.join(', ')}).`);
  if (options.fields !== undefined) {
    if (options.format !== 'csv') throw new InvalidOptionsError(`fields choose the columns of a csv export; a ${options.format} export holds every field`);
    checkCsvFields(options.fields);
  }
  const info = engine.info();
  // The bytes the engine answers from, not a second copy read from the file (which a reload may have replaced).
  const ds = engine.compiledDataset();
  if (options.out === '-') {
    if (options.format !== 'csv') throw new InvalidOptionsError(`a ${options.format} export is written to a file, not to standard output (-)`);
    const { ranges, rows, bytes } = await writeCsv(engine, walk(ds, options), process.stdout, false, csvFields(options));
    return { ranges, rows, bytes, manifest: null };
  }
  const targets = options.format === 'parquet' ? Object.values(parquetFiles(options.out)) : [options.out];
  for (const t of [...targets, `${options.out}.manifest.json`]) checkTarget(t);
  const temps = exportTempFiles(options);
  let written: { ranges: ExportResult['ranges']; rows: number; bytes: number };
  try {
    if (options.format === 'csv') written = await writeCsv(engine, walk(ds, options), createWriteStream(temps[0]), /\.gz$/i.test(options.out), csvFields(options));
    else if (options.format === 'mmdb') {
      written = writeMmdb(engine, ds, walk(ds, options), temps[0]);
      options.progress?.('writing the file', 1);
    } else written = await writeParquet(engine, ds, options, temps[0], temps[1]);
    targets.forEach((t, i) => renameSync(temps[i], t));
  } catch (e) {
    for (const t of temps) rmSync(t, { force: true });
    // A system's error (ENOSPC, EIO, ...) names no file: this one does.
    throw (e as NodeJS.ErrnoException).code === undefined ? e : new ExportError(`cannot write ${options.out}: ${(e as Error).message}`, { cause: e });
  }
  const { ranges, rows, bytes } = written;
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
function checkTarget(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new ExportError(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
    const parent = dirname(path);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) throw new ExportError(`cannot write ${path}: ${parent} is not a folder`);
    return;
  }
  if (st.isFile()) return;
  const what = st.isDirectory() ? 'a directory' : st.isSymbolicLink() ? 'a symbolic link (name the file itself)' : 'not a regular file';
  throw new ExportError(`cannot write ${path}: it is ${what}`);
}

/** The CSV export (see the module comment). */
async function writeCsv(
  engine: Engine,
  walked: Iterable<ExportRange>,
  file: Writable,
  gzip: boolean,
  fields: readonly string[],
): Promise<{ ranges: ExportResult['ranges']; rows: number; bytes: number }> {
  const out = new Out(file, gzip);
  const ranges = { v4: 0, v6: 0 };
  let rows = 0;
  await out.write(['network', 'start_ip', 'end_ip', ...fields].join(',') + '\n');
  const tails = new PerRoute((version, first) => {
    const record = recordAt(engine, version, first);
    return fieldValues(record, flatten(record), fields).map(csvText).join(',') + '\n';
  });
  for (const { version, first, last, ref } of walked) {
    if (version === 4) ranges.v4++;
    else ranges.v6++;
    const tail = tails.get(version, first, ref);
    for (const c of cidrsOf(version, first, last)) {
      const a = formatIp(version, c.words);
      const z = formatIp(version, fromBigInt(version, lastOf(version, c.words, c.prefix)));
      await out.write(`${a}/${c.prefix},${a},${z},${tail}`);
      rows++;
    }
  }
  await out.end();
  return { ranges, rows, bytes: out.bytes };
}

/** A CSV export's columns after the addresses. */
const csvFields = (options: ExportOptions): readonly string[] => options.fields ?? [...EXPORT_COLUMNS, 'record'];

/** The CIDR blocks of a range. */
function cidrsOf(version: IpVersion, first: bigint, last: bigint) {
  return rangeToCidrs({ version, words: fromBigInt(version, first) }, { version, words: fromBigInt(version, last) });
}

/**
 * The Parquet export (`parquet.ts`, loaded when asked for: its writer is
 * not needed to look addresses up): IPv4 on this thread while a worker
 * thread writes IPv6 (`parquet-worker.ts`) from an engine over the same
 * files; the two families hold about as many ranges. Where no worker
 * thread starts, IPv6 is written here after IPv4.
 */
async function writeParquet(engine: Engine, ds: Dataset, options: ExportOptions, v4: string, v6: string): Promise<{ ranges: ExportResult['ranges']; rows: number; bytes: number }> {
  const { writeFamily } = await import('./parquet.js');
  const tell = options.progress;
  // Each family's share of the walk done; the two are told as one figure.
  const done = { 4: 0, 6: 0 };
  let next = 0;
  const told = (version: IpVersion, share: number) => {
    done[version] = share;
    if (tell === undefined || done[4] + done[6] < next) return;
    tell('reading the ranges', done[4] + done[6]);
    next = done[4] + done[6] + 1 / 500;
  };
  const worker = startFamilyWorker(engine, v6, (share) => told(6, share));
  try {
    const four = await writeFamily(engine, ds, 4, v4, (share) => told(4, share));
    const six = worker === null ? await writeFamily(engine, ds, 6, v6, (share) => told(6, share)) : await worker.written;
    tell?.('reading the ranges', 1);
    return { ranges: { v4: four.ranges, v6: six.ranges }, rows: four.rows + six.rows, bytes: statSync(v4).size + statSync(v6).size };
  } finally {
    await worker?.stop();
  }
}

/** A worker thread writing one family's Parquet file; null when none starts. */
function startFamilyWorker(engine: Engine, file: string, told: (share: number) => void): { written: Promise<FamilyWritten>; stop: () => Promise<void> } | null {
  const fromSource = import.meta.url.endsWith('.ts');
  let worker: Worker;
  try {
    worker = startWorker(new URL(fromSource ? './parquet-worker.ts' : './parquet-worker.js', import.meta.url), {
      workerData: { options: engine.threadOptions(), dataset: engine.info().dataset, file, version: 6 },
    });
  } catch {
    return null;
  }
  const written = new Promise<FamilyWritten>((resolve, reject) => {
    worker.on('message', (m: { done?: number; written?: FamilyWritten }) => {
      if (m.done !== undefined) told(m.done);
      if (m.written !== undefined) resolve(m.written);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the Parquet writer's worker thread exited (${code}) before it was done`)));
  });
  // Seen by whoever waits for it; a failure on this thread first stops the worker.
  written.catch(() => undefined);
  return { written, stop: async () => void (await worker.terminate()) };
}

/** The last address of a CIDR block, as a number of its family. */
function lastOf(version: IpVersion, words: ArrayLike<number>, prefix: number): bigint {
  const bits = version === 4 ? 32 : 128;
  const first = version === 4 ? BigInt(words[3]) : (BigInt(words[0]) << 96n) | (BigInt(words[1]) << 64n) | (BigInt(words[2]) << 32n) | BigInt(words[3]);
  return first + (1n << BigInt(bits - prefix)) - 1n;
}

/** What an export was made from, under which terms. */
function manifestOf(info: ReturnType<Engine['info']>, options: ExportOptions, ranges: ExportResult['ranges'], rows: number) {
  return {
    format: options.format,
    file: options.out,
    exportedAt: new Date().toISOString(),
    ranges,
    rows,
    ...(options.format === 'csv' ? { columns: ['network', 'start_ip', 'end_ip', ...csvFields(options)] } : {}),
    dataset: info.dataset,
    sources: info.databases.map((d) => ({ role: d.role, origin: d.origin, from: d.from, dataDate: d.dataDate, databaseType: d.databaseType })),
    feeds: info.feeds.map((f) => ({ name: f.name, state: f.state, source: f.source, dataDate: f.dataDate, entries: f.entries })),
    licences: [
      'Location data: DB-IP Lite, CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). Attribution required: "IP Geolocation by DB-IP" with a link to https://db-ip.com/.',
      'Network data: @ip-location-db/asn (RouteViews, the RIRs via the NRO, DB-IP ASN Lite), CC BY 4.0.',
      'Threat feeds: each list under its own terms (see the feeds and their sources above).',
    ],
  };
}
