import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteText } from '../../../src/record/bytes.js';
import { seed } from '../../helpers/env.js';

describe('byteText', () => {
  it('holds the UTF-8 bytes of any text, one per character, and is the text itself when ASCII', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 40 }),
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.string({ maxLength: 40 }),
        ),
        (text) => {
          const bytes = byteText(text);
          expect(Buffer.from(bytes, 'latin1').equals(Buffer.from(text, 'utf8'))).toBe(true);
          for (let i = 0; i < bytes.length; i++) expect(bytes.charCodeAt(i)).toBeLessThan(256);
          if (/^[\x00-\x7f]*$/.test(text)) expect(bytes).toBe(text);
        },
      ),
      { seed: seed(), numRuns: 2000 },
    );
  });
});
