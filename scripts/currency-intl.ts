/**
 * Currency facts of a country from the runtime's CLDR data (`Intl`): the
 * English name and plural, the English narrow symbol (`E£`) and the symbol
 * in the country's main language (`ج.م.`). `scripts/gen-currencies.ts`
 * writes them into src/country/currencies.json; a unit test checks that
 * table against this function on the running Node.
 */

import { countries } from 'countries-list';
import type { Currency } from '../src/country/facts.js';

function currencyPart(locale: string, code: string, display: 'narrowSymbol' | 'symbol' | 'name', n: number): string | null {
  try {
    const parts = new Intl.NumberFormat(locale, { style: 'currency', currency: code, currencyDisplay: display }).formatToParts(n);
    return parts.find((p) => p.type === 'currency')?.value ?? null;
  } catch {
    return null;
  }
}

/** The currency facts of country `cc` (its first currency), or null. */
export function currencyFromIntl(cc: string): Currency | null {
  const row = (countries as Record<string, { currency: readonly string[]; languages: readonly string[] } | undefined>)[cc];
  const code = row?.currency[0];
  if (!row || !code) return null;
  const lang = row.languages[0];
  let name = code;
  try {
    name = new Intl.DisplayNames('en', { type: 'currency' }).of(code) ?? code;
  } catch {
    // an unknown code keeps its code as its name
  }
  const symbol = currencyPart('en', code, 'narrowSymbol', 1) ?? code;
  const native = (lang && currencyPart(`${lang}-${cc}`, code, 'symbol', 1)) || symbol;
  const plural = currencyPart('en', code, 'name', 2) ?? name;
  return { name, code, symbol, native, plural };
}
