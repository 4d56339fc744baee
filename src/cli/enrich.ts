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
import type { Engine } from '../engine.js';
import type { IpRecord } from '../types.js';
import { isIprecordError } from '../errors.js';
import { FIELD_NAMES, isFieldName } from '../record/fields.js';
import { ByteWriter } from '../record/writer.js';
import { gunzip } from './gunzip.js';
import { ChunkReader, rowsOf, type Chunk, type EnrichFormat, type Rows } from './rows.js';

export type { Chunk, EnrichFormat } from './rows.js';

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

/** Characters of a bad row's text kept in its report. */
const EXCERPT = 200;
/** Longer than any address (an IPv6 address with an IPv4 tail is at most 45 characters). */
const LONGEST_ADDRESS = 64;

const ADDRESS_COLUMNS = ['ip', 'ip_address', 'address', 'client_ip', 'remote_addr', 'ipaddress', 'src_ip'];

/** The value at a dotted path of an object, or undefined. */
function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/**
 * The address of a log line: `regex`'s group `ip` (else its first group,
 * else its match), or the line's first field (common and combined log
 * formats: `$remote_addr`, `%h`); without brackets and a port
 * (`[2001:db8::1]:443`, `203.0.113.9:51234`). null: none.
 */
export function logAddress(line: string, regex: RegExp | null): string | null {
  let field: string | undefined;
  if (regex === null) field = /^\s*(\S+)/.exec(line)?.[1];
  else {
    const m = regex.exec(line);
    field = m === null ? undefined : (m.groups?.ip ?? m[1] ?? m[0]);
  }
  if (field === undefined) return null;
  if (field.startsWith('[')) {
    const end = field.indexOf(']');
    return end < 0 ? field : field.slice(1, end);
  }
  // One colon: IPv4 and a port (an IPv6 address has two or more).
  const colon = field.indexOf(':');
  return colon > 0 && field.indexOf(':', colon + 1) < 0 ? field.slice(0, colon) : field;
}

