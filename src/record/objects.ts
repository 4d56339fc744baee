/**
 * A record as an object, as JSON text or as UTF-8 bytes, from a compiled
 * dataset. As an object: the location's and network's values read from
 * their rows (numbers as numbers, strings as slices of the dataset's text;
 * nothing parsed, nothing kept per location), the country's and the threat
 * object decoded once per row (tables of a few hundred rows), put together
 * with what changes per lookup, in the template's order
 * (`contract/template.ts`). Nested objects are shared and frozen, but those
 * made per lookup: `time_zone`, `asn` (which holds the route) and
 * `carrier`. As JSON: `render.ts`.
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import type { ZoneClock } from '../time/zone.js';
import type { Asn, AsnType, Carrier, IpRecord, Threat } from '../contract/types.js';
import { Countries } from './countries.js';
import {
  CARRIER_AT,
  LOC,
  LOCATION,
  NET,
  NETWORK,
  NO_ROUTE,
  NO_STRING,
  NO_ZONE,
  PL,
  PLACE,
  RECORD,
  type Dataset,
} from '../dataset/format.js';
import { ByteWriter } from '../text/writer.js';
import { ByteSink, writeRecord, type RenderState } from './render.js';

/** The `asn` object of a network row (at `net`) with a route, made per lookup (it holds the route). */
export function asnObject(ds: Dataset, net: number, version: IpVersion, words: ArrayLike<number>, prefix: number): Asn {
  const networks = ds.networks;
  return {
    asn: ds.string(networks, net + NET.asn) as string,
    name: ds.string(networks, net + NET.name),
    domain: ds.string(networks, net + NET.domain),
    route: formatCidr(version, words, prefix),
    type: ds.string(networks, net + NET.type) as AsnType | null,
  };
}

/** The `carrier` object of a network row (at `net`) that has one. */
export function carrierObject(ds: Dataset, net: number): Carrier {
  const networks = ds.networks;
  return {
    name: ds.string(networks, net + CARRIER_AT.name),
    mcc: ds.string(networks, net + CARRIER_AT.mcc) as string,
    mnc: ds.string(networks, net + CARRIER_AT.mnc) as string,
  };
}

/** Records as objects, text and bytes from one dataset. */
export class RecordObjects {
  readonly countries: Countries;
  private readonly bytes = new ByteSink();
  /** Where `json()` writes a record's bytes before they are decoded, reused (grown to the longest record). */
  private readonly scratch = new ByteWriter(2048);

  constructor(private readonly ds: Dataset) {
    this.countries = new Countries(ds);
  }

  /** The record of the address in `words` (in range `ref`); `threat` is its threat object, `flagBase` the flag's base URL. */
  record(
    clock: ZoneClock,
    version: IpVersion,
    words: ArrayLike<number>,
    ref: number,
    s: RenderState,
    threat: Threat,
    flagBase: string,
  ): IpRecord {
    const { ds } = this;
    const rec = (ref >>> 8) * RECORD;
    const loc = ds.records[rec] * LOCATION;
    const locations = ds.locations;
    const c = this.countries.get(locations[loc + LOC.country]);
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
      ip: s.address.text,
      is_eu: c.is_eu,
      city: ds.string(places, place + PL.city),
      region: ds.string(places, place + PL.region),
      region_code: ds.string(places, place + PL.region_code),
      region_type: ds.string(places, place + PL.region_type),
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
      asn: asn === NO_STRING || prefix === NO_ROUTE ? null : asnObject(ds, net, version, words, prefix),
      ...(networks[net + CARRIER_AT.mcc] === NO_STRING ? {} : { carrier: carrierObject(ds, net) }),
      languages: c.languages,
      currency: c.currency,
      time_zone: zone === NO_ZONE ? null : clock.timeZone(ds.meta.zones[zone], s.now),
      threat,
      count: s.count,
    };
    return record;
  }

  /** The record's JSON text (`lookupJson`): its bytes, decoded in one piece. */
  json(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState): string {
    const out = this.scratch;
    out.used = 0;
    this.write(clock, version, words, ref, s, out);
    return out.toString();
  }

  /** Writes the record's JSON as UTF-8 to `out`. */
  write(clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, out: ByteWriter): void {
    const sink = this.bytes;
    sink.out = out;
    writeRecord(this.ds, this.countries, clock, version, words, ref, s, sink);
  }
}
