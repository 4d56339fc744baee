/**
 * Geo range CSVs as a source of the compiler, in the two forms published
 * for DB-IP Lite City:
 *
 * - ip-location-db (`@ip-location-db/dbip-city`, its GitHub releases):
 *   `start,end,country_code,city,state1,state2,latitude,longitude,postcode,timezone`
 *   (ten columns; the flat MMDB schema's fields);
 * - DB-IP's own (`dbip-city-lite-YYYY-MM.csv.gz`):
 *   `start,end,continent,country,stateprov,city,latitude,longitude`
 *   (eight columns).
 *
 * A row's values are read as the flat MMDB schema's (`flatGeo`), so a CSV
 * and an MMDB of the same data answer alike. No header; `#` lines are
 * comments. Build time only.
 */

import { flatGeo } from './geo/adapters/flat.js';
import type { GeoFacts } from './geo/facts.js';
import { parseIp } from '../ip/address.js';
import { toBigInt } from '../ip/ranges.js';
import { forEachCsvRow } from './csv-rows.js';
import type { RangeReader, RangeRow } from './range-csv.js';

/** The flat schema's fields of a row of either form, or null when it has neither form's columns. */
function fields(f: readonly string[]): Record<string, string | number> | null {
  const num = (t: string) => (t === '' ? '' : Number(t));
  if (f.length === 10)
    return {
      country_code: f[2],
      city: f[3],
      state1: f[4],
      state2: f[5],
      latitude: num(f[6]),
      longitude: num(f[7]),
      postcode: f[8],
      timezone: f[9],
    };
  if (f.length === 8) return { country_code: f[3], state1: f[4], city: f[5], latitude: num(f[6]), longitude: num(f[7]) };
  return null;
}

/** The rows of geo range CSVs. */
export const readGeoRows: RangeReader<GeoFacts> = (files) => {
  const rows: RangeRow<GeoFacts>[] = [];
  const badLines = forEachCsvRow(files, (f, bad) => {
    const record = f === null ? null : fields(f);
    if (f === null || record === null)
      return bad(
        'expected start,end,country_code,city,state1,state2,latitude,longitude,postcode,timezone or start,end,continent,country,stateprov,city,latitude,longitude',
      );
    const start = parseIp(f[0]);
    const end = parseIp(f[1]);
    if (!start || !end || start.version !== end.version || toBigInt(start) > toBigInt(end)) return bad('invalid address range');
    const facts = flatGeo(record);
    if (facts !== null) rows.push({ start, end, key: f.slice(2).join('\u0000'), value: facts });
  });
  return { rows, badLines };
};
