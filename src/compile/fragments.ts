/**
 * The static pieces of a record's JSON text, rendered once at compile
 * time. A record is `{"ip":…` then, in CONTRACT.md's key order:
 *
 *     country.head   ,"is_eu":…,"city":
 *     place          "Mountain View","region":…,"region_code":…,"region_type":…
 *     country.middle ,"country_name":…,"continent_code":…,"latitude":
 *     point          37.422,"longitude":-122.085,"postal":null
 *     country.flag   ,"calling_code":…,"flag":"        (no country: up to "emoji_unicode":null)
 *     (the flag base) https://flagcdn.com/w320         (an option of open(), written per lookup)
 *     country.after  /us.png","emoji_flag":…,"emoji_unicode":…   (empty with no country)
 *     network.head   ,"asn":{"asn":…,"name":…,"domain":…,"route":   (or ,"asn":null)
 *     (the route)    "8.8.8.0/24"
 *     network.tail   ,"type":…}  and ,"carrier":{…} for mobile networks
 *     country.facts  ,"languages":…,"currency":…
 *     (the clock)    ,"time_zone":{…}
 *     threat         ,"threat":{…}  (and a form without is_vpn and scores)
 *     (the count)    ,"count":"…"}
 *
 * Each value is written as `JSON.stringify` writes it, so the pieces put
 * together are the text of the record object.
 */

import type { CountryFacts } from '../country/facts.js';
import type { Location, NetworkOwner } from './sources.js';

const json = (v: unknown): string => JSON.stringify(v) ?? 'null';

/** The five pieces of a country (null: no country known). The flag's base URL goes between `flag` and `after`. */
export function countryPieces(c: CountryFacts | null): [head: string, middle: string, flag: string, after: string, facts: string] {
  const v = <K extends keyof CountryFacts>(k: K) => json(c === null ? null : c[k]);
  const emoji = `,"emoji_flag":${v('emoji_flag')},"emoji_unicode":${v('emoji_unicode')}`;
  return [
    `,"is_eu":${v('is_eu')},"city":`,
    `,"country_name":${v('country_name')},"country_code":${v('country_code')},"continent_name":${v('continent_name')},"continent_code":${v('continent_code')},"latitude":`,
    c === null ? `,"calling_code":null,"flag":null${emoji}` : `,"calling_code":${v('calling_code')},"flag":"`,
    c === null ? '' : `/${c.country_code.toLowerCase()}.png"${emoji}`,
    `,"languages":${v('languages')},"currency":${v('currency')}`,
  ];
}

/** A location's place (city and region) and point (coordinates and postal code); null: no location. */
export function locationPieces(g: Location | null): [place: string, point: string] {
  return [
    `${json(g?.city ?? null)},"region":${json(g?.region ?? null)},"region_code":${json(g?.region_code ?? null)},"region_type":${json(g?.region_type ?? null)}`,
    `${json(g?.latitude ?? null)},"longitude":${json(g?.longitude ?? null)},"postal":${json(g?.postal ?? null)}`,
  ];
}

/** A network owner's pieces before its route and after it (`,"asn":{…,"route":` and `,"type":…}` with `carrier` when known). */
export function networkPieces(n: NetworkOwner): [head: string, tail: string] {
  const head = `,"asn":{"asn":${json(n.asn)},"name":${json(n.name)},"domain":${json(n.domain)},"route":`;
  return [head, `,"type":${json(n.type)}}` + (n.carrier === null ? '' : ',"carrier":' + json(n.carrier))];
}
