/**
 * Country facts of the record, per ISO 3166-1 alpha-2 code, built once and
 * frozen: names and continent and calling code and languages from
 * `countries-list` but where `DECIDED` says otherwise, EU membership from
 * the EU's own list, currency names and symbols from CLDR (`Intl`, tabled
 * by `scripts/gen-currencies.ts`), the flag emoji from the code's regional
 * indicator symbols. `test/unit/country-facts.test.ts` checks every country
 * against world-countries, libphonenumber and MaxMind's test data.
 */

import { continents, countries, languages as LANGUAGES } from 'countries-list';
import CURRENCY_ROWS from './currencies.json';
import type { Currency, Language } from '../contract/types.js';

/**
 * The EU's 27 members by ISO 3166-1 code (https://european-union.europa.eu/principles-countries-history/eu-countries;
 * the EU writes Greece EL, ISO GR).
 */
const EU = new Set([
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
]);

const PAPIAMENTO: Language = { name: 'Papiamento', native: 'Papiamentu', code: 'pap' };

/**
 * Where `countries-list` is decided against: each value and why (the
 * test prints every disagreement with the references and fails on one not
 * decided here or in its own table).
 */
export const DECIDED: Readonly<
  Record<
    string,
    {
      readonly country_name?: string;
      readonly continent?: string;
      readonly calling_code?: string;
      readonly languages?: readonly (string | Language)[];
      readonly why: string;
    }
  >
> = {
  RU: { continent: 'EU', why: 'GeoNames, MaxMind and world-countries: Europe (countries-list: Asia)' },
  TL: {
    country_name: 'Timor-Leste',
    continent: 'AS',
    why: "UN M49 (CLDR's territory containment) and world-countries: South-eastern Asia (countries-list and GeoNames: Oceania); its name in ISO 3166-1, CLDR and world-countries (countries-list: East Timor)",
  },
  AX: { country_name: 'Åland Islands', why: "ISO 3166-1, CLDR and world-countries' name (countries-list: Aland)" },
  SH: {
    country_name: 'Saint Helena, Ascension and Tristan da Cunha',
    why: "ISO 3166-1 and world-countries: the code covers all three (countries-list: Saint Helena; CLDR's St. Helena is not this list's style of Saint)",
  },
  SJ: {
    calling_code: '47',
    why: "ITU and libphonenumber: Norway's +47 (79 is Svalbard's area code; countries-list and world-countries: 4779)",
  },
  IO: { continent: 'AF', why: 'UN M49 (CLDR) and world-countries: Eastern Africa (countries-list and GeoNames: Asia)' },
  CC: { continent: 'OC', why: 'UN M49 (CLDR) and world-countries: Australia and New Zealand (countries-list and GeoNames: Asia)' },
  CX: { continent: 'OC', why: 'UN M49 (CLDR) and world-countries: Australia and New Zealand (countries-list and GeoNames: Asia)' },
  MF: {
    languages: ['fr', 'en', 'nl'],
    why: "French, the collectivity's official language, first (countries-list: English first; world-countries: French alone)",
  },
  CW: {
    calling_code: '599',
    languages: ['nl', PAPIAMENTO, 'en'],
    why: 'ITU and libphonenumber: +599 (5999 is 599 and the area code 9); Papiamento is pap, not pa (Punjabi)',
  },
  AW: { languages: ['nl', PAPIAMENTO], why: 'Papiamento is pap (ISO 639-3; it has no 639-1 code), not pa (Punjabi)' },
  BQ: {
    country_name: 'Caribbean Netherlands',
    calling_code: '599',
    why: "ITU and libphonenumber: +599 (5997 is 599 and the area code 7); CLDR and world-countries' name for Bonaire, Sint Eustatius and Saba (countries-list: Bonaire, one of the three)",
  },
  DO: { calling_code: '1', why: 'three NANP area codes (809, 829, 849): the country code is 1 (libphonenumber, world-countries)' },
  PR: { calling_code: '1', why: 'two NANP area codes (787, 939): the country code is 1 (libphonenumber, world-countries)' },
  XK: { calling_code: '383', why: 'ITU assigned 383 to Kosovo in 2016 (countries-list lists the codes used before it: 377, 381, 386)' },
  VA: { calling_code: '39', why: "libphonenumber: Vatican numbers are Italy's +39 06 698; 379 is reserved and not in use" },
};

export interface CountryFacts {
  readonly country_code: string;
  readonly country_name: string;
  readonly continent_name: string;
  readonly continent_code: string;
  readonly is_eu: boolean;
  readonly calling_code: string | null;
  readonly flag: string;
  readonly emoji_flag: string;
  readonly emoji_unicode: string;
  readonly languages: readonly Language[];
  readonly currency: Currency | null;
}

type CountryRow = (typeof countries)[keyof typeof countries];
const COUNTRY_ROWS = countries as unknown as Record<string, CountryRow | undefined>;
const CONTINENTS = continents as unknown as Record<string, string>;
const CURRENCIES = CURRENCY_ROWS as unknown as Record<
  string,
  readonly [name: string, code: string, symbol: string, native: string, plural: string]
>;
const LANGUAGE_ROWS = LANGUAGES as unknown as Record<string, { name: string; native: string } | undefined>;

/** Country facts for one flag base URL; entries are built on first use. */
export class CountryTable {
  private readonly flagBase: string;
  private readonly cache = new Map<string, CountryFacts | null>();

  constructor(flagBase: string) {
    this.flagBase = flagBase.endsWith('/') ? flagBase.slice(0, -1) : flagBase;
  }

  /** Facts of a country code (upper case), or null for an unknown code. */
  get(cc: string): CountryFacts | null {
    let facts = this.cache.get(cc);
    if (facts === undefined) {
      facts = buildFacts(cc, this.flagBase);
      this.cache.set(cc, facts);
    }
    return facts;
  }
}

function buildFacts(cc: string, flagBase: string): CountryFacts | null {
  const row = COUNTRY_ROWS[cc];
  if (!row || !/^[A-Z]{2}$/.test(cc)) return null;
  const decided = Object.hasOwn(DECIDED, cc) ? DECIDED[cc] : undefined;
  const points = [...cc].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65);
  const langs = (decided?.languages ?? (row.languages as readonly string[])).map((code) => {
    if (typeof code !== 'string') return Object.freeze({ ...code });
    const l = LANGUAGE_ROWS[code];
    return Object.freeze({ name: l?.name ?? code, native: l?.native ?? code, code });
  });
  const continent = decided?.continent ?? row.continent;
  const phone = (row.phone as readonly number[])[0];
  return Object.freeze({
    country_code: cc,
    country_name: decided?.country_name ?? row.name,
    continent_name: CONTINENTS[continent] ?? continent,
    continent_code: continent,
    is_eu: EU.has(cc),
    calling_code: decided?.calling_code ?? (phone === undefined ? null : String(phone)),
    flag: `${flagBase}/${cc.toLowerCase()}.png`,
    emoji_flag: String.fromCodePoint(...points),
    emoji_unicode: points.map((p) => 'U+' + p.toString(16).toUpperCase()).join(' '),
    languages: Object.freeze(langs),
    currency: currencyOf(cc),
  });
}

/** The country's currency from the generated table, or null. */
function currencyOf(cc: string): Currency | null {
  const row = Object.hasOwn(CURRENCIES, cc) ? CURRENCIES[cc] : undefined;
  if (row === undefined) return null;
  const [name, code, symbol, native, plural] = row;
  return Object.freeze({ name, code, symbol, native, plural });
}
