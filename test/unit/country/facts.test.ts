import { countries } from 'countries-list';
import { describe, expect, it } from 'vitest';
import { currencyOf } from '../../../scripts/currency.js';
import CURRENCIES from '../../../src/country/currencies.json';
import { CountryTable } from '../../../src/country/facts.js';

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
    expect(table.get('EG')!.currency).toEqual({ name: 'Egyptian Pound', code: 'EGP', symbol: 'E£', native: 'ج.م.\u200f', plural: 'Egyptian pounds' });
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
