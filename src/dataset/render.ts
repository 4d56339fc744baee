/**
 * A record's JSON from the dataset, as text or as UTF-8 bytes, by one
 * writer: the members of `record/template.ts` in order, the static values
 * copied as the dataset stores them (JSON text), with what changes per
 * lookup written between them (`ip`, the flag's base URL, `asn.route`,
 * `time_zone`, `count`). A sink takes the pieces: `TextSink` joins them
 * into a string, `ByteSink` writes them into a buffer.
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import { ASN_MEMBERS, CARRIER_MEMBERS, memberText, PLACE_MEMBERS } from '../record/template.js';
import type { ByteWriter } from '../record/writer.js';
import type { ZoneClock } from '../time/zone.js';
import type { Countries, CountryRow } from './countries.js';
import { CARRIER_AT, LOC, LOCATION, NET, NETWORK, NO_ROUTE, NO_STRING, NO_ZONE, PLACE, RECORD, THR, THREAT, type Dataset } from './format.js';

/** What a record is written with besides the address. */
export interface RenderState {
  /** The canonical text of the address. */
  text: string;
  /** When (microseconds since the epoch, for `current_time`). */
  now: number;
  /** The text of `count`, and whether it is the engine's own (digits: written without escapes). */
  count: string;
  ownCount: boolean;
  /** The threat object without `is_vpn` and `scores`. */
  basic: boolean;
  /** The base URL of `flag`, as JSON string text (escaped, without quotes). */
  flagBase: string;
}

/** Where a record's pieces go. */
export interface RecordSink {
  /** ASCII text, as it is. */
  raw(text: string): void;
  /** Text, UTF-8 encoded where it goes. */
  text(text: string): void;
  /** The JSON text of the value a table row holds at `at` (`null` for none). */
  value(row: Uint32Array, at: number): void;
  /** Run `i` of a country row's members (`Countries`). */
  country(c: CountryRow, i: number): void;
  /** `"a.b.c.d/p"` or an IPv6 network, quoted. */
  route(version: IpVersion, words: ArrayLike<number>, prefix: number): void;
  /** The `time_zone` object of a zone at a moment. */
  zone(clock: ZoneClock, name: string, now: number): void;
  /** `,"count":` and the count's text (the engine's own: digits, written without escapes), then `}`. */
  count(text: string, own: boolean): void;
}

/**
 * The range of an address: its ref (record << 8 | route prefix).
 * @throws InvalidDatasetError when the ref names no record (a damaged file: `Dataset.verify()`)
 */
export function findRange(ds: Dataset, version: IpVersion, words: ArrayLike<number>): number {
  const ref = version === 4 ? ds.find4(words[3]) : ds.find6(words);
  if (ref >>> 8 >= ds.recordCount) throw ds.badRef(ref);
  return ref;
}

const M = {
  longitude: memberText('longitude'),
  postal: memberText('postal'),
  carrier: memberText('carrier'),
  threat: memberText('threat'),
  count: memberText('count'),
};
const IP = memberText('ip', true) + '"';
/** The keys of `asn`'s members and of the carrier's, as written before each, and where a network row holds each (`route`: -1, written per lookup). */
const ASN_KEYS = ASN_MEMBERS.map((k, i) => memberText(k, i === 0));
const ASN_COLUMNS = ASN_MEMBERS.map((k) => (k === 'route' ? -1 : NET[k]));
const CARRIER_KEYS = CARRIER_MEMBERS.map((k, i) => memberText(k, i === 0));
const CARRIER_COLUMNS = CARRIER_MEMBERS.map((k) => CARRIER_AT[k]);
/** The keys of the place's members, as written before each (`PLACE_MEMBERS`: a place row holds their values in order). */
const PLACE_KEYS = PLACE_MEMBERS.map((k) => memberText(k));
const COUNT = M.count + '"';

