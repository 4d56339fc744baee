/**
 * The rows of `iprecord enrich`'s input, read as chunks of bytes cut at row
 * boundaries. The main thread only finds where to cut and counts lines;
 * the thread that enriches a chunk decodes and splits it, so reading costs
 * the main thread next to nothing per row. Rows are what reading line by
 * line gives: lines end with `\n`, `\r\n` or a lone `\r`; blank lines are
 * not rows (nor `#` lines of address lists: `listAddress`); a CSV record goes on across
 * line breaks inside a quoted field (an odd number of quotes so far), up
 * to 1 MiB. A byte order mark at the start of the input is dropped.
 */

import { isAscii } from 'node:buffer';
import type { Readable } from 'node:stream';
import { utf8BomLength } from '../build/read.js';

export type EnrichFormat = 'csv' | 'ndjson' | 'lines';

/** Whole rows of the input, as read. */
export interface Chunk {
  /** The bytes (the last chunk of an input may end without a line break). */
  readonly bytes: Uint8Array;
  /** The number of its first line. */
  readonly line: number;
  /** Rows at its start that are not data (the CSV header). */
  readonly skip: number;
}

/** The rows of a chunk: each row's text, its first line number, and whether it ended inside a quoted field. */
export interface Rows {
  readonly texts: string[];
  readonly lines: number[];
  readonly open: boolean[];
}

const NL = 10;
const CR = 13;
const QUOTE = 34;

/** A CSV record stops being joined across lines beyond this length: one stray quote does not take the rest of the file. */
const MAX_RECORD = 1 << 20;

/** Line breaks in `b`: `\n`, `\r\n` (one) and a lone `\r`. A chunk never ends between `\r` and `\n`. */
function lineBreaks(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(NL); i >= 0; i = b.indexOf(NL, i + 1)) n++;
  for (let i = b.indexOf(CR); i >= 0; i = b.indexOf(CR, i + 1)) if (i + 1 === b.length || b[i + 1] !== NL) n++;
  return n;
}

/**
 * Where rows end in `b` (rows may go on past its end): the length of its
 * longest prefix of whole rows, or 0. For CSV, only a line break outside
 * quotes ends a row, unless the record would be longer than MAX_RECORD.
 */
function cutPoint(b: Buffer, csv: boolean): number {
  const last = b.lastIndexOf(NL);
  if (csv && b.indexOf(QUOTE) >= 0) {
    // The last line break with an even number of quotes before it.
    let cut = 0;
    let inQuotes = false;
    for (let from = 0; ; ) {
      const q = b.indexOf(QUOTE, from);
      const end = q < 0 ? b.length : q;
      if (!inQuotes && end > from) {
        const nl = b.lastIndexOf(NL, end - 1);
        if (nl >= from) cut = nl + 1;
      }
      if (q < 0) break;
      inQuotes = !inQuotes;
      from = q + 1;
    }
    return cut === 0 && b.length > MAX_RECORD ? last + 1 : cut;
  }
  if (last >= 0 || b.length < 2) return last + 1;
  // Lines that end with a lone \r (the byte after it is known, and not \n: there is none in b).
  return b.lastIndexOf(CR, b.length - 2) + 1;
}

/**
 * Cuts an input into chunks at row boundaries, numbering their lines: of
 * `size` to `2 * size` bytes where rows are shorter than `size`, whatever
 * pieces the input comes in.
 */
export class ChunkReader {
  private readonly input: AsyncIterator<Buffer>;
  private pending: Buffer = Buffer.alloc(0);
  private line = 1;
  private ended = false;
  /** Whether the input's first bytes are still to be checked for a byte order mark (dropped when there is one). */
  private atStart = true;

  constructor(
    input: Readable,
    private readonly csv: boolean,
    private readonly size = 65_536,
  ) {
    this.input = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** The next chunk, or null at the end. */
  async next(): Promise<Chunk | null> {
    for (;;) {
      if (!this.atStart && (this.ended || this.pending.length >= this.size)) {
        // The last row boundary within twice the size, else any (long rows).
        const window = this.pending.length > 2 * this.size ? cutPoint(this.pending.subarray(0, 2 * this.size), this.csv) : 0;
        const cut = window > 0 ? window : this.ended ? this.pending.length : cutPoint(this.pending, this.csv);
        if (cut > 0) {
          // A copy of its own: posted to a thread, a view would take the whole buffer it views.
          const bytes = Buffer.allocUnsafeSlow(cut);
          this.pending.copy(bytes, 0, 0, cut);
          this.pending = this.pending.subarray(cut);
          const chunk = { bytes, line: this.line, skip: 0 };
          this.line += lineBreaks(bytes);
          return chunk;
        }
        if (this.ended) return null;
      }
      const r = await this.input.next();
      if (r.done === true) this.ended = true;
      else {
        const data = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
        this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
      }
      if (this.atStart && (this.ended || this.pending.length >= 3)) {
        this.atStart = false;
        this.pending = this.pending.subarray(utf8BomLength(this.pending));
      }
    }
  }
}

/**
 * The address on a line of a plain list (`iprecord -`, `iprecord enrich`
 * on a list): the line less surrounding white space; null for a line that
 * is not a row (blank, or a `#` comment).
 */
export function listAddress(line: string): string | null {
  const ip = line.trim();
  return ip === '' || ip.charCodeAt(0) === 35 /* # */ ? null : ip;
}

/** Whether a text has an odd number of double quotes. */
function oddQuotes(text: string): boolean {
  let odd = false;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) odd = !odd;
  return odd;
}

/** The rows of a chunk (decoded as UTF-8), after its first `skip`. */
export function rowsOf(chunk: Chunk, format: EnrichFormat): Rows {
  const b = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.length);
  // ASCII (most logs) decodes faster as latin1, to the same text.
  const text = b.toString(isAscii(b) ? 'latin1' : 'utf8');
  const lines = text.split(/\r\n|\n|\r/);
  // A final line break ends the last line; it does not start another.
  if (lines[lines.length - 1] === '') lines.pop();
  const rows: Rows = { texts: [], lines: [], open: [] };
  let skip = chunk.skip;
  const push = (row: string, line: number, open: boolean) => {
    if (skip > 0) skip--;
    else {
      rows.texts.push(row);
      rows.lines.push(line);
      rows.open.push(open);
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const first = chunk.line + i;
    const line = lines[i];
    if (format === 'lines') {
      const ip = listAddress(line);
      if (ip !== null) push(ip, first, false);
      continue;
    }
    if (line.trim() === '') continue;
    if (format === 'ndjson') {
      push(line, first, false);
      continue;
    }
    let row = line;
    let open = false;
    while (oddQuotes(row)) {
      if (row.length > MAX_RECORD) break;
      if (i + 1 === lines.length) {
        open = true;
        break;
      }
      row += '\n' + lines[++i];
    }
    push(row, first, open);
  }
  return rows;
}
