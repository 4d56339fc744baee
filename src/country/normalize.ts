/**
 * Normalisation of region names for matching a geo database's region name
 * to an ISO 3166-2 subdivision: accents, case, punctuation and the generic
 * words that databases add or drop ("Oblast", "Province", "Region", ...).
 */

/** Words that name the kind of a region rather than the region. */
const GENERIC = new Set(
  (
    'province region governorate state oblast oblasti oblisi oblysy voblasc city voivodeship county district ' +
    'department prefecture municipality urban of the republic autonomous kray krai okrug canton parish emirate ' +
    'division territory capital federal metropolitan special administrative zone provincia de del la el al ' +
    'muhafazat wilayat ostan regional unit island islands national area grad pradesh st saint and hanseatic ' +
    'free mesto hlavni ' +
    // Chinese: province, municipality, autonomous region (and its peoples), special administrative region.
    'sheng shi zizhiqu zhuangzu huizu uygur weiwuer zangzu tebie xingzhengqu'
  ).split(' '),
);

/** Latin letters that no accent decomposition turns into ASCII, as geo databases write them (Trøndelag, Xgħajra, Xocalı). */
const LETTERS: Readonly<Record<string, string>> = {
  ı: 'i',
  ə: 'e',
  ǝ: 'e',
  æ: 'ae',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ħ: 'h',
  ø: 'o',
  ł: 'l',
  ß: 'ss',
  œ: 'oe',
};

/** Lower case, no accents or apostrophes, words separated by one space. */
export function normalizeRegion(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[ıəǝæđðþħøłßœ]/g, (c) => LETTERS[c])
    .replace(/['’`ʼ‘ʻʿʾ]/g, '')
    .replace(/[^a-z0-9\u0080-\uffff]+/g, ' ')
    .trim();
}

/** The normalised name without generic words. */
export function coreRegion(name: string): string {
  return normalizeRegion(name)
    .split(' ')
    .filter((w) => !GENERIC.has(w))
    .join(' ');
}
