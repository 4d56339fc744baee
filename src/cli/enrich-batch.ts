/**
 * The work of `iprecord enrich` on one chunk of rows, on whichever thread
 * it runs (enrich.ts reads and orders the chunks): each row's address
 * found by the input's format, its record or error written as NDJSON or
 * CSV into the chunk's own output buffer.
 *
 * Over 300 lines: one chunk's reading and writing share the group's slots and the output buffer (one class, `Batch`, whose methods are each short).
 */

import { csvField as csvCell, splitCsvLine } from '../text/csv.js';
import type { Engine } from '../engine/engine.js';
import { isIprecordError } from '../contract/errors.js';
import { FIELD_NAMES } from '../record/fields.js';
import { ByteWriter } from '../text/writer.js';
import { rowsOf, type Chunk, type EnrichFormat } from './rows.js';
import { csvCells, PREFETCH_GROUP, prefetchRecords, writeRecord } from '../engine/inside.js';
import { addressAt, at, logAddress, withoutPort } from './row-address.js';

/** Characters of a bad row's text kept in its report. */
const EXCERPT = 200;
/** Longer than any address (an IPv6 address with an IPv4 tail is at most 45 characters). */
const LONGEST_ADDRESS = 64;

/** What a thread needs to turn rows into output, once the header is read. */
export interface RowConfig {
  readonly input: EnrichFormat;
  readonly output: 'csv' | 'ndjson';
  readonly key: string;
  readonly fields: readonly string[] | undefined;
  /** NDJSON input: the paths of the address, tried in order (`--path`, else `ADDRESS_PATHS`). */
  readonly addressPaths: readonly (readonly string[])[];
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

/** The CSV output's header line: the input's columns, the chosen fields (default: every top-level field), `error`. */
export function csvHeader(c: RowConfig): string {
  return [...c.inputColumns, ...(c.fields ?? FIELD_NAMES), 'error'].map(csvCell).join(',') + '\n';
}

/** Turns a chunk of the input into output bytes: the work that threads share. */
export function enrichBatch(engine: Engine, c: RowConfig, chunk: Chunk, spare?: ArrayBuffer | null): BatchOutput {
  const rows = rowsOf(chunk, c.input);
  const batch = new Batch(engine, c, new ByteWriter(rows.texts.length * 1536, spare));
  // A group of rows is read first, what their records are written from read ahead together (`prefetchRecords`),
  // then each row written: what the reading found for each row of the group, by its place in the group.
  for (let start = 0; start < rows.texts.length; start += PREFETCH_GROUP) {
    const end = Math.min(rows.texts.length, start + PREFETCH_GROUP);
    batch.readGroup(rows, start, end);
    prefetchRecords(engine, batch.readIps, 0, end - start, batch.bytesOnly);
    batch.writeGroup(rows, start, end);
  }
  return { text: batch.out.result(), rows: rows.texts.length, bad: batch.bad, malformed: batch.malformed, replaced: batch.replaced };
}

type Rows = ReturnType<typeof rowsOf>;

/** One chunk's rows read a group at a time, then written into `out` with their records or errors. */
class Batch {
  bad = 0;
  malformed = 0;
  replaced = 0;
  private readonly regex: RegExp | null;
  private readonly keyBytes: Buffer;
  private readonly lookupOptions: { readonly fields: readonly string[] } | undefined;
  private readonly columns: readonly string[];
  private readonly columnPaths: readonly string[][];
  /** CSV: each cell of the chosen fields written by its writer (`Engine.csvCells`), no record or row of values made. */
  private readonly cellsOf: ReturnType<typeof csvCells> | null;
  /** NDJSON rows of CSV cells: the columns as an object would hold them (first place, last value), the key's own left out. */
  private readonly plan: { prefix: Uint8Array; cell: number }[] = [];
  private readonly failure = { message: '' };
  private readonly noAddressAt: string;
  /** Whether a record is written as JSON bytes as it is stored (no fields chosen): what `prefetchRecords` reads ahead. */
  readonly bytesOnly: boolean;
  /** The CSV row being written, as read: its cells are copied from it, byte for byte (`copied`). */
  private raw: Uint8Array | null = null;
  private copied = false;
  // What the reading found for each row of a group, by its place in the group.
  private readonly readCells: (readonly string[] | null)[] = new Array(PREFETCH_GROUP).fill(null);
  private readonly readObjects: (Record<string, unknown> | null)[] = new Array(PREFETCH_GROUP).fill(null);
  readonly readIps: (string | null)[] = new Array(PREFETCH_GROUP).fill(null);
  private readonly readKnown: (string | null)[] = new Array(PREFETCH_GROUP).fill(null);
  /** The row's failure to be read (an error thrown while reading it), and the malformed rows its reading counted. */
  private readonly readFailed: (string | null)[] = new Array(PREFETCH_GROUP).fill(null);
  private readonly readMalformed = new Uint8Array(PREFETCH_GROUP);
  private slot = 0;

