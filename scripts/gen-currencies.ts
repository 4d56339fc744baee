/**
 * Generates src/country/currencies.json: per ISO 3166-1 country of
 * countries-list, the record's `currency` object (see scripts/currency.ts:
 * the Common-Currency data set, else the runtime's CLDR data). A table
 * rather than `Intl` at run time: every Node build answers the same
 * (small-icu builds lack most locales) and the first lookup does not pay
 * ICU's start-up. Run: npx tsx scripts/gen-currencies.ts
 */
import { writeFileSync } from 'node:fs';
import { countries } from 'countries-list';
import { currencyOf } from './currency.js';

const out: Record<string, unknown> = {};
for (const cc of Object.keys(countries).sort()) {
  const c = currencyOf(cc);
  if (c !== null) out[cc] = [c.name, c.code, c.symbol, c.native, c.plural];
}
writeFileSync(new URL('../src/country/currencies.json', import.meta.url), JSON.stringify(out) + '\n');
console.log(`wrote ${Object.keys(out).length} countries (ICU ${process.versions.icu}, CLDR ${process.versions.cldr})`);
