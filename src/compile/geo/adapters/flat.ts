/**
 * The flat schema of the `@ip-location-db/*` MMDB packages (DB-IP Lite,
 * GeoLite2 City): `country_code, state1, state2, city, postcode, latitude,
 * longitude, timezone`, with "" for unknown.
 */

import type { MmdbValue } from '../../../mmdb/decoder.js';
import type { GeoFacts } from '../facts.js';
import { coordinate, isRow, text } from './values.js';

export function flatGeo(v: MmdbValue): GeoFacts | null {
  if (!isRow(v)) return null;
  const cc = text(v.country_code);
  return {
    countryCode: cc === null ? null : cc.toUpperCase(),
    region: text(v.state1),
    regionCode: null,
    city: text(v.city),
    postal: text(v.postcode),
    latitude: coordinate(v.latitude),
    longitude: coordinate(v.longitude),
    timeZone: text(v.timezone),
  };
}
