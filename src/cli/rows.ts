/**
 * The rows of `iprecord enrich`'s input, read as chunks of bytes cut at row
 * boundaries. The main thread only finds where to cut and counts lines;
 * the thread that enriches a chunk decodes its rows, so reading costs the
 * main thread little per row. Both find rows with `RowScanner`
 * (records.ts): lines, CSV records across lines inside quotes, at most
 * MAX_ROW bytes each, a malformed record costing its first line only.
 * Blank lines are not rows (nor `#` lines of address lists:
 * `listAddress`). A line longer than MAX_ROW is one bad row, kept as a
 * short excerpt, its bytes skipped as they come (memory stays flat). A
 * byte order mark at the start of the input is dropped. If the input
 * fails (a damaged gzip stream), the whole rows read before the failure
 * are still given, then the failure is thrown.
 */

import { isAscii, isUtf8 } from 'node:buffer';
import { utf8BomLength } from '../files/read.js';
import { MAX_ROW, RowEnd, RowScanner } from './records.js';

export type EnrichFormat = 'csv' | 'ndjson' | 'lines' | 'log';

/** Whole rows of the input, as read. */
export interface Chunk {
  /** The bytes (the last chunk of an input may end without a line break). */
  readonly bytes: Uint8Array;
  /** The number of its first line. */
  readonly line: number;
  /** Rows at its start that are not data (the CSV header). */
  readonly skip: number;
  /** A line longer than MAX_ROW: `bytes` are its first bytes, the rest was skipped. */
  readonly long?: boolean;
}

/** The rows of a chunk: each row's text, its first line number, what is wrong with it as read (or null), and its bytes. */
export interface Rows {
  readonly texts: string[];
  readonly lines: number[];
  readonly bad: (string | null)[];
  /** Each row's bytes in `source`, without its line break: start and end, two numbers a row. */
  readonly spans: number[];
  readonly source: Uint8Array;
  /** The rows whose bytes are not UTF-8 (their text holds U+FFFD in their place), by index; null when the chunk is ASCII. */
  readonly notUtf8: Set<number> | null;
}

/** Bytes of an over-long line kept for its report. */
const EXCERPT = 200;
const NL = 10;
const CR = 13;

/**
 * The address on a line of a plain list (`iprecord -`, `iprecord enrich`
 * on a list): the line less surrounding white space; null for a line that
 * is not a row (blank, or a `#` comment).
 */
export function listAddress(line: string): string | null {
  const ip = line.trim();
  return ip === '' || ip.charCodeAt(0) === 35 /* # */ ? null : ip;
}

/**
 * Cuts an input into chunks at row boundaries, numbering their lines: of
 * `size` to `2 * size` bytes where rows are shorter than `size`, whatever
 * pieces the input comes in.
 */
export class ChunkReader {
  private readonly input: AsyncIterator<Buffer | string>;
  private pending: Buffer = Buffer.alloc(0);
  private line = 1;
  private ended = false;
  /** The input's failure, thrown once the rows before it are given. */
  private failure: unknown = null;
  /** Whether the input's first bytes are still to be checked for a byte order mark (dropped when there is one). */
  private atStart = true;
  /** Inside a line longer than MAX_ROW: its bytes are dropped up to its line break. */
  private skipping = false;

  constructor(
    input: AsyncIterable<Buffer | string>,
    private readonly csv: boolean,
    private readonly size = 65_536,
  ) {
    this.input = input[Symbol.asyncIterator]();
  }

  /** The next chunk, or null at the end. @throws the input's failure, after the rows read before it */
  async next(): Promise<Chunk | null> {
    for (;;) {
      if (this.skipping) this.skipLong();
      if (!this.skipping && !this.atStart && (this.ended || this.pending.length >= this.size)) {
        const chunk = this.cut();
        if (chunk !== null) return chunk;
        if (this.ended) {
          if (this.failure !== null) throw this.failure;
          return null;
        }
      }
      if (this.ended) continue;
      try {
        const r = await this.input.next();
        if (r.done === true) this.ended = true;
        else {
          const data = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
          this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
        }
      } catch (e) {
        this.failure = e;
        this.ended = true;
      }
      if (this.atStart && (this.ended || this.pending.length >= 3)) {
        this.atStart = false;
        this.pending = this.pending.subarray(utf8BomLength(this.pending));
      }
    }
  }

