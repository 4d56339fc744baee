import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countries } from 'countries-list';
import CONTAINMENT from 'cldr-core/supplemental/territoryContainment.json';
import { isEuMember } from 'is-eu-member';
import { getCountryCallingCode, isSupportedCountry, type CountryCode } from 'libphonenumber-js';
import { describe, expect, it } from 'vitest';
import WORLD from 'world-countries';
import { currencyOf } from '../../../scripts/currency.js';
import CURRENCIES from '../../../src/country/currencies.json';
import { CountryTable, DECIDED } from '../../../src/country/facts.js';
import { hasSharedData, SHARED_DATA } from '../../helpers/env.js';

const CODES = Object.keys(countries);
const table = new CountryTable('https://flags.example/w320/');

/** Whether this Node carries full ICU locale data (not small-icu). */
const fullIcu = new Intl.NumberFormat('ar-EG', { style: 'currency', currency: 'EGP' }).resolvedOptions().locale.startsWith('ar');

describe('country facts', () => {
  it('covers every ISO 3166-1 country of countries-list', () => {
    expect(CODES.length).toBeGreaterThanOrEqual(249);
    for (const cc of CODES) {
      const f = table.get(cc)!;
      expect(f.country_code).toBe(cc);
      expect(f.country_name.length).toBeGreaterThan(0);
      expect(f.continent_code).toMatch(/^(AF|AN|AS|EU|NA|OC|SA)$/);
      expect(f.flag).toBe(`https://flags.example/w320/${cc.toLowerCase()}.png`);
      // Two regional indicator symbols, and their code points spelt out.
      const points = [...f.emoji_flag].map((c) => c.codePointAt(0)!);
      expect(points).toEqual([...cc].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
      expect(f.emoji_unicode).toBe(points.map((p) => `U+${p.toString(16).toUpperCase()}`).join(' '));
      if (f.calling_code !== null) expect(f.calling_code).toMatch(/^\d{1,4}$/);
      for (const l of f.languages) expect(Object.keys(l)).toEqual(['name', 'native', 'code']);
      if (f.currency !== null) expect(Object.keys(f.currency)).toEqual(['name', 'code', 'symbol', 'native', 'plural']);
      expect(Object.isFrozen(f)).toBe(true);
    }
  });

  it('answers known countries', () => {
    expect(table.get('DE')).toMatchObject({ country_name: 'Germany', continent_name: 'Europe', is_eu: true, calling_code: '49' });
    expect(table.get('GB')).toMatchObject({ is_eu: false, calling_code: '44', emoji_flag: '🇬🇧' });
    expect(table.get('US')).toMatchObject({ continent_code: 'NA', calling_code: '1', emoji_unicode: 'U+1F1FA U+1F1F8' });
    expect(table.get('US')!.currency).toEqual({ name: 'US Dollar', code: 'USD', symbol: '$', native: '$', plural: 'US dollars' });
    expect(table.get('XK')!.calling_code).toBe('383'); // Kosovo: its own code, not Serbia's 381
    expect(table.get('EG')!.languages[0]).toEqual({ name: 'Arabic', native: 'العربية', code: 'ar' });
    expect(table.get('ZZ')).toBeNull();
    expect(table.get('us')).toBeNull();
  });

  it("has the service's currency facts: its published samples, and Common-Currency's symbols", () => {
    // CONTRACT.md's samples (US, Egypt), and the symbols the service answers for the Australian dollar, the leu and the hryvnia.
    expect(table.get('US')!.currency).toEqual({ name: 'US Dollar', code: 'USD', symbol: '$', native: '$', plural: 'US dollars' });
    expect(table.get('EG')!.currency).toEqual({
      name: 'Egyptian Pound',
      code: 'EGP',
      symbol: 'E£',
      native: 'ج.م.\u200f',
      plural: 'Egyptian pounds',
    });
    expect(table.get('AU')!.currency!.symbol).toBe('AU$');
    expect(table.get('RO')!.currency!.symbol).toBe('RON');
    expect(table.get('UA')!.currency!.symbol).toBe('₴');
    // Every dollar but the US one says whose it is.
    for (const cc of CODES) {
      const c = table.get(cc)!.currency;
      if (c !== null && c.code !== 'USD' && c.plural.endsWith('dollars')) expect(c.symbol, c.code).not.toBe('$');
    }
  });

  it.skipIf(!fullIcu)('has the currencies that scripts/currency.ts gives on this runtime (scripts/gen-currencies.ts)', () => {
    const tabled = CURRENCIES as Record<string, string[]>;
    for (const cc of CODES) {
      const live = currencyOf(cc);
      const row = tabled[cc];
      expect(row === undefined ? null : { name: row[0], code: row[1], symbol: row[2], native: row[3], plural: row[4] }, cc).toEqual(live);
    }
  });
});

/** world-countries' region as a continent code (the Americas split at South America). */
const continentOf = (c: (typeof WORLD)[number]): string =>
  c.region === 'Americas'
    ? c.subregion === 'South America'
      ? 'SA'
      : 'NA'
    : ({ Europe: 'EU', Asia: 'AS', Africa: 'AF', Oceania: 'OC', Antarctic: 'AN' } as Record<string, string>)[c.region];

/**
 * CLDR's territory containment (UN M49) as a continent code per country: the continent whose regions hold it, the
 * Americas split at South America; of CLDR's Outlying Oceania, Antarctica alone (as Antarctica).
 */
const M49 = (() => {
  const contains = (CONTAINMENT as { supplemental: { territoryContainment: Record<string, { _contains?: string[] }> } }).supplemental
    .territoryContainment;
  const out = new Map<string, string>();
  const walk = (region: string, continent: string) => {
    for (const r of contains[region]?._contains ?? []) {
      // Outlying Oceania: Antarctica, and CLDR's own codes for places M49 files elsewhere (Ascension, Tristan da Cunha, Diego Garcia, Clipperton).
      if (r === 'QO') out.set('AQ', 'AN');
      else if (contains[r] !== undefined) walk(r, continent);
      else out.set(r, continent);
    }
  };
  for (const [region, continent] of Object.entries({
    '002': 'AF',
    '142': 'AS',
    '150': 'EU',
    '009': 'OC',
    '005': 'SA',
    '013': 'NA',
    '021': 'NA',
    '029': 'NA',
  }))
    walk(region, continent);
  return out;
})();

/** CLDR's English names of regions (Node's ICU). */
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });
/** A name without its diacritics, `&` as `and`. */
const fold = (name: string) =>
  name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ & /g, ' and ');

