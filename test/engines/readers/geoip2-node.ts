/**
 * MaxMind's typed Node reader (`@maxmind/geoip2-node` 6, the line that runs
 * on Node 20) over MMDB files in MaxMind's schemas, through the method of
 * each (`city`, `asn`, `anonymousIP`, `enterprise`): per address the same
 * members as `python/geoip2_read.py` gives, or null where the reader finds
 * no record or refuses the text as an address. Used by `maxmind-schemas.ts`.
 */

import { readFileSync } from 'node:fs';
import { Reader, type ReaderModel } from '@maxmind/geoip2-node';
import type { MaxmindSchema } from '../../../src/export/maxmind.js';

type CityLike = ReturnType<ReaderModel['city']>;

const cityMembers = (r: CityLike) => ({
  continent_code: r.continent?.code ?? null,
  continent_name: r.continent?.names.en ?? null,
  country_code: r.country?.isoCode ?? null,
  country_name: r.country?.names.en ?? null,
  is_eu: r.country?.isInEuropeanUnion ?? false,
  region_code: r.subdivisions?.at(-1)?.isoCode ?? null,
  region: r.subdivisions?.at(-1)?.names.en ?? null,
  city: r.city?.names.en ?? null,
  latitude: r.location?.latitude ?? null,
  longitude: r.location?.longitude ?? null,
  time_zone: r.location?.timeZone ?? null,
  postal: r.postal?.code ?? null,
});

interface Flags {
  isAnonymous?: boolean;
  isAnonymousVpn?: boolean;
  isHostingProvider?: boolean;
  isPublicProxy?: boolean;
  isResidentialProxy?: boolean;
  isTorExitNode?: boolean;
}
const anonymity = (r: Flags) => ({
  is_anonymous: r.isAnonymous ?? false,
  is_anonymous_vpn: r.isAnonymousVpn ?? false,
  is_hosting_provider: r.isHostingProvider ?? false,
  is_public_proxy: r.isPublicProxy ?? false,
  is_residential_proxy: r.isResidentialProxy ?? false,
  is_tor_exit_node: r.isTorExitNode ?? false,
});

/** The members each address's record gives through the schema's method, or null (not found, or not an address to it). */
export function geoip2NodeAnswers(schema: MaxmindSchema, path: string, ips: readonly string[]): (Record<string, unknown> | null)[] {
  const reader = Reader.openBuffer(readFileSync(path));
  const read = (ip: string): Record<string, unknown> => {
    if (schema === 'city') return cityMembers(reader.city(ip));
    if (schema === 'asn') {
      const r = reader.asn(ip);
      return { asn: r.autonomousSystemNumber ?? null, asn_name: r.autonomousSystemOrganization ?? null };
    }
    if (schema === 'anonymous-ip') return anonymity(reader.anonymousIP(ip));
    const r = reader.enterprise(ip);
    const t = r.traits;
    return {
      ...cityMembers(r),
      ...anonymity(t),
      asn: t.autonomousSystemNumber ?? null,
      asn_name: t.autonomousSystemOrganization ?? null,
      organization: t.organization ?? null,
      domain: t.domain ?? null,
      user_type: t.userType ?? null,
      connection_type: t.connectionType ?? null,
      mobile_country_code: t.mobileCountryCode ?? null,
      mobile_network_code: t.mobileNetworkCode ?? null,
    };
  };
  return ips.map((ip) => {
    try {
      return read(ip);
    } catch (e) {
      const name = (e as Error).name;
      if (name === 'AddressNotFoundError' || name === 'ValueError') return null;
      throw e;
    }
  });
}
