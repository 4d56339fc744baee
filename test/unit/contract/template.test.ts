import { PACKAGE_ZONES } from '../../../src/time/package-zones.js';
import { countries as COUNTRY_LIST } from 'countries-list';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountryTable } from '../../../src/country/facts.js';
import { Interner } from '../../../src/compile/intern.js';
import type { Location, NetworkOwner } from '../../../src/compile/sources.js';
import { CompiledDataset, internedSections } from '../../../src/compile/write.js';
import { Dataset, NO_ROUTE, THR, THREAT, TYPED_BY, ZONE_FROM } from '../../../src/dataset/format.js';
import { formatCidr, formatIp } from '../../../src/ip/format.js';
import { RecordObjects } from '../../../src/record/objects.js';
import type { RenderState } from '../../../src/record/render.js';
import {
  ASN_MEMBERS,
  CARRIER_MEMBERS,
  countryRuns,
  flagPath,
  RECORD_MEMBERS,
  RECORD_TEMPLATE,
  type RecordMember,
} from '../../../src/contract/template.js';
import { ByteWriter } from '../../../src/text/writer.js';
import { textWords } from '../../../src/text/words.js';
import { ZoneClock } from '../../../src/time/zone.js';
import type { IpRecord, Threat } from '../../../src/contract/types.js';
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
const flagBase = textWords([base]);
const CODES = ['US', 'GB', 'DE', 'JP', 'BR', 'CI', 'RE', 'AQ', 'XK', 'GR', 'CW'];
const coordinate = orNull(fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.integer({ min: -90, max: 90 })));
const location: fc.Arbitrary<Location> = fc.record({
  city: orNull(anyText),
  region: orNull(anyText),
  region_code: orNull(anyText),
  region_type: orNull(anyText),
  latitude: coordinate,
  longitude: coordinate,
  postal: orNull(anyText),
  country: orNull(fc.constantFrom(...CODES).map((cc) => countries.get(cc))),
  zone: orNull(fc.constantFrom('Europe/London', 'America/New_York', 'Asia/Kolkata')),
  zoneFrom: fc.constantFrom(...ZONE_FROM),
});
const owner: fc.Arbitrary<NetworkOwner> = fc.record({
  asn: fc.nat().map((n) => `AS${n}`),
  name: orNull(anyText),
  domain: orNull(anyText),
  type: fc.constantFrom('isp', 'hosting', 'business', 'education', 'government', 'inactive') as fc.Arbitrary<NetworkOwner['type']>,
  carrier: orNull(fc.record({ name: orNull(anyText), mcc: fc.constant('310'), mnc: fc.constant('004') })),
  flags: fc.constant(0),
  typedBy: fc.constantFrom(...TYPED_BY),
  share: orNull(fc.double({ min: 0, max: 1, noNaN: true })),
  places: fc.nat(),
});

/** The value of a member a country row gives. */
function countryValue(code: string | null, k: RecordMember): unknown {
  const c = code === null ? null : countries.get(code);
  return c === null ? null : k === 'flag' ? base + flagPath(c.country_code) : c[k as keyof typeof c];
}

/** The record's members whose values a country row gives, as JSON.stringify writes them, each run followed by the next member's key. */
function countryMembers(code: string | null): string {
  let text = '';
  RECORD_MEMBERS.forEach((k, i) => {
    if (RECORD_TEMPLATE[k] !== 'countries') return;
    text += `,${JSON.stringify(k)}:${JSON.stringify(countryValue(code, k))}`;
    const next = RECORD_MEMBERS[i + 1];
    if (next !== undefined && RECORD_TEMPLATE[next] !== 'countries') text += `,${JSON.stringify(next)}:`;
  });
  return text;
}

