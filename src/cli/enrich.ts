/**
 * `iprecord enrich`: adds records to the rows of a file, streaming. Input:
 * CSV (the address column by name or index), NDJSON (the address by field
 * path) or a plain list of addresses, gzip-compressed or not. Output:
 * NDJSON (each row with the record, or chosen fields, under a key) or CSV
 * (the row's columns, then chosen fields as columns, dotted paths such as
 * `asn.name` or `threat.is_tor` reaching into the record, then `error`). A row whose address is bad is kept,
 * with its error; a malformed CSV line is reported with its line number
 * and kept as an error row. Memory stays flat: one row at a time, output
 * written as the reader reads, waiting when the output is slow.
 */

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { splitCsvLine } from '../build/csv.js';
import type { Engine } from '../engine.js';
import { isIprecordError } from '../errors.js';
import { FIELD_NAMES, isFieldName } from '../record/fields.js';

export type EnrichFormat = 'csv' | 'ndjson' | 'lines';

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
}

export interface EnrichSummary {
  rows: number;
  bad: number;
  malformed: number;
}

/**
 * Reads a file or standard input, gunzipping when it starts with gzip's
 * magic bytes. `bytesRead`: bytes of the file read so far (for progress).
 */
export async function openInput(file: string | null): Promise<{ stream: Readable; bytesRead: () => number }> {
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
  return { stream: first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b ? raw.pipe(createGunzip()) : raw, bytesRead };
}

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

function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Output gathered into chunks of about 256 KiB, encoded once (one write call per row costs more than the row). */
class Batched {
  private buf = Buffer.allocUnsafe(CHUNK);
  private used = 0;

  constructor(private readonly out: Writable) {}

