/**
 * The types a lookup answers, checked by the compiler (`npm run
 * typecheck` reads the tests): `fields` known to the compiler narrow the
 * record to those members; names known only at run time give a partial
 * record; `scores` and `is_vpn`, left out by `basicThreat`, are optional.
 */

import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Engine, IpRecord, RecordOf, Threat } from '../../src/index.js';

describe('types', () => {
  it('narrow the record to the fields named', () => {
    expectTypeOf<RecordOf<undefined>>().toEqualTypeOf<IpRecord>();
    expectTypeOf<RecordOf<'ip,city'>>().toEqualTypeOf<Pick<IpRecord, 'ip' | 'city'>>();
    expectTypeOf<RecordOf<'ip, asn ,count'>>().toEqualTypeOf<Pick<IpRecord, 'ip' | 'asn' | 'count'>>();
    expectTypeOf<RecordOf<readonly ['ip', 'carrier']>>().toEqualTypeOf<Pick<IpRecord, 'ip' | 'carrier'>>();
    expectTypeOf<RecordOf<string>>().toEqualTypeOf<Partial<IpRecord>>();
    expectTypeOf<RecordOf<readonly string[]>>().toEqualTypeOf<Partial<IpRecord>>();
    // As the methods infer them.
    const answers = (e: Engine, names: string) => ({
      whole: e.lookup('8.8.8.8'),
      text: e.lookup('8.8.8.8', { fields: 'ip,country_code' }),
      list: e.lookup('8.8.8.8', { fields: ['ip', 'asn'] }),
      runtime: e.lookup('8.8.8.8', { fields: names }),
      tried: e.tryLookup('8.8.8.8', { fields: 'city' }),
      many: e.bulk(['8.8.8.8'], { fields: ['threat'] }),
    });
    type A = ReturnType<typeof answers>;
    expectTypeOf<A['whole']>().toEqualTypeOf<IpRecord>();
    expectTypeOf<A['text']>().toEqualTypeOf<Pick<IpRecord, 'ip' | 'country_code'>>();
    expectTypeOf<A['list']>().toEqualTypeOf<Pick<IpRecord, 'ip' | 'asn'>>();
    expectTypeOf<A['runtime']>().toEqualTypeOf<Partial<IpRecord>>();
    expectTypeOf<A['tried']>().toEqualTypeOf<
      Pick<IpRecord, 'city'> | { readonly message: string; readonly code: string; readonly status: number }
    >();
    expectTypeOf<A['many'][number]>().toEqualTypeOf<
      Pick<IpRecord, 'threat'> | { readonly message: string; readonly code: string; readonly status: number }
    >();
    expect(typeof answers).toBe('function');
  });

  it("give each selected path its value's type, null where an object on the way may be missing", () => {
    const chosen = (e: Engine) =>
      e.select(['country_code', 'asn.asn', 'threat.is_tor', 'threat.scores.trust_score', 'carrier', 'latitude'])('8.8.8.8');
    expectTypeOf<ReturnType<typeof chosen>>().toEqualTypeOf<{
      country_code: string | null;
      'asn.asn': string | null;
      'threat.is_tor': boolean;
      'threat.scores.trust_score': number | null;
      carrier: { readonly name: string | null; readonly mcc: string; readonly mnc: string } | null;
      latitude: number | null;
    }>();
    expect(typeof chosen).toBe('function');
  });

  it('mark what basicThreat leaves out as optional', () => {
    expectTypeOf<Threat['scores']>().toEqualTypeOf<
      { readonly vpn_score: number; readonly proxy_score: number; readonly threat_score: number; readonly trust_score: number } | undefined
    >();
    expectTypeOf<Threat['is_vpn']>().toEqualTypeOf<boolean | undefined>();
  });
});