  constructor(
    private readonly engine: Engine,
    private readonly c: RowConfig,
    /** Records and rows, as UTF-8 in the chunk's own buffer (a worker thread moves it). */
    readonly out: ByteWriter,
  ) {
    this.regex = c.regex === undefined ? null : new RegExp(c.regex);
    this.keyBytes = Buffer.from(JSON.stringify(c.key) + ':');
    this.lookupOptions = c.output === 'ndjson' && c.fields !== undefined ? { fields: c.fields } : undefined;
    this.bytesOnly = c.output === 'ndjson' && this.lookupOptions === undefined;
    this.columns = c.fields ?? FIELD_NAMES;
    this.columnPaths = this.columns.map((f) => f.split('.'));
    // Written after the row's own cells: a row without any, from NDJSON objects without keys, takes the record's.
    this.cellsOf = c.output === 'csv' && c.inputColumns.length > 0 ? csvCells(engine, this.columns) : null;
    const place = new Map<string, number>();
    c.inputColumns.forEach((name, cell) => {
      if (name === c.key) return;
      const at = place.get(name);
      if (at === undefined) {
        place.set(name, this.plan.length);
        this.plan.push({ prefix: Buffer.from((this.plan.length === 0 ? '{' : ',') + JSON.stringify(name) + ':'), cell });
      } else this.plan[at].cell = cell;
    });
    this.noAddressAt =
      c.addressPaths.length === 1
        ? `no address at ${c.addressPaths[0].join('.')}`
        : 'no address in this row (at ip, remote_addr, client_ip or another usual place: --path names where it is)';
  }

  /** Reads rows `start` to `end` of `rows` into the group's slots. */
  readGroup(rows: Rows, start: number, end: number): void {
    for (let r = start; r < end; r++) {
      this.slot = r - start;
      const before = this.malformed;
      this.readFailed[this.slot] = null;
      try {
        this.row(rows.texts[r], rows.lines[r], rows.bad[r]);
      } catch (e) {
        if (isIprecordError(e)) throw e;
        this.malformed = before;
        this.readFailed[this.slot] = (e as Error).message;
        this.readIps[this.slot] = null;
      }
      this.readMalformed[this.slot] = this.malformed - before;
    }
  }

  /** Writes rows `start` to `end` of `rows` from the group's slots, each with its record or error. */
  writeGroup(rows: Rows, start: number, end: number): void {
    const out = this.out;
    for (let r = start; r < end; r++) {
      const k = r - start;
      const mark = out.used;
      const before = { bad: this.bad, malformed: this.malformed };
      this.raw = this.c.input === 'csv' ? rows.source.subarray(rows.spans[2 * r], rows.spans[2 * r + 1]) : null;
      this.copied = false;
      try {
        const failed = this.readFailed[k];
        if (failed !== null) throw new Error(failed);
        this.emit(this.readCells[k], this.readObjects[k], this.readIps[k], this.readKnown[k]);
      } catch (e) {
        // A row that cannot be written (JSON nested past the stack's depth) is one bad row, in its place.
        if (isIprecordError(e)) throw e;
        out.used = mark;
        this.bad = before.bad;
        this.malformed = before.malformed - this.readMalformed[k];
        this.unreadable(rows.texts[r], rows.lines[r], `cannot be written (${(e as Error).message})`, true);
      }
      if (!this.copied && rows.notUtf8?.has(r) === true) this.replaced++;
    }
  }

  /** Reads one row by the input's format: its cells or object, and its address. */
  private row(text: string, line: number, bad: string | null): void {
    const c = this.c;
    if (bad !== null) return this.unreadable(text, line, bad, false);
    if (c.input === 'lines') return this.read(null, c.output === 'ndjson' ? { ip: text } : null, withoutPort(text), null);
    if (c.input === 'log') return this.read(null, { line: text }, logAddress(text, this.regex), null);
    if (c.input === 'ndjson') {
      let object: unknown;
      try {
        object = JSON.parse(text);
      } catch {
        object = undefined;
      }
      if (object === null || typeof object !== 'object' || Array.isArray(object)) {
        this.malformed++;
        return this.read(
          null,
          object === undefined ? { line, text: text.slice(0, EXCERPT) } : { line, value: object },
          null,
          `line ${line}: not a JSON object`,
        );
      }
      const ip = addressAt(object, c.addressPaths);
      return this.read(null, object as Record<string, unknown>, ip === null ? null : withoutPort(ip), null);
    }
    const cells = splitCsvLine(text);
    if (cells === null) return this.unreadable(text, line, 'malformed CSV', false);
    this.read(cells, null, withoutPort((cells[c.column] ?? '').trim()), null);
  }

