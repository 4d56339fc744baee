/**
 * A record as an object or as JSON text, from a compiled dataset: the
 * location's and network's values read from their rows (numbers as
 * numbers, strings as slices of the dataset's text; nothing parsed, nothing
 * kept per location), the country's parsed and decoded from its fragments
 * once per country, threat objects' text once per threat row (both tables
 * of a few hundred rows, kept whole), put together with what changes per
 * lookup. Nested objects are shared and frozen, but those made per lookup:
 * `time_zone`, `asn` (which holds the route) and `carrier`. The text is
 * the text `writeRecord` writes as bytes (`render.ts`).
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import type { ZoneClock } from '../time/zone.js';
import type { AsnType, IpRecord, Threat } from '../types.js';
import { COUNTRY, LOC, LOCATION, NET, NETWORK, NO_ROUTE, NO_STRING, NO_ZONE, PL, PLACE, RECORD, THREAT, type Dataset } from './format.js';
import type { RenderState } from './render.js';

interface CountryPart {
  /** Its five fragments as text (`compile/fragments.ts`). */
  readonly texts: readonly string[];
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
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** Parses JSON object members written after a comma (`,"a":1,"b":2`), with text added at the end to close the last one. */
const members = <T>(text: string, close = ''): T => JSON.parse('{' + text.slice(1) + close + '}') as T;

/** Records as objects and as text from one dataset. */
export class RecordObjects {
  private readonly countries: (CountryPart | undefined)[] = [];
  /** Threat objects' text, by threat row and form (`threatText`). */
  private readonly threatTexts: (string | undefined)[];

  constructor(private readonly ds: Dataset) {
    this.threatTexts = new Array<string | undefined>((ds.threats.length / THREAT) * 2);
  }

  /** The record of the address in `words` (in range `ref`); `threat` is its threat object, `flagBase` the flag's base URL. */
  record(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, threat: Threat, flagBase: string): IpRecord {
    const { ds } = this;
    const rec = (ref >>> 8) * RECORD;
    const loc = ds.records[rec] * LOCATION;
    const locations = ds.locations;
    const c = this.country(locations[loc + LOC.country]);
    const place = locations[loc + LOC.place] * PLACE;
    const places = ds.places;
    const latitude = ds.locationNumbers[loc >>> 1];
    const longitude = ds.locationNumbers[(loc >>> 1) + 1];
    const net = ds.records[rec + 1] * NETWORK;
    const networks = ds.networks;
    const asn = networks[net + NET.asn];
    const prefix = ref & 255;
    const zone = locations[loc + LOC.zone];
    const record: IpRecord = {
      ip: s.text,
      is_eu: c.is_eu,
      city: ds.string(places, place + PL.city),
      region: ds.string(places, place + PL.region),
      region_code: ds.string(places, place + PL.regionCode),
      region_type: ds.string(places, place + PL.regionType),
      country_name: c.country_name,
      country_code: c.country_code,
      continent_name: c.continent_name,
      continent_code: c.continent_code,
      // NaN: null.
      latitude: Number.isNaN(latitude) ? null : latitude,
      longitude: Number.isNaN(longitude) ? null : longitude,
      postal: ds.string(locations, loc + LOC.postal),
      calling_code: c.calling_code,
      flag: c.flagPath === null ? null : flagBase + c.flagPath,
      emoji_flag: c.emoji_flag,
      emoji_unicode: c.emoji_unicode,
      asn:
        asn === NO_STRING || prefix === NO_ROUTE
          ? null
          : {
              asn: ds.string(networks, net + NET.asn) as string,
              name: ds.string(networks, net + NET.name),
              domain: ds.string(networks, net + NET.domain),
              route: formatCidr(version, words, prefix),
              type: ds.string(networks, net + NET.type) as AsnType | null,
            },
      ...(networks[net + NET.mcc] === NO_STRING
        ? {}
        : { carrier: { name: ds.string(networks, net + NET.carrierName), mcc: ds.string(networks, net + NET.mcc) as string, mnc: ds.string(networks, net + NET.mnc) as string } }),
      languages: c.languages,
      currency: c.currency,
      time_zone: zone === NO_ZONE ? null : clock.timeZone(ds.meta.zones[zone], s.now),
      threat,
      count: s.count,
    } as IpRecord;
    return record;
  }