/** Where the references disagree with what iprecord answers and iprecord keeps its source's value: the value kept, and why. */
const KEPT: Record<string, string> = {
  'CD country_name': "the UN's and ISO 3166-1's Democratic Republic of the Congo (world-countries: DR Congo; CLDR: Congo - Kinshasa)",
  'CV country_name': "Cabo Verde, the country's name in ISO 3166-1 and at the UN since 2013 (both references: Cape Verde)",
  'GS country_name': 'ISO 3166-1 (world-countries: South Georgia; CLDR spells and with &)',
  'MO country_name': 'ISO 3166-1 and the UN: Macao (world-countries: Macau; CLDR: Macao SAR China)',
  'UM country_name': 'GeoNames and MaxMind: U.S. Minor Outlying Islands (world-countries spells United States, CLDR leaves out Minor)',
  'UM calling_code': '1: no permanent population, US numbering (libphonenumber has no entry; world-countries: 268)',
  // countries-list lists languages spoken in the country, world-countries its official ones.
  ...Object.fromEntries(
    ['AF', 'AM', 'BF', 'CD', 'CY', 'ES', 'FJ', 'GN', 'IQ', 'PH'].map((cc) => [
      `${cc} languages`,
      'spoken there, not official (world-countries lists official languages)',
    ]),
  ),
  'AT languages': 'German (world-countries codes the local variety, bar)',
  'CH languages': 'German (world-countries codes the local variety, gsw)',
  'NO languages': 'Norwegian: no is the macrolanguage of nb and nn',
  'BV languages': 'Norwegian Bokmål and Nynorsk: world-countries gives the macrolanguage, no',
  'ME languages': "Montenegrin is world-countries' cnr (sr-ME); Serbian, Bosnian, Albanian and Croatian are spoken there",
};

