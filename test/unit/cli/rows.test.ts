import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkReader, rowsOf, type EnrichFormat } from '../../../src/cli/rows.js';
import { seed } from '../../helpers/env.js';

interface Row {
  text: string;
  line: number;
  bad: string | null;
}

/**
 * How a CSV record read from `first` on ends, char by char (RFC 4180 quoting; a quote inside an unquoted field is a
 * character): 'done' at the end of the text, 'quoted' inside a quoted field, or the place after a closing quote
 * that is followed by something else.
 */
function csvState(text: string): 'done' | 'quoted' | number {
  let k = 0;
  for (;;) {
    if (text[k] === '"') {
      k++;
      for (;;) {
        const q = text.indexOf('"', k);
        if (q < 0) return 'quoted';
        k = q + 1;
        if (text[k] !== '"') break;
        k++;
      }
      if (k === text.length) return 'done';
      if (text[k] !== ',') return k;
      k++;
    } else {
      const comma = text.indexOf(',', k);
      if (comma < 0) return 'done';
      k = comma + 1;
    }
  }
}

/**
 * The reference: the input read line by line with readline (a byte order mark at its start dropped first), rows
 * made line after line. A CSV record goes on over the next lines while a quoted field is open; a quoted field that
 * never closes, or whose closing quote on a later line is followed by anything but a comma or the line's end, makes
 * its first line a row alone (open), and reading goes on at the next line.
 */
async function byLines(bytes: Buffer, format: EnrichFormat): Promise<Row[]> {
  const rows: Row[] = [];
  const body = bytes.subarray(0, 3).equals(Buffer.from('\uFEFF')) ? bytes.subarray(3) : bytes;
  const lines: string[] = [];
  for await (const line of createInterface({ input: Readable.from([body]), crlfDelay: Infinity })) lines.push(line);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (format === 'lines') {
      if (line.trim() !== '' && !line.trim().startsWith('#')) rows.push({ text: line.trim(), line: i + 1, bad: null });
      continue;
    }
    if (line.trim() === '') continue;
    if (format === 'ndjson') {
      rows.push({ text: line, line: i + 1, bad: null });
      continue;
    }
    let text = line;
    let j = i;
    for (;;) {
      const state = csvState(text);
      if (state === 'done' || (typeof state === 'number' && state <= line.length)) {
        rows.push({ text: j === i ? line : text, line: i + 1, bad: null });
        i = j;
        break;
      }
      if (state !== 'quoted' || j + 1 === lines.length) {
        rows.push({ text: line, line: i + 1, bad: 'a quoted field is not closed' });
        break;
      }
      text += '\n' + lines[++j];
    }
  }
  return rows;
}

/** The rows as enrich reads them: chunks of `size` bytes or more from a stream of `pieces`, each split on its own. */
async function byChunks(pieces: Buffer[], format: EnrichFormat, size: number): Promise<Row[]> {
  const reader = new ChunkReader(Readable.from(pieces), format === 'csv', size);
  const rows: Row[] = [];
  for (let chunk = await reader.next(); chunk !== null; chunk = await reader.next()) {
    const r = rowsOf(chunk, format);
    r.texts.forEach((text, i) => rows.push({ text, line: r.lines[i], bad: r.bad[i] }));
  }
  return rows;
}

/** Inputs built from the characters that matter: line breaks of every kind, quotes, commas, blanks, `#`, multi-byte text, byte order marks (first or anywhere). */
const input = fc
  .tuple(
    fc.boolean(),
    fc.array(
      fc.constantFrom('a', '8.8.8.8', ',', '"', '""', '\n', '\r', '\r\n', ' ', '#', 'é', '🇺🇸', '{"ip":"1.1.1.1"}', '\n\n', '\uFEFF'),
      { maxLength: 80 },
    ),
  )
  .map(([bom, parts]) => Buffer.from((bom ? '\uFEFF' : '') + parts.join(''), 'utf8'));

/** Cuts bytes into stream pieces at the given points (multi-byte characters may be cut). */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    if (p > from) pieces.push(bytes.subarray(from, p));
    from = Math.max(from, p);
  }
  return pieces;
}

describe('enrich input chunks', () => {
  it('give the rows and line numbers of reading line by line, however the input is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        input,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom<EnrichFormat>('csv', 'ndjson', 'lines'),
        fc.integer({ min: 1, max: 40 }),
        async (bytes, points, format, size) => {
          expect(await byChunks(cut(bytes, points), format, size)).toEqual(await byLines(bytes, format));
        },
      ),
      { seed: seed(), numRuns: 1500 },
    );
  });

  it('cut a large file into chunks of whole rows, quoted line breaks kept inside a row', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => (i % 7 === 0 ? `${i},"a\r\nquoted ""line""",8.8.8.8` : `${i},x,1.1.1.1`));
    const bytes = Buffer.from(['n,note,ip', ...rows].join('\r\n') + '\r\n');
    // Pieces much larger than a chunk: a chunk is still at most twice its size.
    const reader = new ChunkReader(Readable.from(cut(bytes, [70_000, 140_001, 600_000])), true, 16_384);
    let chunks = 0;
    const got: Row[] = [];
    for (let chunk = await reader.next(); chunk !== null; chunk = await reader.next()) {
      chunks++;
      expect(chunk.bytes.length).toBeLessThanOrEqual(2 * 16_384);
      const r = rowsOf(chunk, 'csv');
      r.texts.forEach((text, i) => got.push({ text, line: r.lines[i], bad: r.bad[i] }));
    }
    expect(chunks).toBeGreaterThanOrEqual(bytes.length / (2 * 16_384));
    expect(got).toEqual(await byLines(bytes, 'csv'));
    expect(got).toHaveLength(rows.length + 1);
  });
});
