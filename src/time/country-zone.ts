/**
 * The time zone of a location, kept within its country: the database's
 * zone, else the zone at its coordinates (`@photostructure/tz-lookup`),
 * each only when the tz database's zone.tab lists it for the country
 * (`country-zones.json`, by `scripts/gen-country-zones.ts`); else the
 * country's zone nearest to the coordinates (its only zone when there are
 * none): the zone that fits at the most points of the nearest ring
 * around the coordinates (5 to 160 km) that has one, else the zone whose
 * principal location is nearest. Another name of a listed zone (a link, such as Asia/Harbin for
 * Asia/Shanghai) counts as that zone, and so does a zone of one of the
 * country's territories that ISO 3166-1 codes apart (`OVERSEAS`: an
 * address of France located at Kourou answers America/Cayenne). Coordinates near a border put an address in the neighbour's zone
 * (Vietnam in Asia/Bangkok, Panama in America/Costa_Rica): the zone then
 * disagreed with the country, and so did the local time.
 */

import tzLookup from '@photostructure/tz-lookup';
import COUNTRY_ZONES from './country-zones.json';
import type { ZoneFrom } from './zone-from.js';

export { ZONE_FROM, type ZoneFrom } from './zone-from.js';

/** Zones of each country: name, latitude, longitude of its principal location. */
const ZONES = COUNTRY_ZONES as unknown as Record<string, readonly (readonly [string, number, number])[] | undefined>;

/**
 * Territories of a country that ISO 3166-1 codes apart (zone.tab lists their zones under their own codes), which geo
 * databases may file under the country: France's overseas departments and collectivities, the United States' outlying
 * areas, the Caribbean parts of the Kingdom of the Netherlands, Denmark's, Norway's, Finland's, Australia's, New
 * Zealand's realm, China's special administrative regions, the British Crown dependencies and overseas territories.
 * An address located in one answers that territory's zone (its country's facts stay the country's).
 */
export const OVERSEAS: Readonly<Record<string, readonly string[]>> = {
  FR: ['GF', 'GP', 'MQ', 'RE', 'YT', 'BL', 'MF', 'PM', 'NC', 'PF', 'WF', 'TF'],
  US: ['PR', 'GU', 'VI', 'AS', 'MP', 'UM'],
  NL: ['AW', 'CW', 'SX', 'BQ'],
  DK: ['GL', 'FO'],
  NO: ['SJ'],
  FI: ['AX'],
  AU: ['CX', 'CC', 'NF'],
  NZ: ['CK', 'NU', 'TK'],
  CN: ['HK', 'MO'],
  GB: ['GG', 'JE', 'IM', 'GI', 'BM', 'KY', 'VG', 'TC', 'MS', 'AI', 'FK', 'SH', 'IO', 'PN', 'GS'],
};

/** The zone of a location (`valid`: whether this Node knows a zone), or null, and where it came from (`dataset/layout.ts`, ZONE_FROM). */
export function locateZone(
  given: string | null,
  latitude: number | null,
  longitude: number | null,
  country: string | null,
  valid: (zone: string) => boolean,
): { zone: string | null; zoneFrom: ZoneFrom } {
  const zones = country === null ? undefined : ZONES[country];
  // A zone of the country, or another name of one (Asia/Harbin is Asia/Shanghai): kept as it is given.
  // By name first: each other name asked of Intl costs a formatter. A zone of one of the country's territories fits too.
  const overseas = country === null ? [] : (OVERSEAS[country] ?? []);
  const fits = (z: string | null): z is string =>
    z !== null &&
    valid(z) &&
    (zones === undefined ||
      zones.some(([name]) => name === z) ||
      overseas.some((t) => ZONES[t]?.some(([name]) => name === z)) ||
      zones.some(([name]) => sameZone(name, z)));
  const none = { zone: null, zoneFrom: 'none' } as const;
  if (fits(given)) return { zone: given, zoneFrom: 'data' };
  let found: string | null = null;
  if (latitude !== null && longitude !== null) {
    try {
      found = tzLookup(latitude, longitude);
    } catch {
      // coordinates out of range
    }
  }
  if (fits(found)) return { zone: found, zoneFrom: 'coordinates' };
  const known = zones?.filter(([name]) => valid(name)) ?? [];
  // A country zone.tab does not list: the zone found, as it is.
  if (zones === undefined) return found !== null && valid(found) ? { zone: found, zoneFrom: 'coordinates' } : none;
  if (known.length === 1) return { zone: known[0][0], zoneFrom: 'country' };
  if (known.length === 0 || latitude === null || longitude === null) return none;
  // Coordinates just across a border (a Texan town on the Rio Grande, Sault Ste. Marie on the St. Marys River): the
  // country's zone found nearest around them, ring by ring, where most of the ring's points find one.
  const around = zoneAround(latitude, longitude, fits);
  if (around !== null) return { zone: around, zoneFrom: 'nearby' };
  let best = known[0][0];
  let nearest = Infinity;
  for (const [name, lat, lon] of known) {
    const d = distance(latitude, longitude, lat, lon);
    if (d < nearest) {
      nearest = d;
      best = name;
    }
  }
  return { zone: best, zoneFrom: 'nearest' };
}

/** Radii of the rings searched around coordinates outside the country's zones, in kilometres, and points a ring. */
const RINGS_KM = [5, 10, 20, 40, 80, 160];
const RING_POINTS = 16;

/** The zone that fits (`fits`) at the most points of the nearest ring around the coordinates that has any, or null. */
function zoneAround(latitude: number, longitude: number, fits: (z: string | null) => z is string): string | null {
  const r = Math.PI / 180;
  for (const km of RINGS_KM) {
    const counts = new Map<string, number>();
    const d = km / 6371;
    for (let i = 0; i < RING_POINTS; i++) {
      // The point `km` away at bearing i/16 of a turn (great circle).
      const bearing = (2 * Math.PI * i) / RING_POINTS;
      const lat1 = latitude * r;
      const lat2 = Math.asin(Math.sin(lat1) * Math.cos(d) + Math.cos(lat1) * Math.sin(d) * Math.cos(bearing));
      const lon2 =
        longitude * r + Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(lat1), Math.cos(d) - Math.sin(lat1) * Math.sin(lat2));
      let z: string | null = null;
      try {
        z = tzLookup(lat2 / r, ((((lon2 / r + 540) % 360) + 360) % 360) - 180);
      } catch {
        // off the map
      }
      if (fits(z)) counts.set(z, (counts.get(z) ?? 0) + 1);
    }
    let best: string | null = null;
    for (const [z, n] of counts) if (best === null || n > counts.get(best)!) best = z;
    if (best !== null) return best;
  }
  return null;
}

const canonicalNames = new Map<string, string>();

/** Whether two names are one zone (one of them a link to the other), as this Node's time zone data says. */
function sameZone(a: string, b: string): boolean {
  const canonical = (z: string) => {
    let c = canonicalNames.get(z);
    if (c === undefined) {
      try {
        c = new Intl.DateTimeFormat('en-US', { timeZone: z }).resolvedOptions().timeZone;
      } catch {
        c = z;
      }
      canonicalNames.set(z, c);
    }
    return c;
  };
  return canonical(a) === canonical(b);
}

/** Great-circle distance in radians (haversine). */
function distance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(a)));
}