  /** The record's JSON text (`lookupJson`): what `record()` reads, as text. */
  json(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState): string {
    const { ds } = this;
    const rec = (ref >>> 8) * RECORD;
    const loc = ds.records[rec] * LOCATION;
    const locations = ds.locations;
    const t = this.country(locations[loc + LOC.country]).texts;
    const place = locations[loc + LOC.place] * PLACE;
    const places = ds.places;
    let json =
      '{"ip":"' +
      s.text +
      '"' +
      t[0] +
      ds.json(places, place + PL.city) +
      ',"region":' +
      ds.json(places, place + PL.region) +
      ',"region_code":' +
      ds.json(places, place + PL.regionCode) +
      ',"region_type":' +
      ds.json(places, place + PL.regionType) +
      t[1] +
      ds.json(locations, loc + LOC.latitude) +
      ',"longitude":' +
      ds.json(locations, loc + LOC.longitude) +
      ',"postal":' +
      ds.json(locations, loc + LOC.postal) +
      t[2];
    if (t[3] !== '') json += s.flagBase + t[3];
    const net = ds.records[rec + 1] * NETWORK;
    const networks = ds.networks;
    const prefix = ref & 255;
    if (networks[net + NET.asn] === NO_STRING || prefix === NO_ROUTE) json += ',"asn":null';
    else {
      json +=
        ',"asn":{"asn":' +
        ds.json(networks, net + NET.asn) +
        ',"name":' +
        ds.json(networks, net + NET.name) +
        ',"domain":' +
        ds.json(networks, net + NET.domain) +
        ',"route":"' +
        formatCidr(version, words, prefix) +
        '","type":' +
        ds.json(networks, net + NET.type) +
        '}';
      if (networks[net + NET.mcc] !== NO_STRING)
        json += ',"carrier":{"name":' + ds.json(networks, net + NET.carrierName) + ',"mcc":' + ds.json(networks, net + NET.mcc) + ',"mnc":' + ds.json(networks, net + NET.mnc) + '}';
    }
    const zone = locations[loc + LOC.zone];
    return (
      json +
      t[4] +
      ',"time_zone":' +
      (zone === NO_ZONE ? 'null' : clock.timeZoneJson(ds.meta.zones[zone], s.now)) +
      ',"threat":' +
      this.threatText(ds.records[rec + 2] * 2 + (s.basic ? 1 : 0)) +
      ',"count":' +
      (s.ownCount ? '"' + s.count + '"' : JSON.stringify(s.count)) +
      '}'
    );
  }

  /** The text of a threat row's object (`form` 0) or its basic form (1), at `row * 2 + form`. */
  private threatText(at: number): string {
    return (this.threatTexts[at] ??= this.ds.fragment(this.ds.threats[(at >>> 1) * THREAT + (at & 1)]).toString('utf8'));
  }

  private country(row: number): CountryPart {
    let c = this.countries[row];
    if (c === undefined) {
      const { ds } = this;
      const at = row * COUNTRY;
      const texts = { get: (id: number) => ds.fragment(id).toString('utf8') };
      const head = members<{ is_eu: boolean | null }>(texts.get(ds.countries[at]), 'null');
      const middle = members<Omit<CountryPart, 'is_eu'>>(texts.get(ds.countries[at + 1]), 'null');
      const after = texts.get(ds.countries[at + 3]);
      // With a country, the flag's piece ends inside its string (`"flag":"`) and the rest follows its base URL.
      const flag = after === '' ? members<{ calling_code: string | null; emoji_flag: string | null; emoji_unicode: string | null }>(texts.get(ds.countries[at + 2])) : null;
      const tail =
        after === ''
          ? null
          : (JSON.parse('{' + texts.get(ds.countries[at + 2]).slice(1) + '",' + '"path":"' + after + '}') as { calling_code: string | null; path: string; emoji_flag: string; emoji_unicode: string });
      const facts = deepFreeze(members<{ languages: IpRecord['languages']; currency: IpRecord['currency'] }>(texts.get(ds.countries[at + 4])));
      c = Object.freeze({
        texts: Object.freeze([0, 1, 2, 3, 4].map((i) => texts.get(ds.countries[at + i]))),
        is_eu: head.is_eu,
        country_name: middle.country_name,
        country_code: middle.country_code,
        continent_name: middle.continent_name,
        continent_code: middle.continent_code,
        calling_code: tail?.calling_code ?? flag?.calling_code ?? null,
        flagPath: tail?.path ?? null,
        emoji_flag: tail?.emoji_flag ?? flag?.emoji_flag ?? null,
        emoji_unicode: tail?.emoji_unicode ?? flag?.emoji_unicode ?? null,
        languages: facts.languages,
        currency: facts.currency,
      });
      this.countries[row] = c;
    }
    return c;
  }
}
