/**
 * The pieces a record's JSON text is made of, per location, country,
 * network and threat label: made once per (frozen, shared) part of a
 * record, as text (`Engine.lookupJson`) and as UTF-8 bytes
 * (`Engine.writeJson`). A process that writes bytes never makes the text
 * of a piece, and the other way round.
 */

import type { AsnPart, GeoPart } from '../snapshot.js';
import type { Threat } from '../types.js';
import { ByteWriter } from './writer.js';

type Country = NonNullable<GeoPart['country']>;

/** A piece made once per object. */
function once<K extends object, T>(cache: WeakMap<K, T>, key: K, make: (key: K) => T): T {
  let s = cache.get(key);
  if (s === undefined) {
    s = make(key);
    cache.set(key, s);
  }
  return s;
}

/** The record's keys from `is_eu` to `emoji_unicode`, as JSON text after a comma. */
export function geoRun(geo: GeoPart | null): string {
  const c = geo === null ? null : geo.country;
  const text = JSON.stringify({
    is_eu: c === null ? null : c.is_eu,
    city: geo === null ? null : geo.city,
    region: geo === null ? null : geo.region,
    region_code: geo === null ? null : geo.region_code,
    region_type: geo === null ? null : geo.region_type,
    country_name: c === null ? null : c.country_name,
    country_code: c === null ? null : c.country_code,
    continent_name: c === null ? null : c.continent_name,
    continent_code: c === null ? null : c.continent_code,
    latitude: geo === null ? null : geo.latitude,
    longitude: geo === null ? null : geo.longitude,
    postal: geo === null ? null : geo.postal,
    calling_code: c === null ? null : c.calling_code,
    flag: c === null ? null : c.flag,
    emoji_flag: c === null ? null : c.emoji_flag,
    emoji_unicode: c === null ? null : c.emoji_unicode,
  });
  return ',' + text.slice(1, -1);
}

/**
 * A country's keys in `geoRun`, in UTF-8, around the location's own: up
 * to `"city":`, from `country_name` up to `"latitude":`, and from
 * `calling_code` on.
 */
interface CountryRun {
  readonly beforeCity: Uint8Array;
  readonly beforeLatitude: Uint8Array;
  readonly afterPostal: Uint8Array;
}

function countryRunOf(c: Country | null): CountryRun {
  /** The country's members `keys`, as JSON text after a comma. */
  const members = (keys: readonly (keyof Country)[]) => ',' + JSON.stringify(Object.fromEntries(keys.map((k) => [k, c === null ? null : c[k]]))).slice(1, -1);
  return {
    beforeCity: Buffer.from(members(['is_eu']) + ',"city":'),
    beforeLatitude: Buffer.from(members(['country_name', 'country_code', 'continent_name', 'continent_code']) + ',"latitude":'),
    afterPostal: Buffer.from(members(['calling_code', 'flag', 'emoji_flag', 'emoji_unicode'])),
  };
}

const countryRuns = new WeakMap<Country, CountryRun>();
const NO_COUNTRY_RUN = countryRunOf(null);
/** Where a location's bytes are put together before they are copied out at their length. */
const scratch = new ByteWriter(4096);

function value(out: ByteWriter, v: string | number | null): void {
  if (typeof v === 'string') out.jsonString(v);
  else out.latin1(JSON.stringify(v));
}

/** A member after a comma: `key` is its text up to the value (`,"region":`). */
function member(out: ByteWriter, key: string, v: string | number | null): void {
  out.latin1(key);
  value(out, v);
}

/** `geoRun(geo)` in UTF-8: its country's bytes and the location's own values (a location has a piece of its own, most of which is its country's). */
export function geoRunBytes(geo: GeoPart): Uint8Array {
  const c = geo.country;
  const run = c === null ? NO_COUNTRY_RUN : once(countryRuns, c, countryRunOf);
  const out = scratch;
  out.used = 0;
  out.bytes(run.beforeCity);
  value(out, geo.city);
  member(out, ',"region":', geo.region);
  member(out, ',"region_code":', geo.region_code);
  member(out, ',"region_type":', geo.region_type);
  out.bytes(run.beforeLatitude);
  value(out, geo.latitude);
  member(out, ',"longitude":', geo.longitude);
  member(out, ',"postal":', geo.postal);
  out.bytes(run.afterPostal);
  // A copy at its length, from Node's pool of small buffers (as `Buffer.from` of the other pieces).
  const bytes = Buffer.allocUnsafe(out.used);
  out.buf.copy(bytes, 0, 0, out.used);
  return bytes;
}

function countryRun(c: Country): string {
  return ',"languages":' + JSON.stringify(c.languages) + ',"currency":' + JSON.stringify(c.currency);
}

const NO_GEO = geoRun(null);
const NO_GEO_BYTES = Buffer.from(NO_GEO);
const NO_COUNTRY = ',"languages":null,"currency":null';
const NO_COUNTRY_BYTES = Buffer.from(NO_COUNTRY);

const countryText = new WeakMap<Country, string>();
const countryByteRuns = new WeakMap<Country, Uint8Array>();
const threatText = new WeakMap<Threat, string>();
const threatByteRuns = new WeakMap<Threat, Uint8Array>();

const stringify = (value: object): string => JSON.stringify(value);
const stringifyBytes = (value: object): Uint8Array => Buffer.from(JSON.stringify(value));
const countryRunBytes = (c: Country): Uint8Array => Buffer.from(countryRun(c));

/** The record's keys from `is_eu` to `emoji_unicode`, as JSON text after a comma. */
export function geoJson(geo: GeoPart | null): string {
  return geo === null ? NO_GEO : (geo.pieces.text ??= geoRun(geo));
}

/** `geoJson(geo)` in UTF-8. */
export function geoBytes(geo: GeoPart | null): Uint8Array {
  return geo === null ? NO_GEO_BYTES : (geo.pieces.bytes ??= geoRunBytes(geo));
}

/** `asn` (and `carrier` for mobile networks) as JSON text after a comma. */
export function netJson(net: AsnPart | null): string {
  return net === null ? ',"asn":null' : net.json;
}

/** `languages` and `currency` as JSON text after a comma. */
export function countryJson(geo: GeoPart | null): string {
  const c = geo === null ? null : geo.country;
  return c === null ? NO_COUNTRY : ((geo as GeoPart).pieces.countryText ??= once(countryText, c, countryRun));
}

/** `countryJson(geo)` in UTF-8. */
export function countryBytes(geo: GeoPart | null): Uint8Array {
  const c = geo === null ? null : geo.country;
  return c === null ? NO_COUNTRY_BYTES : ((geo as GeoPart).pieces.countryBytes ??= once(countryByteRuns, c, countryRunBytes));
}

/** The threat object as JSON text. */
export function threatJson(threat: Threat): string {
  return once(threatText, threat, stringify);
}

/** `threatJson(threat)` in UTF-8. */
export function threatBytes(threat: Threat): Uint8Array {
  return once(threatByteRuns, threat, stringifyBytes);
}
