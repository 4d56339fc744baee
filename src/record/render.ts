/**
 * A record's JSON from the dataset as UTF-8 bytes (its text is these bytes
 * decoded): the members of `contract/template.ts` in order, as the country's
 * runs (`countries.ts`) and the parts the compiler rendered of the rows
 * (`dataset/parts.ts`), copied a word at a time, with what changes per lookup
 * written between them (`ip`, the flag's base URL, `asn.route`,
 * `time_zone`, `count`).
 */

import { maskInto } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import { memberText } from '../contract/template.js';
import { ByteWriter } from '../text/writer.js';
import type { Words } from '../text/words.js';
import type { ZoneClock } from '../time/zone.js';
import type { Countries, CountryRow } from './countries.js';
import {
  LOC,
  LOCATION,
  NET,
  NET_PART,
  NETWORK,
  NO_ROUTE,
  NO_STRING,
  NO_ZONE,
  PART_UTF8,
  RECORD,
  THR,
  THREAT,
  type Dataset,
} from '../dataset/format.js';

/** What a record is written with besides the address. */
export interface RenderState {
  /** The address: its canonical text (`text`, made for IPv6 only when asked for), `known` once it is (the text given, when canonical). */
  address: { readonly text: string; readonly known: string | null };
  /** When (microseconds since the epoch, for `current_time`). */
  now: number;
  /** The text of `count`, and whether it is the engine's own (digits: written without escapes). */
  count: string;
  ownCount: boolean;
  /** The threat object without `is_vpn` and `scores`. */
  basic: boolean;
  /** The base URL of `flag` as JSON string text (escaped, without quotes), in UTF-8 at the start of its words. */
  flagBase: Words;
  flagBaseEnd: number;
}

const IP = memberText('ip', true) + '"';

/**
 * Writes the record of the address in `words` (in range `ref`) to `out`:
 * the country's runs and the rows' parts (`dataset/parts.ts`) in the template's
 * order, what changes per lookup between them.
 */
export function writeRecord(
  ds: Dataset,
  countries: Countries,
  clock: ZoneClock,
  version: IpVersion,
  words: ArrayLike<number>,
  ref: number,
  s: RenderState,
  out: ByteSink,
): void {
  const rec = (ref >>> 8) * RECORD;
  const { records, locations, networks } = ds;
  // The rows first, then the start of each part: on addresses not seen before each is a read from memory, and these
  // are asked for together rather than one after another between copies.
  const loc = records[rec] * LOCATION;
  const net = records[rec + 1] * NETWORK;
  const placePart = locations[loc + LOC.placePart];
  const locationPart = locations[loc + LOC.part];
  const head = networks[net + NET_PART.head];
  const u32 = ds.parts.u32;
  out.touched = u32[placePart >>> 2] ^ u32[locationPart >>> 2] ^ u32[head >>> 2];
  const country = countries.get(locations[loc + LOC.country]);
  out.raw(IP);
  out.address(s, version, words);
  out.raw('"');
  // Each run of the country's members ends with the key of the member after it: the place's, the location's.
  out.run(country, 0);
  out.part(ds, placePart, locations[loc + LOC.placePart + 1]);
  out.run(country, 1);
  out.part(ds, locationPart, locations[loc + LOC.part + 1]);
  out.run(country, 2);
  if (country.flagPath !== null) out.flagBase(s);
  out.run(country, 3);
  const prefix = ref & 255;
  if (networks[net + NET.asn] === NO_STRING || prefix === NO_ROUTE) out.raw('null');
  else {
    writeAsn(ds, net, version, words, prefix, out);
    out.part(ds, networks[net + NET_PART.carrier], networks[net + NET_PART.carrier + 1]);
  }
  out.run(country, 4);
  const zone = locations[loc + LOC.zone];
  if (zone === NO_ZONE) out.raw('null');
  else out.zone(clock, ds.meta.zones[zone], s.now);
  // The threat's part ends with the key of `count`.
  const threat = records[rec + 2] * THREAT + (s.basic ? THR.basicPart : THR.objectPart);
  out.part(ds, ds.threats[threat], ds.threats[threat + 1]);
  out.count(s.count, s.ownCount);
}

/** The `asn` object of a network row (at `net`) that has one, its route the address in `words` masked to `prefix`. */
export function writeAsn(ds: Dataset, net: number, version: IpVersion, words: ArrayLike<number>, prefix: number, out: ByteSink): void {
  const networks = ds.networks;
  out.part(ds, networks[net + NET_PART.head], networks[net + NET_PART.head + 1]);
  out.route(version, words, prefix);
  out.part(ds, networks[net + NET_PART.tail], networks[net + NET_PART.tail + 1]);
}

/** A record's JSON written as UTF-8 into a `ByteWriter` (`out`, set before each record). */
export class ByteSink {
  out: ByteWriter = NO_WRITER;
  /** What the first reads of a record's parts read: kept, so that the reads are not left out as unused. */
  touched = 0;
  /** An IPv6 route's words. */
  private readonly masked = new Uint32Array(4);

  /** ASCII text, as it is. */
  raw(text: string): void {
    this.out.latin1(text);
  }

  /** The canonical text of the address (the state's, or the words' in version). */
  address(s: RenderState, version: IpVersion, words: ArrayLike<number>): void {
    // A canonical address needs no escapes: its text copied where known (a dotted quad, IPv6 given canonically), else
    // IPv6 written from the words.
    const known = s.address.known;
    if (known !== null || version === 4) this.out.latin1(s.address.text);
    else this.out.ipv6(words);
  }

  /** Run `i` of a country row's members (`Countries`). */
  run(c: CountryRow, i: number): void {
    this.out.part(c.runs, c.runAt[2 * i], c.runAt[2 * i + 1]);
  }

  /** A part of the dataset (`dataset/parts.ts`): its start and its end word (PART_UTF8 set: not ASCII). */
  part(ds: Dataset, start: number, end: number): void {
    this.out.part(ds.parts, start, (end & ~PART_UTF8) >>> 0);
  }

  /** The base URL of `flag`. */
  flagBase(s: RenderState): void {
    this.out.part(s.flagBase, 0, s.flagBaseEnd);
  }

  /** `"a.b.c.d/p"` or an IPv6 network, quoted. */
  route(version: IpVersion, words: ArrayLike<number>, prefix: number): void {
    const out = this.out;
    if (version === 4) writeRoute4(out, words[3], prefix);
    else {
      out.latin1('"');
      out.ipv6(maskInto(6, words, prefix, this.masked));
      out.latin1('/');
      out.small(prefix);
      out.latin1('"');
    }
  }

  /** The `time_zone` object of a zone at a moment. */
  zone(clock: ZoneClock, name: string, now: number): void {
    clock.writeTimeZone(name, now, this.out);
  }

  /** The count's text (the engine's own: digits, written without escapes), then `}`. */
  count(text: string, own: boolean): void {
    const out = this.out;
    if (own) {
      out.latin1('"');
      out.latin1(text);
      out.latin1('"}');
    } else {
      out.jsonString(text);
      out.latin1('}');
    }
  }
}

const NO_WRITER = new ByteWriter(0);

/** `"a.b.c.d/p"`: an IPv4 address masked to a prefix, quoted. */
export function writeRoute4(out: ByteWriter, address: number, prefix: number): void {
  out.latin1('"');
  out.dottedQuad(prefix === 0 ? 0 : (address & (0xffffffff << (32 - prefix))) >>> 0);
  out.latin1('/');
  out.small(prefix);
  out.latin1('"');
}
