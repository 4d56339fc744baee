import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capped, MAX_TEXT_BYTES, text } from '../../../../src/compile/geo/adapters/values.js';
import { seed } from '../../../helpers/env.js';

describe('source strings capped', () => {
  it('keep the longest prefix of whole characters within MAX_TEXT_BYTES of UTF-8, and a short string as it is', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 200 }),
          fc.string({ maxLength: 400 }),
          fc.string({ unit: 'binary', maxLength: 300 }),
        ),
        (s) => {
          const c = capped(s);
          expect(s.startsWith(c)).toBe(true);
          expect(Buffer.byteLength(c)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
          if (Buffer.byteLength(s) <= MAX_TEXT_BYTES) expect(c).toBe(s);
          // The next code point would not fit.
          else
            expect(Buffer.byteLength(s.slice(0, c.length + (s.codePointAt(c.length)! > 0xffff ? 2 : 1)))).toBeGreaterThan(MAX_TEXT_BYTES);
        },
      ),
      { seed: seed(), numRuns: 5000 },
    );
    expect(text('x'.repeat(10_000_000))).toHaveLength(MAX_TEXT_BYTES);
  });
});