/** Writes the record of the address in `words` (in range `ref`) to `out`. */
export function writeRecord(ds: Dataset, countries: Countries, clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, out: RecordSink): void {
  const rec = (ref >>> 8) * RECORD;
  const records = ds.records;
  const locations = ds.locations;
  const loc = records[rec] * LOCATION;
  const country = countries.get(locations[loc + LOC.country]);
  const places = ds.places;
  const place = locations[loc + LOC.place] * PLACE;
  out.raw(IP);
  // A canonical address needs no escapes.
  out.raw(s.text);
  out.raw('"');
  // Each run of the country's members ends with the key of the member after it.
  out.country(country, 0);
  // The place's members (the key of the first ends the country's run before them).
  out.value(places, place);
  for (let i = 1; i < PLACE_KEYS.length; i++) {
    out.raw(PLACE_KEYS[i]);
    out.value(places, place + i * 2);
  }
  out.country(country, 1);
  out.value(locations, loc + LOC.latitude);
  out.raw(M.longitude);
  out.value(locations, loc + LOC.longitude);
  out.raw(M.postal);
  out.value(locations, loc + LOC.postal);
  out.country(country, 2);
  if (country.flagPath !== null) out.text(s.flagBase);
  out.country(country, 3);
  const net = records[rec + 1] * NETWORK;
  const networks = ds.networks;
  const prefix = ref & 255;
  if (networks[net + NET.asn] === NO_STRING || prefix === NO_ROUTE) out.raw('null');
  else {
    writeAsn(ds, net, version, words, prefix, out);
    if (networks[net + CARRIER_AT.mcc] !== NO_STRING) {
      out.raw(M.carrier);
      for (let i = 0; i < CARRIER_MEMBERS.length; i++) {
        out.raw(CARRIER_KEYS[i]);
        out.value(networks, net + CARRIER_COLUMNS[i]);
      }
      out.raw('}');
    }
  }
  out.country(country, 4);
  const zone = locations[loc + LOC.zone];
  if (zone === NO_ZONE) out.raw('null');
  else out.zone(clock, ds.meta.zones[zone], s.now);
  out.raw(M.threat);
  out.value(ds.threats, records[rec + 2] * THREAT + (s.basic ? THR.basic : THR.object));
  out.count(s.count, s.ownCount);
}

/** The `asn` object of a network row (at `net`) that has one, its route the address in `words` masked to `prefix`. */
export function writeAsn(ds: Dataset, net: number, version: IpVersion, words: ArrayLike<number>, prefix: number, out: RecordSink): void {
  const networks = ds.networks;
  for (let i = 0; i < ASN_MEMBERS.length; i++) {
    out.raw(ASN_KEYS[i]);
    const at = ASN_COLUMNS[i];
    if (at < 0) out.route(version, words, prefix);
    else out.value(networks, net + at);
  }
  out.raw('}');
}

/** A record's JSON as a string. */
export class TextSink implements RecordSink {
  /** The text written since it was last emptied. */
  s = '';

  constructor(private readonly ds: Dataset) {}

  raw(text: string): void {
    this.s += text;
  }

  text(text: string): void {
    this.s += text;
  }

  value(row: Uint32Array, at: number): void {
    this.s += this.ds.json(row, at);
  }

  country(c: CountryRow, i: number): void {
    this.s += c.texts[i];
  }

  route(version: IpVersion, words: ArrayLike<number>, prefix: number): void {
    this.s += '"' + formatCidr(version, words, prefix) + '"';
  }

  zone(clock: ZoneClock, name: string, now: number): void {
    this.s += clock.timeZoneJson(name, now);
  }

  count(text: string, own: boolean): void {
    this.s += own ? COUNT + text + '"}' : M.count + JSON.stringify(text) + '}';
  }
}

/** A record's JSON written as UTF-8 into a `ByteWriter` (`out`, set before each record). */
export class ByteSink implements RecordSink {
  out: ByteWriter | null = null;

  constructor(private readonly ds: Dataset) {}

  raw(text: string): void {
    (this.out as ByteWriter).latin1(text);
  }

  text(text: string): void {
    (this.out as ByteWriter).text(text);
  }

  value(row: Uint32Array, at: number): void {
    this.ds.writeJson(row, at, this.out as ByteWriter);
  }

  country(c: CountryRow, i: number): void {
    (this.out as ByteWriter).bytes(c.bytes[i]);
  }

  route(version: IpVersion, words: ArrayLike<number>, prefix: number): void {
    const out = this.out as ByteWriter;
    if (version === 4) writeRoute4(out, words[3], prefix);
    else out.latin1('"' + formatCidr(6, words, prefix) + '"');
  }

  zone(clock: ZoneClock, name: string, now: number): void {
    clock.writeTimeZone(name, now, this.out as ByteWriter);
  }

  count(text: string, own: boolean): void {
    const out = this.out as ByteWriter;
    if (own) {
      out.latin1(COUNT);
      out.latin1(text);
      out.latin1('"}');
    } else {
      out.latin1(M.count);
      out.jsonString(text);
      out.latin1('}');
    }
  }
}

/** `"a.b.c.d/p"`: an IPv4 address masked to a prefix, quoted. */
export function writeRoute4(out: ByteWriter, address: number, prefix: number): void {
  out.latin1('"');
  out.dottedQuad(prefix === 0 ? 0 : (address & (0xffffffff << (32 - prefix))) >>> 0);
  out.latin1('/');
  out.small(prefix);
  out.latin1('"');
}
