import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkReader, rowsOf, type EnrichFormat } from '../../../src/cli/rows.js';
import { seed } from '../../helpers/env.js';

interface Row {
  text: string;
  line: number;
  open: boolean;
}

/** The reference: the input read line by line with readline (a byte order mark at its start dropped first), rows made line after line. */
async function byLines(bytes: Buffer, format: EnrichFormat): Promise<Row[]> {
  const rows: Row[] = [];
  const body = bytes.subarray(0, 3).equals(Buffer.from('\uFEFF')) ? bytes.subarray(3) : bytes;
  const it = createInterface({ input: Readable.from([body]), crlfDelay: Infinity })[Symbol.asyncIterator]();
  let n = 0;
  const next = async () => {
    const r = await it.next();
    if (r.done === true) return null;
    n++;
    return r.value;
  };
  for (let line = await next(); line !== null; line = await next()) {
    const first = n;
    if (format === 'lines') {
      if (line.trim() !== '' && !line.trim().startsWith('#')) rows.push({ text: line.trim(), line: first, open: false });
      continue;
    }
    if (line.trim() === '') continue;
    if (format === 'ndjson') {
      rows.push({ text: line, line: first, open: false });
      continue;
    }
    let text = line;
    let open = false;
    while ((text.split('"').length - 1) % 2 === 1) {
      const more = await next();
      if (more === null) {
        open = true;
        break;
      }
      text += '\n' + more;
    }
    rows.push({ text, line: first, open });
  }
  return rows;
}

/** The rows as enrich reads them: chunks of `size` bytes or more from a stream of `pieces`, each split on its own. */
async function byChunks(pieces: Buffer[], format: EnrichFormat, size: number): Promise<Row[]> {
  const reader = new ChunkReader(Readable.from(pieces), format === 'csv', size);
  const rows: Row[] = [];
  for (let chunk = await reader.next(); chunk !== null; chunk = await reader.next()) {
    const r = rowsOf(chunk, format);
    r.texts.forEach((text, i) => rows.push({ text, line: r.lines[i], open: r.open[i] }));
  }
  return rows;
}

/** Inputs built from the characters that matter: line breaks of every kind, quotes, commas, blanks, `#`, multi-byte text, byte order marks (first or anywhere). */
const input = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom('a', '8.8.8.8', ',', '"', '""', '\n', '\r', '\r\n', ' ', '#', 'é', '🇺🇸', '{"ip":"1.1.1.1"}', '\n\n', '\uFEFF'), { maxLength: 80 }))
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
      fc.asyncProperty(input, fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom<EnrichFormat>('csv', 'ndjson', 'lines'), fc.integer({ min: 1, max: 40 }), async (bytes, points, format, size) => {
        expect(await byChunks(cut(bytes, points), format, size)).toEqual(await byLines(bytes, format));
      }),
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
      r.texts.forEach((text, i) => got.push({ text, line: r.lines[i], open: r.open[i] }));
    }
    expect(chunks).toBeGreaterThanOrEqual(bytes.length / (2 * 16_384));
    expect(got).toEqual(await byLines(bytes, 'csv'));
    expect(got).toHaveLength(rows.length + 1);
  });
});
