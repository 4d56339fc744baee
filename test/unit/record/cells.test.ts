/**
 * `record/cells.ts`: the CSV cells `iprecord enrich` writes, each from the
 * dataset's bytes where it holds the value's text, are what `csvField`
 * makes of the value the path's reader reads (`select.ts`), for random
 * addresses of both families and random lists of paths (a path twice is
 * two cells); a path the record has not is refused with a typed error.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctAddresses } from '../../../bench/mix.js';
import { InvalidFieldError } from '../../../src/contract/errors.js';
import { compileCells } from '../../../src/record/cells.js';
import { pathReader } from '../../../src/record/select.js';
import { csvField } from '../../../src/text/csv.js';
import { ByteWriter } from '../../../src/text/writer.js';
import { ALL_PATHS, readings } from '../../helpers/reading.js';
import { seed } from '../../helpers/env.js';

const { read } = readings();
const SEED = seed();
const addresses = [...distinctAddresses(800, SEED + 2, 4), ...distinctAddresses(800, SEED + 3, 6)];

/** The cells of `paths` as compileCells writes them, and as csvField makes them of the values read (one reading: one moment). */
function both(ip: string, paths: readonly string[]): [string, string] {
  const r = read(ip, -1)!;
  const out = new ByteWriter(64);
  compileCells(paths)(r, out);
  const got = out.toString();
  return [got, paths.map((p) => ',' + csvField(pathReader(p.trim())(r))).join('')];
}

describe('the CSV cells of a record', () => {
  it('are csvField of each value read, every path, for random addresses of both families', () => {
    const wrong: string[] = [];
    for (const ip of addresses) {
      const [got, want] = both(ip, ALL_PATHS);
      if (got !== want) wrong.push(`${ip}: ${got} against ${want}`);
    }
    expect(wrong.slice(0, 3)).toEqual([]);
  });

  it('are written in the order given, a path twice two cells, spaces around a path trimmed', () => {
    fc.assert(
      fc.property(fc.constantFrom(...addresses), fc.array(fc.constantFrom(...ALL_PATHS), { minLength: 1, maxLength: 10 }), (ip, paths) => {
        const [got, want] = both(ip, paths);
        expect(got).toBe(want);
        const [spaced, trimmed] = both(
          ip,
          paths.map((p) => ` ${p} `),
        );
        expect(spaced).toBe(trimmed);
      }),
    );
  });

  it('refuse a path the record has not, naming it', () => {
    for (const bad of ['nope', 'asn.nope', 'threat.scores.nope']) expect(() => compileCells(['ip', bad])).toThrow(InvalidFieldError);
  });
});
