/**
 * Currency facts of a country, as the service writes them: the values of
 * the widely copied Common-Currency data set (`name`, `symbol`,
 * `symbol_native`, `name_plural`; from the `currency-list` package's
 * English list), which the service's published samples follow to the
 * byte (`AU$`, `RON`, `₴`, the Egyptian pound's native symbol with its
 * right-to-left mark); for a currency the set lacks (it predates MRU, SLE,
 * VES, ZWG...), the runtime's CLDR data (`Intl`): English name, symbol
 * and plural, and the symbol in the country's main language.
 * `scripts/gen-currencies.ts` writes them into src/country/currencies.json;
 * a unit test checks that table against this function.
 */

import { countries } from 'countries-list';
import { createRequire } from 'node:module';
import type { Currency } from '../src/contract/types.js';

interface CommonCurrency {
  readonly name: string;
  readonly symbol: string;
  readonly symbol_native: string;
  readonly name_plural: string;
}

const COMMON = (createRequire(import.meta.url)('currency-list/lib/currency-list.json') as { en: Record<string, CommonCurrency> }).en;

/**
 * Where the service's samples or the currency itself say otherwise than
 * the data set: the Egyptian pound's symbol is `E£` in the service's
 * sample (the set has `EGP`); the set's native symbol of the Indian rupee
 * is `টকা`, the Bengali word for the taka, not the rupee's `₹`.
 */
const CORRECTIONS: Record<string, Partial<Currency>> = {
  EGP: { symbol: 'E£' },
  INR: { native: '₹' },
};

function currencyPart(locale: string, code: string, display: 'symbol' | 'name', n: number): string | null {
  try {
    const parts = new Intl.NumberFormat(locale, { style: 'currency', currency: code, currencyDisplay: display }).formatToParts(n);
    return parts.find((p) => p.type === 'currency')?.value ?? null;
  } catch {
    return null;
  }
}

/** The currency facts of country `cc` (its first currency), or null. */
export function currencyOf(cc: string): Currency | null {
  const row = (countries as Record<string, { currency: readonly string[]; languages: readonly string[] } | undefined>)[cc];
  const code = row?.currency[0];
  if (!row || !code) return null;
  const common = COMMON[code];
  if (common !== undefined) {
    return {
      name: common.name,
      code,
      symbol: common.symbol,
      native: common.symbol_native,
      plural: common.name_plural,
      ...CORRECTIONS[code],
    };
  }
  let name = code;
  try {
    name = new Intl.DisplayNames('en', { type: 'currency' }).of(code) ?? code;
  } catch {
    // an unknown code keeps its code as its name
  }
  const symbol = currencyPart('en', code, 'symbol', 1) ?? code;
  const lang = row.languages[0];
  const native = (lang && currencyPart(`${lang}-${cc}`, code, 'symbol', 1)) || symbol;
  const plural = currencyPart('en', code, 'name', 2) ?? name;
  return { name, code, symbol, native, plural, ...CORRECTIONS[code] };
}
