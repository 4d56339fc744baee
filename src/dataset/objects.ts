/**
 * A record as an object, from a compiled dataset: the parts parsed from
 * their fragments once and kept (countries: all of them, a few hundred;
 * locations and networks: by fragment or row id, at most PARTS each,
 * emptied when full), then put together with what changes per lookup.
 * Nested objects but `time_zone` and `asn` (which holds the route) are
 * shared and frozen.
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import type { ZoneClock } from '../time/zone.js';
import type { Asn, Carrier, IpRecord, Threat } from '../types.js';
import { NO_ROUTE, NO_ZONE, type Dataset } from './format.js';
import type { FragmentTexts, RenderState } from './render.js';

/** Locations and networks kept parsed. */
const PARTS = 65_536;

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

interface Place {
  readonly city: string | null;
  readonly region: string | null;
  readonly region_code: string | null;
  readonly region_type: string | null;
}

interface Point {
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly postal: string | null;
}

interface NetworkPart {
  /** `asn` without its route, or null. */
  readonly asn: Omit<Asn, 'route'> | null;
  readonly carrier: Carrier | null;
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

/** A kept-parts map: emptied when full. */
function kept<T>(map: Map<number, T>, id: number, make: () => T): T {
  let v = map.get(id);
  if (v === undefined) {
    v = make();
    if (map.size >= PARTS) map.clear();
    map.set(id, v);
  }
  return v;
}

/** The parsed parts of one dataset's records. */
export class RecordObjects {
  private readonly countries = new Map<number, CountryPart>();
  private readonly places = new Map<number, Place>();
  private readonly points = new Map<number, Point>();
  private readonly networks = new Map<number, NetworkPart>();

  constructor(
    private readonly ds: Dataset,
    private readonly texts: FragmentTexts,
  ) {}

  /** The record of the address in `words` (in range `ref`); `threat` is its threat object, `flagBase` the flag's base URL. */
  record(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, threat: Threat, flagBase: string): IpRecord {
    const { ds } = this;
    const rec = (ref >>> 8) * 3;
    const loc = ds.records[rec] * 4;
    const c = this.country(ds.locations[loc]);
    const place = kept(this.places, ds.locations[loc + 1], () => JSON.parse('{"city":' + this.texts.get(ds.locations[loc + 1]) + '}') as Place);
    const point = kept(this.points, ds.locations[loc + 2], () => JSON.parse('{"latitude":' + this.texts.get(ds.locations[loc + 2]) + '}') as Point);
    const net = this.network(ds.records[rec + 1]);
    const prefix = ref & 255;
    const zone = ds.locations[loc + 3];
    const record: IpRecord = {
      ip: s.text,
      is_eu: c.is_eu,
      city: place.city,
      region: place.region,
      region_code: place.region_code,
      region_type: place.region_type,
      country_name: c.country_name,
      country_code: c.country_code,
      continent_name: c.continent_name,
      continent_code: c.continent_code,
      latitude: point.latitude,
      longitude: point.longitude,
      postal: point.postal,
      calling_code: c.calling_code,
      flag: c.flagPath === null ? null : flagBase + c.flagPath,
      emoji_flag: c.emoji_flag,
      emoji_unicode: c.emoji_unicode,
      asn:
        net.asn === null || prefix === NO_ROUTE ? null : Object.freeze({ asn: net.asn.asn, name: net.asn.name, domain: net.asn.domain, route: formatCidr(version, words, prefix), type: net.asn.type }),
      ...(net.carrier === null ? {} : { carrier: net.carrier }),
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
      const at = row * 5;
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

  private network(row: number): NetworkPart {
    return kept(this.networks, row, () => {
      const { ds, texts } = this;
      const head = texts.get(ds.networks[row * 2]);
      const tail = texts.get(ds.networks[row * 2 + 1]);
      if (tail === '') return { asn: null, carrier: null };
      const v = members<{ asn: Asn; carrier?: Carrier }>(head + '""' + tail);
      const { route: _route, ...asn } = v.asn;
      return { asn, carrier: v.carrier === undefined ? null : Object.freeze(v.carrier) };
    });
  }
}
