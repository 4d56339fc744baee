/**
 * A dataset's country rows decoded, each when first read: its values for
 * records as objects, and its runs of members (`contract/template.ts`) as
 * text and as UTF-8 bytes for records as JSON. A table of a few hundred
 * rows, kept whole: it is the decoded form of rows stored once, bounded by
 * the file.
 */

import { countryRuns, flagPath, type RecordMember } from '../contract/template.js';
import type { IpRecord } from '../contract/types.js';
import { csvField } from '../text/csv.js';
import { textWords, type Words } from '../text/words.js';
import { COUNTRY, COUNTRY_VALUES, CTY, type Dataset } from '../dataset/format.js';
import { utf8Bytes } from '../platform/bytes.js';

/** A country row decoded. */
export interface CountryRow {
  readonly is_eu: boolean | null;
  readonly country_name: string | null;
  readonly country_code: string | null;
  readonly continent_name: string | null;
  readonly continent_code: string | null;
  readonly calling_code: string | null;
  /** `flag` after its base URL (`/us.png`), or null. */
  readonly flagPath: string | null;
  readonly emoji_flag: string | null;
  readonly emoji_unicode: string | null;
  readonly languages: IpRecord['languages'];
  readonly currency: IpRecord['currency'];
  /**
   * Its runs of members as UTF-8 in words (`textWords`),
   * and where run `i` starts and ends (`runAt[2i]`, `runAt[2i + 1]`): the
   * base URL of `flag` goes after the third when `flagPath` is not null.
   */
  readonly runs: Words;
  readonly runAt: readonly number[];
  /** The CSV cells (`csvField`) of its values, in the order of `COUNTRY_VALUES`, as UTF-8. */
  readonly cells: readonly Uint8Array[];
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

export class Countries {
  private readonly rows: (CountryRow | undefined)[] = [];

  constructor(private readonly ds: Dataset) {}

  get(row: number): CountryRow {
    return this.rows[row] ?? this.decode(row);
  }

  private decode(row: number): CountryRow {
    const { ds } = this;
    const at = row * COUNTRY;
    const json = (key: (typeof COUNTRY_VALUES)[number]) => ds.json(ds.countries, at + CTY[key]);
    const value = <T>(key: (typeof COUNTRY_VALUES)[number]) => deepFreeze(JSON.parse(json(key)) as T);
    const code = value<string | null>('country_code');
    const texts = countryRuns((key: RecordMember) => json(key as (typeof COUNTRY_VALUES)[number]), code);
    const { words: runs, at: runAt } = textWords(texts);
    // A literal: every row of one shape.
    const c: CountryRow = Object.freeze({
      is_eu: value<boolean | null>('is_eu'),
      country_name: value<string | null>('country_name'),
      country_code: code,
      continent_name: value<string | null>('continent_name'),
      continent_code: value<string | null>('continent_code'),
      calling_code: value<string | null>('calling_code'),
      flagPath: code === null ? null : flagPath(code),
      emoji_flag: value<string | null>('emoji_flag'),
      emoji_unicode: value<string | null>('emoji_unicode'),
      languages: value<IpRecord['languages']>('languages'),
      currency: value<IpRecord['currency']>('currency'),
      runs,
      runAt: Object.freeze(runAt),
      cells: Object.freeze(COUNTRY_VALUES.map((key) => utf8Bytes(csvField(JSON.parse(json(key)))))),
    });
    this.rows[row] = c;
    return c;
  }
}
