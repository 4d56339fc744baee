/**
 * `iprecord enrich`: adds records to the rows of a file, streaming. Input:
 * CSV (the address column by name or index), NDJSON (the address by field
 * path), a plain list of addresses, or log lines (web servers' common and
 * combined formats: the first field; any text: a regular expression's
 * group), gzip-compressed or not. Output:
 * NDJSON (each row with the record, or chosen fields, under a key) or CSV
 * (the row's columns, then chosen fields as columns, dotted paths such as
 * `asn.name` or `threat.is_tor` reaching into the record, then `error`).
 * A row whose address is bad is kept, with its error; a malformed CSV line
 * is reported with its line number and kept as an error row. Memory stays
 * flat: the input goes in chunks of whole rows (rows.ts), output written
 * as the reader reads, waiting when the output is slow.
 */

import { createReadStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { splitCsvLine } from '../text/csv.js';
import type { Engine } from '../engine/engine.js';
import { isFieldName } from '../record/fields.js';
import { gunzip } from './gunzip.js';
import { ChunkReader, rowsOf, type Chunk, type EnrichFormat, type Rows } from './rows.js';
import { csvHeader, enrichBatch, type BatchOutput, type RowConfig } from './enrich-batch.js';
import { ADDRESS_COLUMNS, ADDRESS_PATHS } from './row-address.js';

export type { Chunk, EnrichFormat } from './rows.js';
export { enrichBatch, type BatchOutput, type RowConfig } from './enrich-batch.js';

export interface EnrichOptions {
  readonly input: EnrichFormat;
  readonly output: 'csv' | 'ndjson';
  /** CSV: the address column, by header name or 0-based index. Default: a column named ip, ip_address, address, client_ip or remote_addr, else the first. */
  readonly column?: string | number;
  /** NDJSON: the path of the address in each object (`a.b`). Default `ip`. */
  readonly path?: string;
  /** Chosen fields: top-level names for NDJSON, dotted paths into the record for CSV (`asn.name`). Default: the whole record (for CSV, every top-level field, objects as JSON). */
  readonly fields?: readonly string[];
  /** NDJSON output: the key the record goes under. Default `iprecord`. */
  readonly key?: string;
  /** Log input: a regular expression whose group `ip` (else its first group, else its match) is the address. Default: the line's first field. */
  readonly regex?: string;
}

export interface EnrichSummary {
  rows: number;
  bad: number;
  malformed: number;
  /** Rows whose bytes are not UTF-8, written as text (U+FFFD in their place): all but CSV rows copied as read. */
  replaced: number;
  /** Chunks done on this thread because the worker thread they went to failed. */
  redone: number;
}

/**
 * Reads a file or standard input, gunzipping when it starts with gzip's
 * magic bytes. `bytesRead`: bytes of the file read so far (for progress).
 */
export async function openInput(file: string | null): Promise<{ stream: AsyncIterable<Buffer | string>; bytesRead: () => number }> {
  const raw: Readable = file === null ? process.stdin : createReadStream(file);
  const bytesRead = () => (raw as Readable & { bytesRead?: number }).bytesRead ?? 0;
  // Peek at the first two bytes.
  const first = await new Promise<Buffer | null>((resolve, reject) => {
    const onReadable = () => {
      const chunk = raw.read() as Buffer | null;
      if (chunk === null) return;
      cleanup();
      resolve(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const cleanup = () => {
      raw.off('readable', onReadable);
      raw.off('end', onEnd);
      raw.off('error', onError);
    };
    raw.on('readable', onReadable);
    raw.on('end', onEnd);
    raw.on('error', onError);
  });
  if (first === null) return { stream: raw, bytesRead };
  raw.unshift(first);
  return { stream: first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b ? gunzip(raw) : raw, bytesRead };
}

/** Writes a chunk, waiting while the output's buffer is full; `written` is called once it is out. */
async function send(out: Writable, chunk: Uint8Array, written?: () => void): Promise<void> {
  if (!out.write(chunk, written === undefined ? undefined : (e) => e == null && written()))
    await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** Checks the chosen fields; throws a usage error. */
function checkFields(o: EnrichOptions): void {
  for (const f of o.fields ?? []) {
    if (o.output === 'ndjson' && !isFieldName(f))
      throw new Error(`${f} is not a field name (NDJSON output takes top-level fields; dotted paths are for CSV output)`);
    if (!isFieldName(f.split('.')[0])) throw new Error(`${f} does not start with a field name`);
  }
}

/** Output buffers kept to be filled again. */
const SPARES = 8;

/**
 * What turns rows into output, once known: from the options alone, or from
 * the input's first rows (the CSV header; for NDJSON in and CSV out, the
 * first object's keys). `skip`: rows of them that are not data.
 * @throws Error for a header that is not CSV or lacks the address column
 */
function rowConfig(o: EnrichOptions, first: Rows | null): { config: RowConfig; skip: number } | null {
  const make = (inputColumns: readonly string[], column: number): RowConfig => ({
    input: o.input,
    output: o.output,
    key: o.key ?? 'iprecord',
    fields: o.fields,
    addressPaths: o.path === undefined ? ADDRESS_PATHS : [o.path.split('.')],
    column,
    inputColumns,
    regex: o.regex,
  });
  if (o.input === 'lines') return { config: make(['ip'], 0), skip: 0 };
  if (o.input === 'log') return { config: make(['line'], 0), skip: 0 };
  if (o.input === 'ndjson' && o.output === 'ndjson') return { config: make([], 0), skip: 0 };
  if (first === null || first.texts.length === 0) return null;
  if (o.input === 'ndjson') {
    // CSV output: the first object's keys are the columns.
    let keys: string[] = [];
    try {
      const v = JSON.parse(first.texts[0]) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) keys = Object.keys(v);
    } catch {
      // a malformed first line: no columns
    }
    return { config: make(keys, 0), skip: 0 };
  }
  const cells = first.bad[0] !== null ? null : splitCsvLine(first.texts[0]);
  if (cells === null) throw new Error(`line ${first.lines[0]}: the header is not valid CSV`);
  const wanted = o.column;
  const column =
    typeof wanted === 'number'
      ? wanted
      : wanted !== undefined
        ? cells.findIndex((c) => c.trim().toLowerCase() === wanted.toLowerCase())
        : Math.max(
            0,
            cells.findIndex((c) => ADDRESS_COLUMNS.includes(c.trim().toLowerCase())),
          );
  if (column < 0 || column >= cells.length)
    throw new Error(`no column ${typeof wanted === 'string' ? `named "${wanted}"` : wanted} in the header (${cells.join(', ')})`);
  return { config: make(cells, column), skip: 1 };
}

/**
 * Runs chunks on other threads; answers come back in the order sent.
 * `spare`: an output buffer already written out, moved to the thread to
 * be filled again.
 */
export type BatchRunner = (chunk: Chunk, spare: ArrayBuffer | null) => Promise<BatchOutput>;

/**
 * Enriches every row of `input` into `output`. With `runners` (one per
 * worker thread), chunks of the input go to them in turn and their
 * answers are written in input order; without, this thread does the work
 * with `engine`. `progress` is called with the running summary after each
 * chunk.
 * @throws Error for a usage problem found in the data (an unknown CSV column, a field name that is not one).
 */
export async function enrich(
  engine: Engine,
  input: AsyncIterable<Buffer | string>,
  out: Writable,
  o: EnrichOptions,
  progress?: (s: EnrichSummary) => void,
  threads?: (config: RowConfig) => BatchRunner[],
): Promise<EnrichSummary> {
  checkFields(o);
  const summary: EnrichSummary = { rows: 0, bad: 0, malformed: 0, replaced: 0, redone: 0 };
  const reader = new ChunkReader(input, o.input === 'csv');
  let known = rowConfig(o, null);
  let runners: BatchRunner[] | null = null;
  let started = false;
  const spares: ArrayBuffer[] = [];
  const add = async (r: BatchOutput) => {
    summary.rows += r.rows;
    summary.bad += r.bad;
    summary.malformed += r.malformed;
    summary.replaced += r.replaced;
    const buffer = r.text.buffer as ArrayBuffer;
    // Once out, the buffer is filled again (a few are kept: two per thread in flight, and one being written).
    await send(out, r.text, () => spares.length < SPARES && spares.push(buffer));
    progress?.(summary);
  };
  // Answers not yet written, oldest first; at most two per thread in flight.
  const inFlight: Promise<BatchOutput>[] = [];
  let sent = 0;
  for (let read = await reader.next(); read !== null; read = await reader.next()) {
    let chunk = read;
    if (known === null) {
      // The header (or first object) is in the first chunk with rows.
      known = rowConfig(o, rowsOf(chunk, o.input));
      if (known === null) continue;
      chunk = { ...chunk, skip: known.skip };
    }
    const config = known.config;
    if (!started) {
      started = true;
      if (o.output === 'csv') await send(out, Buffer.from(csvHeader(config)));
      runners = threads?.(config) ?? null;
      if (runners !== null && runners.length === 0) runners = null;
    }
    if (runners === null) {
      await add(enrichBatch(engine, config, chunk, spares.pop()));
      continue;
    }
    const c = chunk;
    const runner = runners[sent++ % runners.length];
    // A chunk whose thread fails is done here.
    inFlight.push(
      runner(c, spares.pop() ?? null).catch(() => {
        summary.redone++;
        return enrichBatch(engine, config, c);
      }),
    );
    if (inFlight.length >= 2 * runners.length) await add(await (inFlight.shift() as Promise<BatchOutput>));
  }
  while (inFlight.length > 0) await add(await (inFlight.shift() as Promise<BatchOutput>));
  // An input with no rows: CSV output still has its header when the columns are known.
  if (
    !started &&
    o.output === 'csv' &&
    known !== null &&
    (known.config.inputColumns.length > 0 || o.input === 'lines' || o.input === 'log')
  )
    await send(out, Buffer.from(csvHeader(known.config)));
  return summary;
}