  /** Adds text; writes the chunk when it is full, waiting while the output's buffer is full. */
  async write(text: string): Promise<void> {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (this.used + text.length * 3 > this.buf.length) {
      await this.flush();
      if (text.length * 3 > this.buf.length) {
        await this.send(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.used += this.buf.write(text, this.used, 'utf8');
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const chunk = this.buf.subarray(0, this.used);
    // The stream may hold the chunk until it is written: the next one goes in a new buffer.
    this.buf = Buffer.allocUnsafe(CHUNK);
    this.used = 0;
    await this.send(chunk);
  }

  private async send(chunk: Buffer): Promise<void> {
    if (!this.out.write(chunk)) await new Promise<void>((resolve) => this.out.once('drain', resolve));
  }
}

const CHUNK = 256 << 10;

/**
 * Enriches every row of `input` into `output`. `progress` is called with
 * the running summary now and then.
 * @throws Error for a usage problem found in the data (an unknown CSV column, a field name that is not one).
 */
export async function enrich(engine: Engine, input: Readable, out: Writable, o: EnrichOptions, progress?: (s: EnrichSummary) => void): Promise<EnrichSummary> {
  const output = new Batched(out);
  const summary: EnrichSummary = { rows: 0, bad: 0, malformed: 0 };
  const key = o.key ?? 'iprecord';
  const keyJson = JSON.stringify(key);
  const fields = o.fields;
  if (o.output === 'ndjson' && fields !== undefined) {
    for (const f of fields) if (!isFieldName(f)) throw new Error(`${f} is not a field name (NDJSON output takes top-level fields; dotted paths are for CSV output)`);
  }
  const paths = fields?.map((f) => f.split('.'));
  if (paths !== undefined) for (const p of paths) if (!isFieldName(p[0])) throw new Error(`${p.join('.')} does not start with a field name`);
  const lookupOptions = o.output === 'ndjson' && fields !== undefined ? { fields } : undefined;
  const addressPath = (o.path ?? 'ip').split('.');

  // CSV output: the input's columns, then the chosen fields (default: every top-level field, objects as JSON), then `error`.
  const recordColumns = fields ?? FIELD_NAMES;
  const columnPaths = recordColumns.map((c) => c.split('.'));
  let inputColumns: string[] = o.input === 'lines' ? ['ip'] : [];
  let headerWritten = false;
  const writeHeader = async () => {
    headerWritten = true;
    await output.write([...inputColumns, ...recordColumns, 'error'].map(csvCell).join(',') + '\n');
  };

  /** One row: its cells (CSV) or object (NDJSON), its address, and an error already known (malformed). */
  const emit = async (cells: string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null) => {
    summary.rows++;
    let record: unknown = null;
    let recordJson: string | null = null;
    let error = known;
    if (error === null) {
      if (ip === null || ip === '') error = 'no address in this row';
      else {
        try {
          if (o.output === 'ndjson') recordJson = engine.lookupJson(ip, lookupOptions);
          else record = engine.lookup(ip, lookupOptions);
        } catch (e) {
          if (!isIprecordError(e) || e.code === 'INVALID_FIELD' || e.code === 'CLOSED') throw e;
          error = e.message;
        }
      }
    }
    if (error !== null) summary.bad++;
    if (o.output === 'ndjson') {
      const row: Record<string, unknown> = object ?? (cells !== null ? Object.fromEntries(inputColumns.map((c, i) => [c, cells[i] ?? ''])) : {});
      // The record goes last, under the key (replacing a value the row had there).
      delete row[key];
      const base = JSON.stringify(row);
      const value = error === null ? (recordJson as string) : JSON.stringify({ error });
      await output.write((base.length === 2 ? '{' : base.slice(0, -1) + ',') + keyJson + ':' + value + '}\n');
    } else {
      if (!headerWritten) await writeHeader();
      const values = columnPaths.map((p) => (record === null ? undefined : at(record, p)));
      const base = cells ?? (object !== null ? inputColumns.map((c) => object[c]) : [ip ?? '']);
      await output.write([...inputColumns.map((_, i) => base[i]), ...values, error ?? ''].map(csvCell).join(',') + '\n');
    }
    if (progress !== undefined && (summary.rows & 0x3ff) === 0) progress(summary);
  };

  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let column = -1;
  let pending: string | null = null; // a CSV line whose quoted field goes on
  let pendingFrom = 0;
  for await (const line of lines) {
    lineNo++;
    if (o.input === 'lines') {
      const ip = line.trim();
      if (ip === '' || ip.startsWith('#')) continue;
      await emit(null, o.output === 'ndjson' ? { ip } : null, ip, null);
      continue;
    }
    if (o.input === 'ndjson') {
      if (line.trim() === '') continue;
      let object: unknown;
      try {
        object = JSON.parse(line);
      } catch {
        summary.malformed++;
        await emit(null, { line: lineNo, text: line.slice(0, 200) }, null, `line ${lineNo}: not a JSON object`);
        continue;
      }
      if (object === null || typeof object !== 'object' || Array.isArray(object)) {
        summary.malformed++;
        await emit(null, { line: lineNo, value: object }, null, `line ${lineNo}: not a JSON object`);
        continue;
      }
      const ip = at(object, addressPath);
      if (o.output === 'csv' && inputColumns.length === 0) inputColumns = Object.keys(object);
      await emit(null, object as Record<string, unknown>, typeof ip === 'string' ? ip.trim() : null, null);
      continue;
    }
    // CSV: a quoted field may hold line breaks.
    let text = line;
    if (pending !== null) {
      text = pending + '\n' + line;
      pending = null;
    } else pendingFrom = lineNo;
    if (text.trim() === '') continue;
    let cells = splitCsvLine(text);
    if (cells === null && (text.split('"').length - 1) % 2 === 1 && text.length < 1 << 20) {
      pending = text;
      continue;
    }
    if (inputColumns.length === 0) {
      if (cells === null) throw new Error(`line ${pendingFrom}: the header is not valid CSV`);
      inputColumns = cells;
      const wanted = o.column;
      column =
        typeof wanted === 'number'
          ? wanted
          : wanted !== undefined
            ? cells.findIndex((c) => c.trim().toLowerCase() === wanted.toLowerCase())
            : Math.max(0, cells.findIndex((c) => ADDRESS_COLUMNS.includes(c.trim().toLowerCase())));
      if (column < 0 || column >= cells.length) throw new Error(`no column ${typeof wanted === 'string' ? `named "${wanted}"` : wanted} in the header (${cells.join(', ')})`);
      continue;
    }
    if (cells === null) {
      summary.malformed++;
      await emit(o.output === 'csv' ? [] : null, o.output === 'csv' ? null : { line: pendingFrom, text: text.slice(0, 200) }, null, `line ${pendingFrom}: malformed CSV`);
      continue;
    }
    await emit(cells, null, (cells[column] ?? '').trim(), null);
  }
  if (pending !== null) {
    summary.malformed++;
    await emit(o.output === 'csv' ? [] : null, o.output === 'csv' ? null : { line: pendingFrom, text: pending.slice(0, 200) }, null, `line ${pendingFrom}: a quoted field is not closed`);
  }
  if (o.output === 'csv' && !headerWritten && (inputColumns.length > 0 || o.input === 'lines')) await writeHeader();
  await output.flush();
  return summary;
}
