/**
 * A record as an object, from a compiled dataset: the location's and
 * network's values read from their columns (numbers as numbers, strings as
 * slices of the dataset's string text; nothing parsed), the country's
 * parsed from its fragments once per country (a few hundred, all kept),
 * put together with what changes per lookup. Nested objects are shared
 * and frozen, but those made per lookup: `time_zone`, `asn` (which holds
 * the route) and `carrier`.
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import type { ZoneClock } from '../time/zone.js';
import type { AsnType, IpRecord, Threat } from '../types.js';
import { COUNTRY, LOCATION, LOCATION_IDS, NETWORK, NO_ROUTE, NO_STRING, NO_ZONE, PLACE, RECORD, type Dataset } from './format.js';
import type { FragmentTexts, RenderState } from './render.js';

interface CountryPart {
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

/** Records as objects from one dataset. */
export class RecordObjects {
  private readonly countries = new Map<number, CountryPart>();

  constructor(
    private readonly ds: Dataset,
    private readonly texts: FragmentTexts,
  ) {}

  /** The record of the address in `words` (in range `ref`); `threat` is its threat object, `flagBase` the flag's base URL. */
  record(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, threat: Threat, flagBase: string): IpRecord {
    const { ds } = this;
    const rec = (ref >>> 8) * RECORD;
    const row = ds.records[rec] * LOCATION;
    const loc = row + LOCATION_IDS;
    const locations = ds.locations;
    const c = this.country(locations[loc]);
    const place = locations[loc + 4] * PLACE;
    const places = ds.places;
    const latitude = ds.locationNumbers[row >>> 1];
    const longitude = ds.locationNumbers[(row >>> 1) + 1];
    const net = ds.records[rec + 1] * NETWORK;
    const networks = ds.networks;
    const asn = networks[net + 2];
    const prefix = ref & 255;
    const zone = locations[loc + 3];
    const record: IpRecord = {
      ip: s.text,
      is_eu: c.is_eu,
      city: ds.string(places, place),
      region: ds.string(places, place + 2),
      region_code: ds.string(places, place + 4),
      region_type: ds.string(places, place + 6),
      country_name: c.country_name,
      country_code: c.country_code,
      continent_name: c.continent_name,
      continent_code: c.continent_code,
      // NaN: null.
      latitude: latitude === latitude ? latitude : null,
      longitude: longitude === longitude ? longitude : null,
      postal: ds.string(locations, loc + 5),
      calling_code: c.calling_code,
      flag: c.flagPath === null ? null : flagBase + c.flagPath,
      emoji_flag: c.emoji_flag,
      emoji_unicode: c.emoji_unicode,
      asn:
        asn === NO_STRING || prefix === NO_ROUTE
          ? null
          : {
              asn: ds.string(networks, net + 2) as string,
              name: ds.string(networks, net + 4),
              domain: ds.string(networks, net + 6),
              route: formatCidr(version, words, prefix),
              type: ds.string(networks, net + 8) as AsnType | null,
            },
      ...(networks[net + 12] === NO_STRING ? {} : { carrier: { name: ds.string(networks, net + 10), mcc: ds.string(networks, net + 12) as string, mnc: ds.string(networks, net + 14) as string } }),
      languages: c.languages,
      currency: c.currency,
      time_zone: zone === NO_ZONE ? null : clock.timeZone(ds.meta.zones[zone], s.now),
      threat,
      count: s.count,
    } as IpRecord;
    return record;
  }

  private country(row: number): CountryPart {
    let c = this.countries.get(row);
    if (c === undefined) {
      const { ds, texts } = this;
      const at = row * COUNTRY;
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
      this.countries.set(row, c);
    }
    return c;
  }
}
