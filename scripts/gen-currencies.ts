/**
 * Generates src/country/currencies.json: per ISO 3166-1 country of
 * countries-list, the record's `currency` object from the runtime's CLDR
 * data (see scripts/currency-intl.ts). Reading it from a table instead of
 * `Intl` at run time spares the first lookup about 15 ms of ICU start-up
 * and makes the answers the same on every Node build (small-icu builds
 * lack most locales). Run: npx tsx scripts/gen-currencies.ts
 */
import { writeFileSync } from 'node:fs';
import { countries } from 'countries-list';
import { currencyFromIntl } from './currency-intl.js';

const out: Record<string, unknown> = {};
for (const cc of Object.keys(countries).sort()) {
  const c = currencyFromIntl(cc);
  if (c !== null) out[cc] = [c.name, c.code, c.symbol, c.native, c.plural];
}
writeFileSync(new URL('../src/country/currencies.json', import.meta.url), JSON.stringify(out) + '\n');
console.log(`wrote ${Object.keys(out).length} countries (ICU ${process.versions.icu}, CLDR ${process.versions.cldr})`);
