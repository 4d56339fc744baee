import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteText } from '../../../src/record/bytes.js';
import { ByteWriter } from '../../../src/text/writer.js';
import { csvField } from '../../../src/text/csv.js';
import { seed } from '../../helpers/env.js';

/** Any text: ASCII, text beyond the BMP, lone surrogates, control characters, quotes and backslashes. */
const anyText = fc.oneof(
  fc.string({ maxLength: 70 }),
  fc.string({ unit: 'grapheme', maxLength: 70 }),
  fc.string({ unit: 'binary', maxLength: 70 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u007f', 'é', '\u2028', 'a'), maxLength: 70 }),
);

/** One write and the bytes it stands for, made the obvious way. */
const step = fc.oneof(
  anyText.map((s) => ({ write: (w: ByteWriter) => w.text(s), bytes: Buffer.from(s, 'utf8') })),
  anyText.map((s) => ({ write: (w: ByteWriter) => w.jsonString(s), bytes: Buffer.from(JSON.stringify(s), 'utf8') })),
  anyText.map((s) => ({ write: (w: ByteWriter) => w.latin1(byteText(s)), bytes: Buffer.from(s, 'utf8') })),
  fc.uint8Array({ maxLength: 200 }).map((b) => ({ write: (w: ByteWriter) => w.bytes(b), bytes: Buffer.from(b) })),
  fc
    .integer({ min: 0, max: 999_999 })
    .map((n) => ({ write: (w: ByteWriter) => w.digits6(n), bytes: Buffer.from(String(n).padStart(6, '0')) })),
  fc.integer({ min: 0, max: 999 }).map((n) => ({ write: (w: ByteWriter) => w.small(n), bytes: Buffer.from(String(n)) })),
  fc.ipV4().map((ip) => ({
    write: (w: ByteWriter) => w.dottedQuad(ip.split('.').reduce((v, o) => v * 256 + Number(o), 0)),
    bytes: Buffer.from(ip),
  })),
  // A JSON value's text (with bytes around it) as a CSV cell: what csvField makes of the value.
  fc
    .tuple(
      fc.oneof(fc.jsonValue(), anyText, fc.constantFrom('a,b', 'a, "b"', ',', '', '\\')),
      fc.uint8Array({ maxLength: 3 }),
      fc.uint8Array({ maxLength: 3 }),
    )
    .map(([v, before, after]) => {
      const json = Buffer.concat([before, Buffer.from(JSON.stringify(v) ?? 'null', 'utf8'), after]);
      return {
        write: (w: ByteWriter) => w.csvJson(json, before.length, json.length - after.length),
        bytes: Buffer.from(csvField(JSON.parse(json.subarray(before.length, json.length - after.length).toString()) as unknown), 'utf8'),
      };
    }),
);

describe('ByteWriter', () => {
  it('writes what each piece is in UTF-8 (a JSON value as its CSV cell), in order, growing from any size, into a spare buffer too', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 300 }), fc.boolean(), (steps, capacity, spare) => {
        const w = new ByteWriter(capacity, spare ? new ArrayBuffer(capacity) : null);
        for (const s of steps) s.write(w);
        expect(Buffer.from(w.result()).equals(Buffer.concat(steps.map((s) => s.bytes)))).toBe(true);
      }),
      { seed: seed(), numRuns: 1000 },
    );
  });
});
