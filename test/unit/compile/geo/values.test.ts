import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coordinate, shortestByText, shortestFloat32 } from '../../../../src/compile/geo/adapters/values.js';
import { seed } from '../../../helpers/env.js';

describe('shortestFloat32', () => {
  it('is the shortest decimal by text (toPrecision), for any float32', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.float({ noNaN: true }),
          fc.float({ min: -180, max: 180, noNaN: true }),
          fc.integer({ min: -1_800_000, max: 1_800_000 }).map((n) => Math.fround(n / 10_000)),
        ),
        (n) => {
          expect(Object.is(shortestFloat32(n), shortestByText(n))).toBe(true);
          // It reads back as the same float (-0 as 0, as its text "0" does).
          expect(Math.fround(shortestFloat32(n)) === n).toBe(true);
        },
      ),
      { seed: seed(), numRuns: 20_000 },
    );
  });

  it('gives coordinates as they were written', () => {
    expect(coordinate(Math.fround(37.422))).toBe(37.422);
    expect(coordinate(Math.fround(-122.084))).toBe(-122.084);
    expect(coordinate(Math.fround(52.0589))).toBe(52.0589);
    expect(coordinate(Math.fround(100))).toBe(100);
    // A double that is not a float32 is kept as it is.
    expect(coordinate(37.4220001)).toBe(37.4220001);
    expect(coordinate('37')).toBeNull();
  });
});
