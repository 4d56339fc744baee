/**
 * A record's JSON from the dataset: its range's static fragments copied as
 * they are, with what changes per lookup written between them (`ip`,
 * `asn.route`, `time_zone`, `count`). See `compile/fragments.ts` for the
 * order of the pieces.
 */

import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import type { ByteWriter } from '../record/writer.js';
import type { ZoneClock } from '../time/zone.js';
import { COUNTRY, LOC, LOCATION, NET, NETWORK, NO_ROUTE, NO_ZONE, RECORD, THREAT, type Dataset } from './format.js';

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

/**
 * The range of an address: its ref (record << 8 | route prefix).
 * @throws InvalidDatasetError when the ref names no record (a damaged file: `Dataset.verify()`)
 */
export function findRange(ds: Dataset, version: IpVersion, words: ArrayLike<number>): number {
  const ref = version === 4 ? ds.find4(words[3]) : ds.find6(words);
  if (ref >>> 8 >= ds.recordCount) throw ds.badRef(ref);
  return ref;
}

/** Writes the record of the address in `words` (in range `ref`) as UTF-8 JSON. */
export function writeRecord(ds: Dataset, clock: ZoneClock, version: IpVersion, words: ArrayLike<number>, ref: number, s: RenderState, out: ByteWriter): void {
  const rec = (ref >>> 8) * RECORD;
  const prefix = ref & 255;
  const records = ds.records;
  const loc = records[rec] * LOCATION;
  const net = records[rec + 1] * NETWORK;
  const threat = records[rec + 2] * THREAT;
  const locations = ds.locations;
  const country = locations[loc + LOC.country] * COUNTRY;
  const countries = ds.countries;
  out.latin1('{"ip":"');
  // A canonical address needs no escapes.
  out.latin1(s.text);
  out.latin1('"');
  fragment(ds, countries[country], out);
  fragment(ds, locations[loc + LOC.placeFragment], out);
  fragment(ds, countries[country + 1], out);
  fragment(ds, locations[loc + LOC.pointFragment], out);
  fragment(ds, countries[country + 2], out);
  const after = countries[country + 3];
  if (ds.fragmentOffsets[after + 1] > ds.fragmentOffsets[after]) {
    out.text(s.flagBase);
    fragment(ds, after, out);
  }
  fragment(ds, ds.networks[net + NET.head], out);
  if (prefix !== NO_ROUTE) {
    if (version === 4) writeRoute4(out, words[3], prefix);
    else out.latin1('"' + formatCidr(6, words, prefix) + '"');
    fragment(ds, ds.networks[net + NET.tail], out);
  }
  fragment(ds, countries[country + 4], out);
  const zone = locations[loc + LOC.zone];
  out.latin1(',"time_zone":');
  if (zone === NO_ZONE) out.latin1('null');
  else clock.writeTimeZone(ds.meta.zones[zone], s.now, out);
  out.latin1(',"threat":');
  fragment(ds, ds.threats[threat + (s.basic ? 1 : 0)], out);
  out.latin1(',"count":');
  if (s.ownCount) {
    out.latin1('"');
    out.latin1(s.count);
    out.latin1('"}');
  } else {
    out.jsonString(s.count);
    out.latin1('}');
  }
}

/** The fragment id of the threat object (or its basic form) of a range. */
export function threatFragment(ds: Dataset, ref: number, basic: boolean): number {
  return ds.threats[ds.records[(ref >>> 8) * RECORD + 2] * THREAT + (basic ? 1 : 0)];
}

function fragment(ds: Dataset, id: number, out: ByteWriter): void {
  const offsets = ds.fragmentOffsets;
  out.slice(ds.fragments, offsets[id], offsets[id + 1]);
}

/** `"a.b.c.d/p"`: an IPv4 address masked to a prefix, quoted. */
export function writeRoute4(out: ByteWriter, address: number, prefix: number): void {
  out.latin1('"');
  out.dottedQuad(prefix === 0 ? 0 : (address & (0xffffffff << (32 - prefix))) >>> 0);
  out.latin1('/');
  out.small(prefix);
  out.latin1('"');
}
