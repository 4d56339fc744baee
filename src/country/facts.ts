/**
 * Country facts of the record, per ISO 3166-1 alpha-2 code, built once and
 * frozen: names and continent and calling code and languages from
 * `countries-list`, EU membership from `is-eu-member`, currency names and
 * symbols from CLDR (`Intl`, tabled by `scripts/gen-currencies.ts`), the
 * flag emoji from the code's regional indicator symbols.
 */

import { continents, countries, languages as LANGUAGES } from 'countries-list';
import { isEuMember } from 'is-eu-member';
import CURRENCY_ROWS from './currencies.json';

export interface Language {
  readonly name: string;
  readonly native: string;
  readonly code: string;
}

export interface Currency {
  readonly name: string;
  readonly code: string;
  readonly symbol: string;
  readonly native: string;
  readonly plural: string;
}

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
const CURRENCIES = CURRENCY_ROWS as unknown as Record<string, readonly [name: string, code: string, symbol: string, native: string, plural: string]>;
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
  const points = [...cc].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65);
  const langs = (row.languages as readonly string[]).map((code) => {
    const l = LANGUAGE_ROWS[code];
    return Object.freeze({ name: l?.name ?? code, native: l?.native ?? code, code });
  });
  return Object.freeze({
    country_code: cc,
    country_name: row.name,
    continent_name: CONTINENTS[row.continent] ?? row.continent,
    continent_code: row.continent,
    is_eu: isEuMember(cc),
    calling_code: callingCode(cc),
    flag: `${flagBase}/${cc.toLowerCase()}.png`,
    emoji_flag: String.fromCodePoint(...points),
    emoji_unicode: points.map((p) => 'U+' + p.toString(16).toUpperCase()).join(' '),
    languages: Object.freeze(langs),
    currency: currencyOf(cc),
  });
}

let firstCodes: Map<number, number> | null = null;

/**
 * The country's calling code, digits only. countries-list gives several for
 * some countries (Kosovo: 377, 381, 383, 386); the first one that is not
 * another country's main code is the country's own.
 */
function callingCode(cc: string): string | null {
  const phones = COUNTRY_ROWS[cc]?.phone as readonly number[] | undefined;
  if (!phones || phones.length === 0) return null;
  if (!firstCodes) {
    firstCodes = new Map();
    for (const r of Object.values(COUNTRY_ROWS)) {
      const p = (r?.phone as readonly number[] | undefined)?.[0];
      if (p !== undefined) firstCodes.set(p, (firstCodes.get(p) ?? 0) + 1);
    }
  }
  const own = phones.find((p, i) => (i === 0 ? phones.length === 1 || (firstCodes!.get(p) ?? 0) <= 1 : !firstCodes!.has(p)));
  return String(own ?? phones[0]);
}

/** The country's currency from the generated table, or null. */
function currencyOf(cc: string): Currency | null {
  const row = Object.hasOwn(CURRENCIES, cc) ? CURRENCIES[cc] : undefined;
  if (row === undefined) return null;
  const [name, code, symbol, native, plural] = row;
  return Object.freeze({ name, code, symbol, native, plural });
}