  /** What a row is written from, kept in its slot for its turn. */
  private read(cells: readonly string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null): void {
    this.readCells[this.slot] = cells;
    this.readObjects[this.slot] = object;
    this.readIps[this.slot] = ip;
    this.readKnown[this.slot] = known;
  }

  /** A row that cannot be read, written or looked up as it is: its place, with the reason, kept (or written, `now`). */
  private unreadable(text: string, line: number, reason: string, now: boolean): void {
    this.malformed++;
    const csv = this.c.output === 'csv';
    const cells = csv ? [] : null;
    const object = csv ? null : { line, text: text.slice(0, EXCERPT) };
    if (now) this.emit(cells, object, null, `line ${line}: ${reason}`);
    else this.read(cells, object, null, `line ${line}: ${reason}`);
  }

  /** Writes a row and its record (or error) in the output's format. */
  private emit(cells: readonly string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null): void {
    if (this.c.output === 'ndjson') this.emitNdjson(cells, object, ip, known);
    else this.emitCsv(cells, object, ip, known);
  }

  /** The row, then the record (last, under the key, replacing a value the row had there) written in place. */
  private emitNdjson(
    cells: readonly string[] | null,
    object: Record<string, unknown> | null,
    ip: string | null,
    known: string | null,
  ): void {
    const out = this.out;
    if (object === null && cells !== null) {
      for (let i = 0; i < this.plan.length; i++) {
        out.bytes(this.plan[i].prefix);
        out.jsonString(cells[this.plan[i].cell] ?? '');
      }
      out.latin1(this.plan.length === 0 ? '{' : ',');
    } else {
      const row: Record<string, unknown> = object ?? {};
      delete row[this.c.key];
      const base = JSON.stringify(row);
      out.text(base.length === 2 ? '{' : base.slice(0, -1) + ',');
    }
    out.bytes(this.keyBytes);
    if (this.answer(ip, known, 'write') === null) {
      out.latin1('{"error":');
      out.jsonString(this.failure.message);
      out.latin1('}');
    }
    out.latin1('}\n');
  }

  /** The row's cells: a CSV row of as many cells as the header, its own bytes (what is not UTF-8 among them kept as it was); then the record's. */
  private emitCsv(cells: readonly string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null): void {
    const out = this.out;
    const c = this.c;
    if (this.raw !== null && cells !== null && cells.length === c.inputColumns.length) {
      out.bytes(this.raw);
      this.copied = true;
    } else {
      const base = cells ?? (object !== null ? c.inputColumns.map((name) => object[name]) : [ip ?? '']);
      out.text(c.inputColumns.map((_, i) => csvCell(base[i])).join(','));
    }
    if (this.cellsOf !== null) {
      // The chosen fields' cells and an empty error, else empty cells and the error.
      if (this.answer(ip, known, 'cells') !== null) out.latin1(',\n');
      else out.text(`${','.repeat(this.columns.length + 1)}${csvCell(this.failure.message)}\n`);
      return;
    }
    const record = this.answer(ip, known, 'record') ?? null;
    const values = [
      ...this.columnPaths.map((p) => (record === null ? undefined : at(record, p))),
      record === null ? this.failure.message : '',
    ];
    out.text(',' + values.map(csvCell).join(',') + '\n');
  }

  /**
   * The row's record: written (`write`: as JSON; `cells`: the chosen fields'
   * CSV cells) or as an object (`record`); null with the error in `failure`.
   */
  private answer(ip: string | null, known: string | null, how: 'write' | 'record' | 'cells'): Record<string, unknown> | null | undefined {
    const { c, engine, out, failure, lookupOptions } = this;
    if (known !== null) failure.message = known;
    else if (ip === null || ip === '') failure.message = c.input === 'ndjson' ? this.noAddressAt : 'no address in this row';
    // No address is this long: the message names its start, not a copy of the whole cell.
    else if (ip.length > LONGEST_ADDRESS)
      failure.message = `${ip.slice(0, LONGEST_ADDRESS)}… does not appear to be an IPv4 or IPv6 address`;
    else if (how === 'write' && lookupOptions === undefined) {
      if (writeRecord(engine, ip, undefined, failure, out)) return undefined;
    } else {
      const mark = out.used;
      try {
        if (how === 'cells') {
          if (this.cellsOf!(ip, out, failure)) return undefined;
        } else if (how === 'record') return engine.lookup(ip, lookupOptions) as Record<string, unknown>;
        else {
          out.text(engine.lookupJson(ip, lookupOptions));
          return undefined;
        }
      } catch (e) {
        if (!isIprecordError(e) || e.code === 'INVALID_FIELD' || e.code === 'CLOSED') throw e;
        out.used = mark;
        failure.message = e.message;
      }
    }
    this.bad++;
    return null;
  }
}