  /** The whole rows at the start of the pending bytes, up to about twice the size (at least one), or null for none yet. */
  private cut(): Chunk | null {
    const b = this.pending;
    // After a failure of the input, a last line without its line break is not a whole row.
    const scanner = new RowScanner(b, this.csv, this.ended && this.failure === null);
    let at = 0;
    let lines = 0;
    while (at < b.length) {
      const kind = scanner.next(at);
      if (kind === RowEnd.More || (at > 0 && kind !== RowEnd.Long && scanner.end > 2 * this.size)) break;
      if (kind === RowEnd.Long) {
        if (at > 0) break;
        // A line too long to be a row: its start kept to report it, the rest dropped as it comes.
        const long = { bytes: Buffer.from(b.subarray(0, EXCERPT)), line: this.line, skip: 0, long: true };
        this.pending = b.subarray(MAX_ROW);
        this.skipping = true;
        return long;
      }
      at = scanner.end;
      lines += scanner.lines;
    }
    if (at === 0) return null;
    // A copy of its own: posted to a thread, a view would take the whole buffer it views.
    const bytes = Buffer.allocUnsafeSlow(at);
    b.copy(bytes, 0, 0, at);
    this.pending = b.subarray(at);
    const chunk = { bytes, line: this.line, skip: 0 };
    this.line += lines;
    return chunk;
  }

  /** Drops the rest of an over-long line: up to and with its line break, or all pending bytes when it has none yet. */
  private skipLong(): void {
    const b = this.pending;
    const nl = b.indexOf(NL);
    const cr = b.indexOf(CR);
    const br = nl < 0 ? cr : cr < 0 ? nl : Math.min(nl, cr);
    if (br < 0 || (b[br] === CR && br + 1 === b.length && !this.ended)) {
      this.pending = br < 0 ? Buffer.alloc(0) : b.subarray(br);
      if (!this.ended) return;
    } else this.pending = b.subarray(br + (b[br] === CR && b[br + 1] === NL ? 2 : 1));
    this.skipping = false;
    this.line++;
  }
}

/** The rows of a chunk (decoded as UTF-8), after its first `skip`. */
export function rowsOf(chunk: Chunk, format: EnrichFormat): Rows {
  const b = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.length);
  // ASCII (most logs) decodes faster as latin1, to the same text, once for the chunk.
  const ascii = isAscii(b) ? b.toString('latin1') : null;
  const rows: Rows = { texts: [], lines: [], bad: [], spans: [], source: b, notUtf8: ascii === null ? new Set() : null };
  let skip = chunk.skip;
  const push = (row: string, line: number, bad: string | null, start: number, end: number) => {
    if (skip > 0) skip--;
    else {
      rows.texts.push(row);
      rows.lines.push(line);
      rows.bad.push(bad);
      rows.spans.push(start, end);
      if (rows.notUtf8 !== null && !isUtf8(b.subarray(start, end))) rows.notUtf8.add(rows.texts.length - 1);
    }
  };
  if (chunk.long === true) {
    push(b.toString('utf8').replace(/\uFFFD$/, '') + '…', chunk.line, `longer than ${MAX_ROW} bytes`, 0, b.length);
    return rows;
  }
  const scanner = new RowScanner(b, format === 'csv', true);
  let line = chunk.line;
  for (let at = 0; at < b.length;) {
    const kind = scanner.next(at);
    const { end, textEnd } = scanner;
    // The row's text without its final line break; line breaks inside a CSV record written as \n.
    let text = ascii === null ? b.toString('utf8', at, textEnd) : ascii.slice(at, textEnd);
    if (scanner.lines > (end > textEnd ? 1 : 0)) text = text.replace(/\r\n|\r/g, '\n');
    if (format === 'lines') {
      const ip = listAddress(text);
      if (ip !== null) push(ip, line, null, at, textEnd);
    } else if (text.trim() !== '') push(text, line, kind === RowEnd.Open ? 'a quoted field is not closed' : null, at, textEnd);
    line += scanner.lines;
    at = end;
  }
  return rows;
}