describe('the record template', () => {
  it("gives a country's members in runs (each up to the next member's value) that, with the flag's base between the third and fourth, are JSON.stringify's text of them", () => {
    for (const code of [...Object.keys(COUNTRY_LIST), null]) {
      const c = code === null ? null : countries.get(code);
      const runs = countryRuns((k) => JSON.stringify(c === null ? null : c[k as keyof typeof c]), code);
      expect(runs).toHaveLength(5);
      expect(runs[0] + runs[1] + runs[2] + (code === null ? '' : base) + runs[3] + runs[4], code ?? 'no country').toBe(
        countryMembers(code),
      );
    }
  });

  it('is followed by records as objects, as text and as bytes, for any values the compiler stores', () => {
    const clock = new ZoneClock(PACKAGE_ZONES);
    const cases = fc.array(fc.record({ g: orNull(location), n: orNull(owner), basic: fc.boolean() }), { minLength: 1, maxLength: 200 });
    fc.assert(
      fc.property(cases, (list) => {
        // One dataset with a range per case in each family: range i starts at 0.0.i.0 and at i::/16.
        const intern = new Interner();
        const refs = Uint32Array.from(list, ({ g, n }) => {
          const record = intern.record(intern.location(g), intern.network(n), intern.threat(null, 0, 0, n !== null));
          return ((record << 8) | (n === null ? NO_ROUTE : 24)) >>> 0;
        });
        const v4 = { starts: Uint32Array.from(list, (_, i) => i * 256), refs, length: list.length };
        const refs6 = refs.map((r) => ((r & 255) === NO_ROUTE ? r : (r & ~255) | 32));
        const v6 = {
          starts: new Uint32Array(list.length * 4).map((_, w) => (w % 4 === 0 ? (w >>> 2) << 16 : 0)),
          refs: refs6,
          length: list.length,
        };
        const ds = new Dataset(
          new CompiledDataset(v4, v6, internedSections(intern), {
            zones: intern.zones.list,
            timeZones: PACKAGE_ZONES,
            builtAt: '',
            key: '',
            sources: [],
          }).toBuffer(),
          'made',
        );
        ds.verify();
        const objects = new RecordObjects(ds);
        const out = new ByteWriter(16);
        list.forEach(({ g, n, basic }, i) => {
          for (const version of [4, 6] as const) {
            const words = version === 4 ? [0, 0, 0, i * 256 + 8] : [(i << 16) | 0x0db8, 1, 2, 3];
            const ip = formatIp(version, words);
            const ref = version === 4 ? ds.find4(words[3]) : ds.find6(words);
            const s: RenderState = {
              // IPv6 as given canonically (its text copied) and as not (written from the words), in turn.
              address: { text: ip, known: version === 4 || i % 2 === 0 ? ip : null },
              now: Date.UTC(2026, 0, 1) * 1000,
              count: '7',
              ownCount: true,
              basic,
              flagBase: flagBase.words,
              flagBaseEnd: flagBase.at[1],
            };
            const threat = JSON.parse(
              ds.json(ds.threats, ds.records[(ref >>> 8) * 3 + 2] * THREAT + (basic ? THR.basic : THR.object)),
            ) as Threat;
            const object = objects.record(clock, version, words, ref, s, threat, base);
            const text = objects.json(clock, version, words, ref, s);
            out.used = 0;
            objects.write(clock, version, words, ref, s, out);
            // The three outputs: one text.
            expect(text).toBe(JSON.stringify(object));
            expect(out.toString()).toBe(text);
            // In the template's order, with the values given to the compiler.
            expect(Object.keys(object)).toEqual(RECORD_MEMBERS.filter((k) => k !== 'carrier' || n?.carrier != null));
            const want: Partial<IpRecord> = {
              ip,
              city: g?.city ?? null,
              region: g?.region ?? null,
              region_code: g?.region_code ?? null,
              region_type: g?.region_type ?? null,
              latitude: g?.latitude == null ? null : g.latitude + 0,
              longitude: g?.longitude == null ? null : g.longitude + 0,
              postal: g?.postal ?? null,
              asn:
                n === null
                  ? null
                  : {
                      asn: n.asn,
                      name: n.name,
                      domain: n.domain,
                      route: formatCidr(version, words, version === 4 ? 24 : 32),
                      type: n.type,
                    },
              ...(n?.carrier == null ? {} : { carrier: n.carrier }),
              time_zone: g?.zone == null ? null : clock.timeZone(g.zone, s.now),
              threat,
              count: '7',
            };
            expect(object).toMatchObject(want);
            for (const k of RECORD_MEMBERS.filter((m) => RECORD_TEMPLATE[m] === 'countries'))
              expect(object[k], k).toEqual(countryValue(g?.country?.country_code ?? null, k));
            if (object.asn !== null) expect(Object.keys(object.asn)).toEqual(ASN_MEMBERS);
            if (object.carrier !== undefined) expect(Object.keys(object.carrier)).toEqual(CARRIER_MEMBERS);
          }
        });
      }),
      { seed: seed(), numRuns: 20 },
    );
  });
});