describe('country facts against outside references', () => {
  const kept = new Set<string>();
  /** Checks one fact of one country against references that disagree with it; returns the lines it prints. */
  const disagreements: string[] = [];
  const check = (cc: string, fact: string, ours: unknown, refs: Record<string, unknown>) => {
    const given = Object.entries(refs).filter(([, v]) => v !== undefined);
    const differing = given.filter(([, v]) => v !== ours);
    if (differing.length === 0) return;
    // A reference that agrees carries it: printed, not to be decided.
    if (differing.length < given.length) {
      disagreements.push(
        `${cc} ${fact}: iprecord ${JSON.stringify(ours)} as ${given
          .filter(([, v]) => v === ours)
          .map(([n]) => n)
          .join(', ')}; ${differing.map(([n, v]) => `${n} ${JSON.stringify(v)}`).join(', ')}`,
      );
      return;
    }
    const key = `${cc} ${fact}`;
    const decided = DECIDED[cc] !== undefined && (DECIDED[cc] as Record<string, unknown>)[fact] !== undefined;
    disagreements.push(
      `${key}: iprecord ${JSON.stringify(ours)}, ${differing.map(([n, v]) => `${n} ${JSON.stringify(v)}`).join(', ')}: ${decided ? `decided (${DECIDED[cc].why})` : (KEPT[key] ?? 'NOT DECIDED')}`,
    );
    if (!decided) kept.add(key);
  };

  it('every country: continent, calling code, languages and EU membership, each disagreement decided', () => {
    const world = new Map(WORLD.map((c) => [c.cca2, c]));
    for (const cc of CODES) {
      const f = table.get(cc)!;
      const w = world.get(cc);
      check(cc, 'continent', f.continent_code, { 'world-countries': w && continentOf(w), 'UN M49 (CLDR)': M49.get(cc) });
      const idd = w && w.idd.suffixes.length === 1 ? (w.idd.root + w.idd.suffixes[0]).slice(1) : w?.idd.root.slice(1);
      const phone = isSupportedCountry(cc) ? getCountryCallingCode(cc as CountryCode) : undefined;
      // NANP countries: libphonenumber gives 1, the country lists 1 and the area code; they are decided only where the lists also disagree.
      check(cc, 'calling_code', f.calling_code, {
        'world-countries': idd || undefined,
        libphonenumber: phone === '1' && idd !== '1' ? undefined : phone,
      });
      // Each language iprecord lists is one the country's people speak (world-countries' ISO 639-3 codes, made canonical by Intl).
      const spoken = new Set(Object.keys(w?.languages ?? {}).flatMap((c) => Intl.getCanonicalLocales(c)));
      if (w !== undefined && spoken.size > 0)
        for (const l of f.languages)
          check(cc, 'languages', l.code, { 'world-countries': spoken.has(l.code) ? undefined : [...spoken].join(',') });
      // The name, in this list's style (`and`, `Saint`; diacritics folded as countries-list folds them) or a reference's.
      check(cc, 'country_name', fold(f.country_name), { 'world-countries': w && fold(w.name.common), CLDR: fold(REGION_NAMES.of(cc)!) });
      // The EU's list: is-eu-member keys Greece by the EU's EL.
      check(cc, 'is_eu', f.is_eu, { 'is-eu-member': isEuMember(cc === 'GR' ? 'EL' : cc) });
    }
    console.log(
      `country facts: ${CODES.length} countries, ${disagreements.length} disagreements with world-countries, libphonenumber and is-eu-member:\n${disagreements.join('\n')}`,
    );
    expect([...kept].filter((k) => KEPT[k] === undefined)).toEqual([]);
    // A name kept against CLDR may agree with a later ICU's (Node's own, or a system's): not stale then.
    expect(Object.keys(KEPT).filter((k) => !kept.has(k) && !k.endsWith(' country_name'))).toEqual([]);
    expect(table.get('GR')!.is_eu).toBe(true);
    expect(table.get('RU')).toMatchObject({ continent_code: 'EU', continent_name: 'Europe' });
    expect(table.get('CW')).toMatchObject({ calling_code: '599' });
    expect(table.get('CW')!.languages.map((l) => l.code)).toEqual(['nl', 'pap', 'en']);
    expect([table.get('TL')!.continent_name, table.get('IO')!.continent_name, table.get('CC')!.continent_name]).toEqual([
      'Asia',
      'Africa',
      'Oceania',
    ]);
    expect(table.get('MF')!.languages[0].code).toBe('fr');
    expect(table.get('SJ')!.calling_code).toBe('47');
    expect(['TL', 'BQ', 'AX', 'SH'].map((cc) => table.get(cc)!.country_name)).toEqual([
      'Timor-Leste',
      'Caribbean Netherlands',
      'Åland Islands',
      'Saint Helena, Ascension and Tristan da Cunha',
    ]);
  });

  it.skipIf(!hasSharedData())("every country in MaxMind's test data (GeoNames continents) has its continent", () => {
    const dir = join(SHARED_DATA, 'maxmind-test', 'source-data');
    const seen = new Map<string, string>();
    for (const file of ['GeoIP2-City-Test.json', 'GeoIP2-Country-Test.json', 'GeoLite2-City-Test.json', 'GeoIP2-Enterprise-Test.json']) {
      for (const entry of JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<
        string,
        { continent?: { code: string }; country?: { iso_code?: string } }
      >[]) {
        for (const v of Object.values(entry))
          if (v?.continent !== undefined && v.country?.iso_code !== undefined) seen.set(v.country.iso_code, v.continent.code);
      }
    }
    const wrong = [...seen].filter(([cc, continent]) => table.get(cc)?.continent_code !== continent);
    console.log(`country facts: ${seen.size} countries in MaxMind's test data, ${wrong.length} with another continent`);
    expect(seen.size).toBeGreaterThan(40);
    expect(wrong).toEqual([]);
  });
});
