/**
 * MaxMind GeoIP2 / GeoLite2 schemas: City and Country (and the Enterprise
 * databases, which share their shape), ASN, ISP and Anonymous-IP.
 */

import type { MmdbValue } from '../../../mmdb/decoder.js';
import type { AnonymousFacts, AsnFacts, GeoFacts } from '../facts.js';
import { coordinate, englishName, flag, isRow, num, text } from './values.js';

/** City and Country: the location's country, else the registered one. */
export function maxmindGeo(v: MmdbValue): GeoFacts | null {
  if (!isRow(v)) return null;
  const country = isRow(v.country) ? v.country : isRow(v.registered_country) ? v.registered_country : null;
  const sub = Array.isArray(v.subdivisions) && isRow(v.subdivisions[0]) ? v.subdivisions[0] : null;
  const location = isRow(v.location) ? v.location : null;
  return {
    countryCode: country ? text(country.iso_code) : null,
    region: sub ? englishName(sub) : null,
    regionCode: sub ? text(sub.iso_code) : null,
    city: englishName(v.city),
    postal: isRow(v.postal) ? text(v.postal.code) : null,
    latitude: location ? coordinate(location.latitude) : null,
    longitude: location ? coordinate(location.longitude) : null,
    timeZone: location ? text(location.time_zone) : null,
  };
}

/** ASN: number and organisation. */
export function maxmindAsn(v: MmdbValue): AsnFacts | null {
  if (!isRow(v)) return null;
  return { asn: num(v.autonomous_system_number), name: text(v.autonomous_system_organization), domain: null, carrier: null };
}

/** ISP: as ASN, with the carrier for mobile networks (both codes present). */
export function maxmindIsp(v: MmdbValue): AsnFacts | null {
  if (!isRow(v)) return null;
  const mcc = text(v.mobile_country_code);
  const mnc = text(v.mobile_network_code);
  return {
    asn: num(v.autonomous_system_number),
    name: text(v.autonomous_system_organization) ?? text(v.organization) ?? text(v.isp),
    domain: null,
    carrier: mcc !== null && mnc !== null ? { name: text(v.isp) ?? text(v.organization), mcc, mnc } : null,
  };
}

/** Anonymous-IP: Tor exits, VPNs, public and residential proxies, hosting. */
export function maxmindAnonymous(v: MmdbValue): AnonymousFacts | null {
  if (!isRow(v)) return null;
  return {
    tor: flag(v.is_tor_exit_node),
    vpn: flag(v.is_anonymous_vpn),
    proxy: flag(v.is_public_proxy) || flag(v.is_residential_proxy),
    hosting: flag(v.is_hosting_provider),
  };
}
