/**
 * `record/select.ts`: each path's reader and a compiled selection answer
 * what the whole record object (`lookup()`) holds at those paths, for
 * random addresses of both families and random lists of paths; a path the
 * record has not is refused with a typed error; `fieldSelection` answers
 * as `lookup(ip, { fields })`, `carrier` only where the range has one.
 */

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { distinctAddresses } from '../../../bench/mix.js';
import { InvalidFieldError } from '../../../src/contract/errors.js';
import { openSync } from '../../../src/engine/engine.js';
import { FIELD_NAMES } from '../../../src/record/fields.js';
import { compileSelection, fieldSelection, momentOf, pathReader } from '../../../src/record/select.js';
import { ALL_PATHS, at, readings } from '../../helpers/reading.js';
import { seed } from '../../helpers/env.js';

const engine = openSync();
const { read } = readings();
afterAll(() => engine.close());

const SEED = seed();
const addresses = [...distinctAddresses(600, SEED, 4), ...distinctAddresses(600, SEED + 1, 6)];

/** A record or value with the clock's moment left out (the reference reads its own clock). */
const timeless = (v: unknown) => JSON.parse(JSON.stringify(v ?? null, (k, x) => (k === 'current_time' ? undefined : x)));

describe('the readers of a record', () => {
  it("read each path as lookup()'s record holds it, for random addresses of both families", () => {
    const wrong: string[] = [];
    for (const ip of addresses) {
      const record = engine.lookup(ip, { count: '7' });
      const r = read(ip, -1)!;
      for (const path of ALL_PATHS) {
        if (path === 'time_zone.current_time') continue;
        const got = timeless(pathReader(path)(r));
        if (JSON.stringify(got) !== JSON.stringify(timeless(at(record, path)))) wrong.push(`${ip} ${path}: ${JSON.stringify(got)}`);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it('compile a list of paths (any order, repeats and blanks, as a list or as text) into one object of them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...addresses),
        fc.array(fc.constantFrom(...ALL_PATHS), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (ip, paths, asText) => {
          const record = engine.lookup(ip, { count: '7' });
          const got = compileSelection(asText ? ` ${paths.join(' , ')} ,` : paths)(read(ip, -1)!);
          const unique = [...new Set(paths)];
          expect(Object.keys(got)).toEqual(unique);
          for (const p of unique) if (p !== 'time_zone.current_time') expect(timeless(got[p])).toEqual(timeless(at(record, p)));
        },
      ),
    );
  });

  it('read the clock once a reading, only where a path needs it', () => {
    const r = read(addresses[0], -1)!;
    compileSelection(['country_code', 'asn.asn'])(r);
    expect(r.now).toBe(-1);
    const zoned = addresses.find((ip) => engine.lookup(ip).time_zone !== null)!;
    const z = read(zoned, -1)!;
    const first = compileSelection('time_zone.current_time')(z);
    expect(z.now).toBeGreaterThan(0);
    expect(momentOf(z)).toBe(z.now);
    expect(compileSelection('time_zone.current_time')(z)).toEqual(first);
  });

  it('answer fields as lookup(ip, { fields }) does, carrier only where the range has one', () => {
    fc.assert(
      fc.property(fc.constantFrom(...addresses), fc.uniqueArray(fc.constantFrom(...FIELD_NAMES), { minLength: 1 }), (ip, fields) => {
        const got = fieldSelection(fields)(read(ip, -1)!);
        const want = engine.lookup(ip, { count: '7', fields });
        expect(Object.keys(got)).toEqual(Object.keys(want));
        expect(timeless(got)).toEqual(timeless(want));
      }),
    );
    const list = ['ip', 'carrier'] as const;
    expect(fieldSelection(list)).toBe(fieldSelection(list));
  });

  it('refuse a path the record has not, and a selection of nothing, with a typed error', () => {
    for (const bad of ['nope', 'asn.nope', 'threat.scores.nope', 'country_code.x', 'currency.code.x', ''])
      expect(() => pathReader(bad), bad).toThrow(InvalidFieldError);
    for (const nothing of ['', ' , ', [] as string[], [' ']]) expect(() => compileSelection(nothing)).toThrow(InvalidFieldError);
    expect(() => compileSelection([7 as unknown as string])).toThrow(InvalidFieldError);
    expect(() => compileSelection(7 as unknown as string)).toThrow(InvalidFieldError);
  });
});