function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Writes a chunk, waiting while the output's buffer is full; `written` is called once it is out. */
async function send(out: Writable, chunk: Uint8Array, written?: () => void): Promise<void> {
  if (!out.write(chunk, written === undefined ? undefined : (e) => e == null && written())) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** What a thread needs to turn rows into output, once the header is read. */
export interface RowConfig {
  readonly input: EnrichFormat;
  readonly output: 'csv' | 'ndjson';
  readonly key: string;
  readonly fields: readonly string[] | undefined;
  readonly addressPath: readonly string[];
  /** CSV input: the address column. */
  readonly column: number;
  /** CSV input, or NDJSON input to CSV output: the input's columns. */
  readonly inputColumns: readonly string[];
  /** Log input: where the address is (`EnrichOptions.regex`). */
  readonly regex: string | undefined;
}

export interface BatchOutput {
  /** The output as UTF-8 (a worker thread moves the bytes to the main thread rather than copying them). */
  readonly text: Uint8Array;
  readonly rows: number;
  readonly bad: number;
  readonly malformed: number;
  readonly replaced: number;
}

/** Checks the chosen fields; throws a usage error. */
function checkFields(o: EnrichOptions): void {
  for (const f of o.fields ?? []) {
    if (o.output === 'ndjson' && !isFieldName(f)) throw new Error(`${f} is not a field name (NDJSON output takes top-level fields; dotted paths are for CSV output)`);
    if (!isFieldName(f.split('.')[0])) throw new Error(`${f} does not start with a field name`);
  }
}

/** The CSV output's header line: the input's columns, the chosen fields (default: every top-level field), `error`. */
export function csvHeader(c: RowConfig): string {
  return [...c.inputColumns, ...(c.fields ?? FIELD_NAMES), 'error'].map(csvCell).join(',') + '\n';
}

/** Turns a chunk of the input into output bytes: the work that threads share. */
export function enrichBatch(engine: Engine, c: RowConfig, chunk: Chunk, spare?: ArrayBuffer | null): BatchOutput {
  const rows = rowsOf(chunk, c.input);
  const regex = c.regex === undefined ? null : new RegExp(c.regex);
  const keyBytes = Buffer.from(JSON.stringify(c.key) + ':');
  const lookupOptions = c.output === 'ndjson' && c.fields !== undefined ? { fields: c.fields } : undefined;
  const columnPaths = (c.fields ?? FIELD_NAMES).map((f) => f.split('.'));
  // Records and rows are written as UTF-8 into the chunk's own buffer (a worker thread moves it).
  const out = new ByteWriter(rows.texts.length * 1536, spare);
  let bad = 0;
  let malformed = 0;
  let replaced = 0;
  // NDJSON rows of CSV cells, written as text: the columns as an object would hold them (first place, last
  // value), the key's own column left out.
  const plan: { prefix: Uint8Array; cell: number }[] = [];
  const place = new Map<string, number>();
  c.inputColumns.forEach((name, cell) => {
    if (name === c.key) return;
    const at = place.get(name);
    if (at === undefined) {
      place.set(name, plan.length);
      plan.push({ prefix: Buffer.from((plan.length === 0 ? '{' : ',') + JSON.stringify(name) + ':'), cell });
    } else plan[at].cell = cell;
  });
  const failure = { message: '' };
  /** The row's record (written, when `write`), or null with the error in `failure`. */
  const answer = (ip: string | null, known: string | null, write: boolean): Partial<IpRecord> | null | undefined => {
    if (known !== null) failure.message = known;
    else if (ip === null || ip === '') failure.message = 'no address in this row';
    // No address is this long: the message names its start, not a copy of the whole cell.
    else if (ip.length > LONGEST_ADDRESS) failure.message = `${ip.slice(0, LONGEST_ADDRESS)}… does not appear to be an IPv4 or IPv6 address`;
    else if (write && lookupOptions === undefined) {
      if (engine.writeJson(ip, undefined, failure, out)) return undefined;
    } else {
      try {
        if (!write) return engine.lookup(ip, lookupOptions);
        out.text(engine.lookupJson(ip, lookupOptions));
        return undefined;
      } catch (e) {
        if (!isIprecordError(e) || e.code === 'INVALID_FIELD' || e.code === 'CLOSED') throw e;
        failure.message = e.message;
      }
    }
    bad++;
    return null;
  };
  /** The CSV row being written, as read: its cells are copied from it, byte for byte (`copied`). */
  let raw: Uint8Array | null = null;
  let copied = false;
  const emit = (cells: readonly string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null) => {
    if (c.output === 'ndjson') {
      // The row, then the record (last, under the key, replacing a value the row had there) written in place.
      if (object === null && cells !== null) {
        for (let i = 0; i < plan.length; i++) {
          out.bytes(plan[i].prefix);
          out.jsonString(cells[plan[i].cell] ?? '');
        }
        out.latin1(plan.length === 0 ? '{' : ',');
      } else {
        const row: Record<string, unknown> = object ?? {};
        delete row[c.key];
        const base = JSON.stringify(row);
        out.text(base.length === 2 ? '{' : base.slice(0, -1) + ',');
      }
      out.bytes(keyBytes);
      if (answer(ip, known, true) === null) {
        out.latin1('{"error":');
        out.jsonString(failure.message);
        out.latin1('}');
      }
      out.latin1('}\n');
    } else {
      const record = answer(ip, known, false) ?? null;
      const values = [...columnPaths.map((p) => (record === null ? undefined : at(record, p))), record === null ? failure.message : ''];
      // A CSV row of as many cells as the header: its own bytes (what is not UTF-8 among them kept as it was).
      if (raw !== null && cells !== null && cells.length === c.inputColumns.length) {
        out.bytes(raw);
        out.text(',' + values.map(csvCell).join(',') + '\n');
        copied = true;
        return;
      }
      const base = cells ?? (object !== null ? c.inputColumns.map((name) => object[name]) : [ip ?? '']);
      out.text([...c.inputColumns.map((_, i) => base[i]), ...values].map(csvCell).join(',') + '\n');
    }
  };
  /** A row that cannot be read, written or looked up as it is: kept in its place with the reason. */
  const unreadable = (text: string, line: number, reason: string) => {
    malformed++;
    emit(c.output === 'csv' ? [] : null, c.output === 'csv' ? null : { line, text: text.slice(0, EXCERPT) }, null, `line ${line}: ${reason}`);
  };
  const row = (text: string, line: number, bad: string | null) => {
    if (bad !== null) return unreadable(text, line, bad);
    if (c.input === 'lines') return emit(null, c.output === 'ndjson' ? { ip: text } : null, text, null);
    if (c.input === 'log') return emit(null, { line: text }, logAddress(text, regex), null);
    if (c.input === 'ndjson') {
      let object: unknown;
      try {
        object = JSON.parse(text);
      } catch {
        object = undefined;
      }
      if (object === null || typeof object !== 'object' || Array.isArray(object)) {
        malformed++;
        return emit(null, object === undefined ? { line, text: text.slice(0, EXCERPT) } : { line, value: object }, null, `line ${line}: not a JSON object`);
      }
      const ip = at(object, c.addressPath);
      return emit(null, object as Record<string, unknown>, typeof ip === 'string' ? ip.trim() : null, null);
    }
    const cells = splitCsvLine(text);
    if (cells === null) return unreadable(text, line, 'malformed CSV');
    emit(cells, null, (cells[c.column] ?? '').trim(), null);
  };
  for (let r = 0; r < rows.texts.length; r++) {
    const mark = out.used;
    const before = { bad, malformed };
    raw = c.input === 'csv' ? rows.source.subarray(rows.spans[2 * r], rows.spans[2 * r + 1]) : null;
    copied = false;
    try {
      row(rows.texts[r], rows.lines[r], rows.bad[r]);
    } catch (e) {
      // A row that cannot be written (JSON nested past the stack's depth) is one bad row, in its place.
      if (isIprecordError(e)) throw e;
      out.used = mark;
      ({ bad, malformed } = before);
      unreadable(rows.texts[r], rows.lines[r], `cannot be written (${(e as Error).message})`);
    }
    if (!copied && rows.notUtf8?.has(r) === true) replaced++;
  }
  return { text: out.result(), rows: rows.texts.length, bad, malformed, replaced };
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
    addressPath: (o.path ?? 'ip').split('.'),
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
  if (column < 0 || column >= cells.length) throw new Error(`no column ${typeof wanted === 'string' ? `named "${wanted}"` : wanted} in the header (${cells.join(', ')})`);
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
  if (!started && o.output === 'csv' && known !== null && (known.config.inputColumns.length > 0 || o.input === 'lines' || o.input === 'log')) await send(out, Buffer.from(csvHeader(known.config)));
  return summary;
}
