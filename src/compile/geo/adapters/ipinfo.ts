/**
 * IPinfo Lite: `asn` ("AS15169"), `as_name`, `as_domain`, `country_code`,
 * `country`, `continent_code`, `continent`. One file serves both the geo
 * role (country level only) and the asn role.
 */

import type { MmdbValue } from '../../../mmdb/decoder.js';
import type { AsnFacts, GeoFacts } from '../facts.js';
import { isRow, text } from './values.js';

export function ipinfoGeo(v: MmdbValue): GeoFacts | null {
  if (!isRow(v)) return null;
  const cc = text(v.country_code);
  return {
    countryCode: cc === null ? null : cc.toUpperCase(),
    region: null,
    regionCode: null,
    city: null,
    postal: null,
    latitude: null,
    longitude: null,
    timeZone: null,
  };
}

export function ipinfoAsn(v: MmdbValue): AsnFacts | null {
  if (!isRow(v)) return null;
  const raw = text(v.asn);
  const digits = raw === null ? null : /^(?:AS)?(\d{1,10})$/i.exec(raw)?.[1];
  return { asn: digits ? Number(digits) : null, name: text(v.as_name), domain: text(v.as_domain), carrier: null };
}
