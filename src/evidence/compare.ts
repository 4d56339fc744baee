/**
 * Location databases given to `open()` as `compare`: each compiled on its
 * own, once, as `geo` is (`dataset/locate.ts`: in a child process, into
 * the user's cache, again only when the file changes), without network
 * data, and read by `explain()` alone: the country each gives an address,
 * against the record's. No lookup reads them.
 */

import { COUNTRY, CTY, Dataset, LOC, LOCATION, RECORD, findRange } from '../dataset/format.js';
import { bytesSync, withFile } from '../dataset/load.js';
import { ensureDataset } from '../dataset/locate.js';
import { isSealed, writeSeal } from '../dataset/seal.js';
import { memoryMapper } from '../platform/native.js';
import type { IpVersion } from '../ip/parse.js';

/** What one compared database says of an address's country. */
export interface CountryAgreement {
  /** The database, as given to `open()`. */
  readonly source: string;
  readonly country_code: string | null;
  /** Whether it gives the record's country; null where either has none. */
  readonly agrees: boolean | null;
}

export class Compared {
  private readonly sets: readonly { readonly source: string; readonly ds: Dataset }[];

  /** @throws InvalidDatasetError when a database cannot be read or compiled */
  constructor(sources: readonly string[]) {
    this.sets = sources.map((source) => {
      const path = ensureDataset({ geo: [source], asn: [], anonymous: [] });
      const mapper = memoryMapper();
      const ds = withFile(path, (f) => {
        const file = new Dataset(bytesSync(f, 'map' in mapper ? mapper : null), path);
        if (!isSealed(path, f.stat)) {
          file.verify();
          writeSeal(path, f.stat);
        }
        return file;
      });
      return { source, ds };
    });
  }

  /** Each database's country of the address (`version`, `words`), against the record's `country`. */
  countries(version: IpVersion, words: ArrayLike<number>, country: string | null): CountryAgreement[] {
    return this.sets.map(({ source, ds }) => {
      const rec = (findRange(ds, version, words) >>> 8) * RECORD;
      const row = ds.locations[ds.records[rec] * LOCATION + LOC.country];
      const code = ds.string(ds.countries, row * COUNTRY + CTY.country_code);
      return { source, country_code: code, agrees: code === null || country === null ? null : code === country };
    });
  }
}
