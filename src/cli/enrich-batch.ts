/**
 * The work of `iprecord enrich` on one chunk of rows, on whichever thread
 * it runs (enrich.ts reads and orders the chunks): each row's address
 * found by the input's format, its record or error written as NDJSON or
 * CSV into the chunk's own output buffer.
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
  const regex = c.regex === undefined ? null : new RegExp(c.regex);
  const keyBytes = Buffer.from(JSON.stringify(c.key) + ':');
  const lookupOptions = c.output === 'ndjson' && c.fields !== undefined ? { fields: c.fields } : undefined;
  const columns = c.fields ?? FIELD_NAMES;
  const columnPaths = columns.map((f) => f.split('.'));
  // CSV: each cell of the chosen fields (default: every top-level field) written by its writer (\`Engine.csvCells\`),
  // no record or row of values made. (Written after the row's own cells: a row without any, from NDJSON objects
  // without keys, takes the record's.)
  const cellsOf = c.output === 'csv' && c.inputColumns.length > 0 ? csvCells(engine, columns) : null;
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
  const noAddressAt =
    c.addressPaths.length === 1 ? `no address at ${c.addressPaths[0].join('.')}` : 'no address in this row (at ip, remote_addr, client_ip or another usual place: --path names where it is)';
  /**
   * The row's record: written (`write`: as JSON; `cells`: the chosen fields'
   * CSV cells) or as an object (`record`); null with the error in `failure`.
   */
  const answer = (ip: string | null, known: string | null, how: 'write' | 'record' | 'cells'): Record<string, unknown> | null | undefined => {
    const write = how === 'write';
    if (known !== null) failure.message = known;
    else if (ip === null || ip === '') failure.message = c.input === 'ndjson' ? noAddressAt : 'no address in this row';
    // No address is this long: the message names its start, not a copy of the whole cell.
    else if (ip.length > LONGEST_ADDRESS) failure.message = `${ip.slice(0, LONGEST_ADDRESS)}… does not appear to be an IPv4 or IPv6 address`;
    else if (write && lookupOptions === undefined) {
      if (writeRecord(engine, ip, undefined, failure, out)) return undefined;
    } else {
      const mark = out.used;
      try {
        if (how === 'cells') {
          if (cellsOf!(ip, out, failure)) return undefined;
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
      if (answer(ip, known, 'write') === null) {
        out.latin1('{"error":');
        out.jsonString(failure.message);
        out.latin1('}');
      }
      out.latin1('}\n');
    } else {
      // The row's cells: a CSV row of as many cells as the header, its own bytes (what is not UTF-8 among them kept as it was).
      if (raw !== null && cells !== null && cells.length === c.inputColumns.length) {
        out.bytes(raw);
        copied = true;
      } else {
        const base = cells ?? (object !== null ? c.inputColumns.map((name) => object[name]) : [ip ?? '']);
        out.text(c.inputColumns.map((_, i) => csvCell(base[i])).join(','));
      }
      if (cellsOf !== null) {
        // The chosen fields' cells and an empty error, else empty cells and the error.
        if (answer(ip, known, 'cells') !== null) out.latin1(',\n');
        else out.text(`${','.repeat(columns.length + 1)}${csvCell(failure.message)}\n`);
        return;
      }
      const record = answer(ip, known, 'record') ?? null;
      const values = [...columnPaths.map((p) => (record === null ? undefined : at(record, p))), record === null ? failure.message : ''];
      out.text(',' + values.map(csvCell).join(',') + '\n');
    }
  };
  // A group of rows is read first, what their records are written from read ahead together (`prefetchRecords`),
  // then each row written: what the reading found for each row of the group, by its place in the group.
  const G = PREFETCH_GROUP;
  const readCells: (readonly string[] | null)[] = new Array(G).fill(null);
  const readObjects: (Record<string, unknown> | null)[] = new Array(G).fill(null);
  const readIps: (string | null)[] = new Array(G).fill(null);
  const readKnown: (string | null)[] = new Array(G).fill(null);
  /** The row's failure to be read (an error thrown while reading it), and the malformed rows its reading counted. */
  const readFailed: (string | null)[] = new Array(G).fill(null);
  const readMalformed = new Uint8Array(G);
  let slot = 0;
  /** What a row is written from, kept for its turn. */
  const read = (cells: readonly string[] | null, object: Record<string, unknown> | null, ip: string | null, known: string | null) => {
    readCells[slot] = cells;
    readObjects[slot] = object;
    readIps[slot] = ip;
    readKnown[slot] = known;
  };
  /** What a row that cannot be read, written or looked up as it is is written from: its place, with the reason. */
  const unreadable = (text: string, line: number, reason: string, to = read) => {
    malformed++;
    to(c.output === 'csv' ? [] : null, c.output === 'csv' ? null : { line, text: text.slice(0, EXCERPT) }, null, `line ${line}: ${reason}`);
  };
  const row = (text: string, line: number, bad: string | null) => {
    if (bad !== null) return unreadable(text, line, bad);
    if (c.input === 'lines') return read(null, c.output === 'ndjson' ? { ip: text } : null, withoutPort(text), null);
    if (c.input === 'log') return read(null, { line: text }, logAddress(text, regex), null);
    if (c.input === 'ndjson') {
      let object: unknown;
      try {
        object = JSON.parse(text);
      } catch {
        object = undefined;
      }
      if (object === null || typeof object !== 'object' || Array.isArray(object)) {
        malformed++;
        return read(null, object === undefined ? { line, text: text.slice(0, EXCERPT) } : { line, value: object }, null, `line ${line}: not a JSON object`);
      }
      const ip = addressAt(object, c.addressPaths);
      return read(null, object as Record<string, unknown>, ip === null ? null : withoutPort(ip), null);
    }
    const cells = splitCsvLine(text);
    if (cells === null) return unreadable(text, line, 'malformed CSV');
    read(cells, null, withoutPort((cells[c.column] ?? '').trim()), null);
  };
  for (let start = 0; start < rows.texts.length; start += G) {
    const end = Math.min(rows.texts.length, start + G);
    for (let r = start; r < end; r++) {
      slot = r - start;
      const before = malformed;
      readFailed[slot] = null;
      try {
        row(rows.texts[r], rows.lines[r], rows.bad[r]);
      } catch (e) {
        if (isIprecordError(e)) throw e;
        malformed = before;
        readFailed[slot] = (e as Error).message;
        readIps[slot] = null;
      }
      readMalformed[slot] = malformed - before;
    }
    prefetchRecords(engine, readIps, 0, end - start, c.output === 'ndjson' && lookupOptions === undefined);
    for (let r = start; r < end; r++) {
      const k = r - start;
      const mark = out.used;
      const before = { bad, malformed };
      raw = c.input === 'csv' ? rows.source.subarray(rows.spans[2 * r], rows.spans[2 * r + 1]) : null;
      copied = false;
      try {
        const failed = readFailed[k];
        if (failed !== null) throw new Error(failed);
        emit(readCells[k], readObjects[k], readIps[k], readKnown[k]);
      } catch (e) {
        // A row that cannot be written (JSON nested past the stack's depth) is one bad row, in its place.
        if (isIprecordError(e)) throw e;
        out.used = mark;
        bad = before.bad;
        malformed = before.malformed - readMalformed[k];
        unreadable(rows.texts[r], rows.lines[r], `cannot be written (${(e as Error).message})`, emit);
      }
      if (!copied && rows.notUtf8?.has(r) === true) replaced++;
    }
  }
  return { text: out.result(), rows: rows.texts.length, bad, malformed, replaced };
}
