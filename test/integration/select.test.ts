import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distinctAddresses, logMix } from '../../bench/mix.js';
import { InvalidFieldError, open, openSync, type Engine, type IpRecord } from '../../src/index.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { SMALL } from '../helpers/maxmind.js';
import { seed } from '../helpers/env.js';

let engine: Engine;
let isp: Engine;
beforeAll(async () => {
  engine = await open();
  // Mobile networks: `carrier`.
  isp = openSync({ geo: SMALL.geo, asn: join(FIXTURES_DIR, 'test-data', 'GeoIP2-ISP-Fixture.mmdb') });
});
afterAll(() => {
  engine.close();
  isp.close();
});

/** Every path a selection may name: each member, and each member of the members that are objects, as a full record has them. */
function pathsOf(record: IpRecord): string[] {
  const out: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    out.push(prefix);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(`${prefix}.${k}`, x);
  };
  for (const [k, v] of Object.entries(record)) walk(k, v);
  return out;
}

/** The value at a path of a record (the reference): null where the record or an object on the way has none. */
function at(record: IpRecord, path: string): unknown {
  let v: unknown = record;
  for (const k of path.split('.')) v = (v as Record<string, unknown> | null | undefined)?.[k];
  return v ?? null;
}

/** Paths whose value moves from one call to the next: the clock and the count. */
const moving = (path: string) => path === 'count' || path === 'time_zone' || path === 'time_zone.current_time';

describe('select()', () => {
  const all = () => pathsOf(isp.lookup('149.101.100.1'));

  it('answers each chosen path as the full record has it, over the default data and mobile networks, in the order chosen', () => {
    const paths = all();
    expect(paths).toContain('carrier.mcc');
    expect(paths).toContain('threat.scores.trust_score');
    const addresses = [...distinctAddresses(3000, 7), ...logMix(2000, 8)];
    fc.assert(
      fc.property(
        fc.subarray(paths, { minLength: 1 }),
        fc.oneof(fc.constantFrom(...addresses), fc.constantFrom('149.101.100.1', '31.13.64.7', '::ffff:8.8.8.8', '2001:4860::1')),
        fc.boolean(),
        (chosen, ip, basic) => {
          for (const e of [engine, isp]) {
            const options = { basicThreat: basic };
            const pick = e.select(chosen, options);
            const want = e.tryLookup(ip, options);
            const got = pick.try(ip);
            if ('code' in want) {
              expect(got).toEqual(want);
              continue;
            }
            expect(Object.keys(got)).toEqual(chosen);
            for (const p of chosen) if (!moving(p)) expect([p, (got as Record<string, unknown>)[p]]).toEqual([p, at(want as IpRecord, p)]);
            if (chosen.includes('time_zone.name')) expect(got['time_zone.name' as keyof typeof got]).toBe(want.time_zone?.name ?? null);
          }
        },
      ),
      { seed: seed(), numRuns: 400 },
    );
  });

  it('throws as lookup() does, and try() answers the error as a value', () => {
    const pick = engine.select('country_code, asn.asn,threat.is_tor');
    expect(pick('8.8.8.8')).toEqual({ country_code: 'US', 'asn.asn': 'AS15169', 'threat.is_tor': false });
    for (const ip of ['10.0.0.1', '240.0.0.1', 'nope']) {
      let thrown: unknown;
      try {
        engine.lookup(ip);
      } catch (e) {
        thrown = e;
      }
      expect(() => pick(ip)).toThrow((thrown as Error).message);
      expect(pick.try(ip)).toEqual(engine.tryLookup(ip));
    }
  });

  it('refuses a path the record has not, when compiled', () => {
    for (const bad of ['asn.nope', 'nope', 'threat.scores.x', 'languages.name', 'city.x', '', ' , '])
      expect(() => engine.select(bad)).toThrow(InvalidFieldError);
    expect(() => engine.select(['country_code', 'asn.asn.x'])).toThrow(/asn\.asn\.x is not a valid field/);
  });

  it("answers the engine's count, and the count given", () => {
    const pick = engine.select(['count']);
    // The count is of the minutes before: the same within one (read again when a minute ended between the two).
    const same = () => pick('1.1.1.1').count === engine.lookup('1.1.1.1').count;
    expect(same() || same()).toBe(true);
    expect(engine.select('count', { count: '7' })('1.1.1.1')).toEqual({ count: '7' });
  });
});
