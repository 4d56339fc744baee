import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextPool } from '../../../src/compile/intern.js';
import { ESCAPED, NO_STRING } from '../../../src/dataset/layout.js';
import { DatasetText } from '../../../src/dataset/text.js';
import { seed } from '../../helpers/env.js';
import { equal, same } from '../../helpers/check.js';

/** The text a pool wrote, as a dataset reads it. */
function read(pool: TextPool): DatasetText {
  const other = pool.other.join('');
  return new DatasetText(Buffer.from(pool.ascii.join(''), 'latin1'), Buffer.from(other, 'utf8'), other.length, 'test');
}

describe('the text of a dataset', () => {
  it('gives back every value as its JSON text, each stored once, across chunks and in both parts', () => {
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('Zürich', 'Київ', '"quoted"\\', 'tab\there'),
      fc.double({ noNaN: true }),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.nat(200_000), fc.array(value, { minLength: 1, maxLength: 200 }), (filler, values) => {
        const pool = new TextPool();
        // Values before the ones checked, so that these fall anywhere in a 64 KiB chunk, some across two.
        const fillers = Array.from({ length: Math.ceil(filler / 12) }, (_, i) => `filler ${i}`);
        const fillerSlices = fillers.map((f) => pool.slice(f));
        const slices = values.map((v) => pool.slice(v));
        const text = read(pool);
        fillers.forEach((f, i) => same(text.slice(...fillerSlices[i]), `"${f}"`));
        values.forEach((v, i) => {
          const [start, end] = slices[i];
          // null, and numbers JSON writes as null (Infinity): no text.
          if (v === null || (typeof v === 'number' && !Number.isFinite(v))) return same(start, NO_STRING);
          const json = JSON.stringify(typeof v === 'number' ? v + 0 : v);
          same(text.slice(start, (end & ~ESCAPED) >>> 0), json);
          // A string with no escapes is its JSON text less the quotes; ESCAPED tells which are not.
          if (typeof v === 'string') same(end >= ESCAPED, json !== `"${v}"`, json);
          equal(pool.slice(v), slices[i]);
        });
      }),
      { seed: seed(), numRuns: 25 },
    );
  });

  it("refuses a second part whose length is not the header's", () => {
    const pool = new TextPool();
    pool.slice('Zürich');
    const other = Buffer.from(pool.other.join(''), 'utf8');
    expect(() => new DatasetText(Buffer.alloc(0), other, 99, 'bad').verify()).toThrow(/its text is 8 code units long, its header says 99/);
  });
});
