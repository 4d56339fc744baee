import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRows, encodeRows, hasSubdivisions, jaroWinkler, matchRegion, subdivisionByCode } from '../../../src/country/regions.js';
import { coreRegion, normalizeRegion } from '../../../src/country/normalize.js';
import { seed } from '../../helpers/env.js';

const params = { seed: seed(), numRuns: 500 };

describe('region matching', () => {
  it('matches the names geo databases write', () => {
    const code = (cc: string, name: string) => matchRegion(cc, name)?.code ?? null;
    expect(code('US', 'California')).toBe('CA');
    expect(matchRegion('US', 'California')?.type).toBe('state');
    expect(code('UA', 'Kyiv City')).toBe('30');
    expect(code('DE', 'Bavaria')).toBe('BY');
    expect(code('DE', 'Bayern')).toBe('BY');
    expect(code('FR', 'Île-de-France')).toBe('IDF');
    expect(code('JP', 'Tokyo')).toBe('13');
    expect(code('CN', 'Anhui')).toBe('AH'); // ISO writes "Anhui Sheng"
    expect(code('CN', 'Xinjiang')).toBe('XJ'); // "Xinjiang Uygur Zizhiqu"
    expect(code('US', 'Atlantis')).toBeNull();
    expect(subdivisionByCode('CA', 'ON')?.type).toBe('province');
    expect(hasSubdivisions('US')).toBe(true);
    expect(hasSubdivisions('__proto__')).toBe(false);
  });

  it('answers the first-level subdivision, under its current code, for the names outside checks found wrong', () => {
    const of = (cc: string, name: string) => {
      const sub = matchRegion(cc, name);
      return sub === null ? null : `${sub.code} ${sub.type}`;
    };
    expect(of('MG', 'Analamanga')).toBe('T province'); // a region of the former province ISO lists
    expect(of('MK', 'Grad Skopje')).toBeNull(); // the city of ten municipalities ISO lists, not Gradsko
    expect(of('EE', 'Parnumaa')).toBe('68 county'); // the county, not Pärnu's municipality
    expect(of('LU', 'Grevenmacher')).toBe('GR canton'); // districts deleted in 2015
    expect(of('KZ', 'Almaty')).toBe('75 city');
    expect(of('KZ', 'Almaty Region')).toBe('19 region');
    expect(of('MC', 'Municipality of Monaco')).toBeNull(); // the whole city-state, not a quarter
    expect(of('ES', 'Barcelona')).toBe('CT autonomous community'); // a province: its community
    expect(of('ES', 'Madrid')).toBe('MD autonomous community');
    expect(of('FR', 'Rhone-Alpes')).toBe('ARA metropolitan region'); // before 2016
    expect(of('FR', 'New Aquitaine')).toBe('NAQ metropolitan region');
    expect(of('CN', 'Inner Mongolia')).toBe('NM autonomous region');
    expect(of('CN', 'Tibet')).toBe('XZ autonomous region');
    expect(of('CN', 'Beijing')).toBe('BJ municipality');
    expect(of('NO', 'Akershus')).toBe('30 county'); // a 2024 county, within Viken as ISO lists it
    expect(of('NP', 'Bagmati Province')).toBe('P3 province');
    expect(of('DE', 'Hesse')).toBe('HE state');
    expect(of('IR', 'Tehran')).toBe('23 province'); // renumbered: 07 is Fars now
    expect(of('RU', 'Moscow')).toBe('MOW autonomous city');
    expect(of('RU', 'Moscow Oblast')).toBe('MOS administrative region');
    expect(of('AR', 'Buenos Aires F.D.')).toBe('C city');
    expect(of('BH', 'Northern Governorate')).toBe('17 governorate'); // Ash Shamālīyah, not the Southern (14)
    expect(of('BH', 'Southern Governorate')).toBe('14 governorate');
    expect(of('MK', 'Centar')).toBe('814 municipality'); // ISO writes it "Centar †"; not Centar Župa (313)
    expect(of('MK', 'Centar Zupa')).toBe('313 municipality');
    expect(of('DO', 'Nacional')).toBe('40 region'); // the Distrito Nacional, in the Ozama region
    expect(of('IR', 'East Azerbaijan')).toBe('03 province');
    expect(of('BY', 'Homyel’ Voblasc’')).toBe('HO oblast');
    expect(of('SA', 'Al Jouf')).toBe('12 region');
    expect(of('VE', 'Estado La Guaira')).toBe('X state');
    expect(subdivisionByCode('LU', 'G')).toBeNull();
  });

  it('matches names written with letters no accent removal makes ASCII, and the cases the default data misses', () => {
    const of = (cc: string, name: string) => {
      const sub = matchRegion(cc, name);
      return sub === null ? null : `${sub.code} ${sub.type}`;
    };
    expect(of('NO', 'Trondelag')).toBe('50 county'); // ISO: Trøndelag
    expect(of('MT', 'Ix-Xghajra')).toBe('63 local council'); // ISO: Xgħajra
    expect(of('AZ', 'Xocali')).toBe('XCI rayon'); // ISO: Xocalı
    expect(of('BH', 'Manama')).toBe('13 governorate');
    expect(of('NI', 'North Caribbean Coast')).toBe('AN autonomous region');
    expect(of('YE', 'Sanaa Governorate')).toBe('SN governorate');
    expect(of('YE', 'Sanaa')).toBe('SA municipality');
    // ISO's first level in Uganda and Cape Verde is geographical regions grouping the districts and municipalities: those are answered.
    expect(of('UG', 'Kampala')).toBe('102 city');
    expect(of('CV', 'Praia')).toBe('PR municipality');
    expect(normalizeRegion('Şanʻā’ Łódź Þingvellir Qəbələ')).toBe('sana lodz thingvellir qebele');
  });

  it('normalises accents, case and generic words', () => {
    expect(normalizeRegion("Provence-Alpes-Côte d'Azur")).toBe('provence alpes cote dazur');
    expect(coreRegion('Kyiv City')).toBe('kyiv');
    expect(coreRegion('Oblast of Lviv')).toBe('lviv');
  });

  it('encodes and decodes a country line without loss', () => {
    const word = fc.stringMatching(/^[a-z0-9 ]{1,20}$/);
    const row = fc.tuple(
      fc.stringMatching(/^[A-Z0-9]{1,3}$/),
      fc.option(fc.stringMatching(/^[a-z ]{1,15}$/)),
      fc.array(word, { maxLength: 5 }),
    );
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 20 }), (rows) => {
        const flat = rows.map(([code, type, names]) => [code, type, ...names] as const);
        expect(decodeRows(encodeRows(flat))).toEqual(flat);
      }),
      params,
    );
    expect(() => encodeRows([['A', 'x;y']])).toThrow(/separator/);
  });
});

describe('Jaro-Winkler similarity', () => {
  it('gives the published values', () => {
    // Winkler (1990) examples.
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.9611, 4);
    expect(jaroWinkler('dwayne', 'duane')).toBeCloseTo(0.84, 2);
    expect(jaroWinkler('dixon', 'dicksonx')).toBeCloseTo(0.8133, 4);
  });

  it('is symmetric, within [0, 1], and 1 exactly for equal strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), (a, b) => {
        const s = jaroWinkler(a, b);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
        expect(jaroWinkler(b, a)).toBeCloseTo(s, 12);
        expect(jaroWinkler(a, a)).toBe(1);
      }),
      params,
    );
  });
});
