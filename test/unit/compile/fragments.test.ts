import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountryTable } from '../../../src/country/facts.js';
import { countryPieces, locationPieces, networkPieces } from '../../../src/compile/fragments.js';
import type { Location, NetworkOwner } from '../../../src/compile/sources.js';
import { seed } from '../../helpers/env.js';

/** Any text: ASCII, text beyond the BMP, lone surrogates, control characters, quotes and backslashes. */
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u007f', 'é', '\u2028', 'a'), maxLength: 40 }),
);
const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const base = 'https://flagcdn.com/w320';
const countries = new CountryTable(base);
const coordinate = orNull(fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.integer({ min: -90, max: 90 })));
const location: fc.Arbitrary<Location> = fc.record({
  city: orNull(anyText),
  region: orNull(anyText),
  region_code: orNull(anyText),
  region_type: orNull(anyText),
  latitude: coordinate,
  longitude: coordinate,
  postal: orNull(anyText),
  country: orNull(fc.constantFrom('US', 'GB', 'DE', 'JP', 'BR', 'CI', 'RE', 'AQ', 'XK').map((cc) => countries.get(cc))),
  zone: orNull(fc.constantFrom('Europe/London', 'America/New_York')),
});

describe('the fragments of a record', () => {
  it("put together with the flag's base, are JSON.stringify's text of the record's keys from is_eu to emoji_unicode and of languages and currency", () => {
    fc.assert(
      fc.property(orNull(location), (g) => {
        const c = g?.country ?? null;
        const [head, middle, flag, after, facts] = countryPieces(c);
        const [place, point] = locationPieces(g);
        const text = head + place + middle + point + flag + (after === '' ? '' : base + after) + facts;
        const v = <T>(x: T | undefined) => x ?? null;
        const want = JSON.stringify({
          is_eu: v(c?.is_eu),
          city: v(g?.city),
          region: v(g?.region),
          region_code: v(g?.region_code),
          region_type: v(g?.region_type),
          country_name: v(c?.country_name),
          country_code: v(c?.country_code),
          continent_name: v(c?.continent_name),
          continent_code: v(c?.continent_code),
          latitude: v(g?.latitude),
          longitude: v(g?.longitude),
          postal: v(g?.postal),
          calling_code: v(c?.calling_code),
          flag: v(c?.flag),
          emoji_flag: v(c?.emoji_flag),
          emoji_unicode: v(c?.emoji_unicode),
          languages: v(c?.languages),
          currency: v(c?.currency),
        });
        expect('{' + text.slice(1) + '}').toBe(want);
      }),
      { seed: seed(), numRuns: 1000 },
    );
  });

  it('of a network owner, around its route, are the text of asn and carrier', () => {
    const owner: fc.Arbitrary<NetworkOwner> = fc.record({
      asn: fc.nat().map((n) => `AS${n}`),
      name: orNull(anyText),
      domain: orNull(anyText),
      type: fc.constantFrom('isp', 'hosting', 'business', 'education', 'government', 'inactive') as fc.Arbitrary<NetworkOwner['type']>,
      carrier: orNull(fc.record({ name: orNull(anyText), mcc: fc.constant('310'), mnc: fc.constant('004') })),
      flags: fc.constant(0),
    });
    fc.assert(
      fc.property(owner, fc.constantFrom('8.8.8.0/24', '2001:db8::/32'), (n, route) => {
        const [head, tail] = networkPieces(n);
        const want = { asn: { asn: n.asn, name: n.name, domain: n.domain, route, type: n.type }, ...(n.carrier === null ? {} : { carrier: n.carrier }) };
        expect('{' + (head + JSON.stringify(route) + tail).slice(1) + '}').toBe(JSON.stringify(want));
      }),
      { seed: seed(), numRuns: 500 },
    );
  });
});
