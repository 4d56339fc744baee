/**
 * Chosen fields of a record, read on their own (`Engine.select`): each
 * path (a member, `country_code`, or a member of a member, `asn.asn`,
 * `threat.is_tor`, `threat.scores.trust_score`) is compiled once into a
 * reader of the rows that hold its value, so a lookup reads only those:
 * no record, no `asn` or `time_zone` object unless one is chosen.
 */

import { InvalidFieldError } from '../contract/errors.js';
import { formatCidr } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import {
  ASN_MEMBERS,
  CARRIER_MEMBERS,
  RECORD_MEMBERS,
  RECORD_TEMPLATE,
  type AsnMember,
  type PlaceMember,
  type RecordMember,
} from '../contract/template.js';
import { threatOf } from './threat.js';
import { nowMicros, type ZoneClock } from '../time/zone.js';
import type { FieldName, IpRecord, Threat } from '../contract/types.js';
import type { Countries, CountryRow } from './countries.js';
import { asnObject, carrierObject } from './objects.js';
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

/** What a path's reader reads: the range of the address and what changes per lookup (reused from lookup to lookup). */
export interface Reading {
  ds: Dataset;
  countries: Countries;
  clock: ZoneClock;
  version: IpVersion;
  words: ArrayLike<number>;
  /** The range's ref (record << 8 | route prefix). */
  ref: number;
  /** The address (its canonical text), the moment (µs; -1 until `momentOf` reads the clock), the text of `count`, the flag's base URL. */
  address: { readonly text: string };
  now: number;
  count: string;
  flagBase: string;
  /** The range's threat object (or its basic form, as the options say). */
  threat: () => Threat;
  /** Whether the options ask for the threat object's basic form. */
  basic: boolean;
}

type Reader = (r: Reading) => unknown;

/** The moment of a reading (µs), read from the clock by the first path that needs it (`time_zone`'s): a selection without one reads no clock. */
export function momentOf(r: Reading): number {
  if (r.now < 0) r.now = nowMicros();
  return r.now;
}

/** The members of the members that are objects, by path (a member's member: `threat.scores`). */
const MEMBERS: Readonly<Record<string, readonly string[]>> = {
  asn: ASN_MEMBERS,
  carrier: CARRIER_MEMBERS,
  currency: ['name', 'code', 'symbol', 'native', 'plural'],
  time_zone: ['name', 'abbr', 'offset', 'is_dst', 'current_time'],
  threat: Object.keys(threatOf(0)),
  'threat.scores': Object.keys(threatOf(0).scores ?? {}),
};

export const loc = (r: Reading) => r.ds.records[(r.ref >>> 8) * RECORD] * LOCATION;
export const net = (r: Reading) => r.ds.records[(r.ref >>> 8) * RECORD + 1] * NETWORK;
export const place = (r: Reading) => r.ds.locations[loc(r) + LOC.place] * PLACE;
export const country = (r: Reading): CountryRow => r.countries.get(r.ds.locations[loc(r) + LOC.country]);
const coordinate = (r: Reading, second: number) => {
  const v = r.ds.locationNumbers[(loc(r) >>> 1) + second];
  return Number.isNaN(v) ? null : v;
};
/** Whether the range has a network: its `asn` is an object. */
export const routed = (r: Reading, n: number) => r.ds.networks[n + NET.asn] !== NO_STRING && (r.ref & 255) !== NO_ROUTE;
export const hasCarrier = (r: Reading, n: number) => r.ds.networks[n + CARRIER_AT.mcc] !== NO_STRING;

/** `asn`'s members read on their own (`route`: the address masked to the range's prefix). */
const ASN_READERS = Object.fromEntries(
  ASN_MEMBERS.map((k): [AsnMember, (r: Reading, n: number) => unknown] =>
    k === 'route' ? [k, (r) => formatCidr(r.version, r.words, r.ref & 255)] : [k, (r, n) => r.ds.string(r.ds.networks, n + NET[k])],
  ),
) as Record<AsnMember, (r: Reading, n: number) => unknown>;

/** The reader of a member's whole value. */
function memberReader(m: RecordMember): Reader {
  switch (RECORD_TEMPLATE[m]) {
    case 'countries': {
      if (m === 'flag')
        return (r) => {
          const path = country(r).flagPath;
          return path === null ? null : r.flagBase + path;
        };
      const key = m as Exclude<keyof CountryRow, 'flagPath' | 'bytes'>;
      return (r) => country(r)[key];
    }
    case 'places': {
      const at = PL[m as PlaceMember];
      return (r) => r.ds.string(r.ds.places, place(r) + at);
    }
    case 'locations':
      if (m === 'postal') return (r) => r.ds.string(r.ds.locations, loc(r) + LOC.postal);
      return m === 'latitude' ? (r) => coordinate(r, 0) : (r) => coordinate(r, 1);
    case 'networks':
      if (m === 'asn')
        return (r) => {
          const n = net(r);
          return routed(r, n) ? asnObject(r.ds, n, r.version, r.words, r.ref & 255) : null;
        };
      return (r) => {
        const n = net(r);
        return hasCarrier(r, n) ? carrierObject(r.ds, n) : null;
      };
    case 'clock':
      return (r) => {
        const zone = r.ds.locations[loc(r) + LOC.zone];
        return zone === NO_ZONE ? null : r.clock.timeZone(r.ds.meta.zones[zone], momentOf(r));
      };
    case 'threats':
      return (r) => r.threat();
    default:
      return m === 'ip' ? (r) => r.address.text : (r) => r.count;
  }
}

/**
 * The reader of a path.
 * @throws InvalidFieldError when the record has no such member
 */
export function pathReader(path: string): Reader {
  const [m, ...rest] = path.split('.');
  if (!(RECORD_MEMBERS as readonly string[]).includes(m)) throw new InvalidFieldError(path);
  for (let i = 0; i < rest.length; i++) {
    const parent = [m, ...rest.slice(0, i)].join('.');
    if (!(MEMBERS[parent] ?? []).includes(rest[i])) throw new InvalidFieldError(path);
  }
  const member = m as RecordMember;
  if (rest.length === 0) return memberReader(member);
  // Members of `asn` and `carrier` are read on their own: their objects are made per lookup.
  if (member === 'asn') {
    const read = ASN_READERS[rest[0] as keyof typeof ASN_READERS];
    return (r) => {
      const n = net(r);
      return routed(r, n) ? read(r, n) : null;
    };
  }
  if (member === 'carrier') {
    const at = CARRIER_AT[rest[0] as keyof typeof CARRIER_AT];
    return (r) => {
      const n = net(r);
      return hasCarrier(r, n) ? r.ds.string(r.ds.networks, n + at) : null;
    };
  }
  const whole = memberReader(member);
  return (r) => {
    let v = whole(r) as Record<string, unknown> | null | undefined;
    for (const k of rest) v = v?.[k] as Record<string, unknown> | null | undefined;
    // A member the object lacks (the basic threat's `scores`): null.
    return v ?? null;
  };
}

/**
 * A selection compiled: a function that answers an object with each path
 * chosen (once, in the order given; blank entries left out; text:
 * separated by commas) and its value. The object is a literal of its
 * keys, made by generated code (`new Function`): stores under keys known
 * only at run time cost about 0.15 µs each; the keys are checked paths
 * of the record, written as JSON strings.
 * @throws InvalidFieldError naming a path the record has not; for a selection of nothing
 */
export function compileSelection(
  paths: string | readonly string[],
  carrierOnlyWhenPresent = false,
): (r: Reading) => Record<string, unknown> {
  if (typeof paths !== 'string' && !Array.isArray(paths)) throw new InvalidFieldError(String(paths));
  const list: string[] = [];
  for (const raw of typeof paths === 'string' ? paths.split(',') : paths) {
    if (typeof raw !== 'string') throw new InvalidFieldError(String(raw));
    const p = raw.trim();
    if (p !== '' && !list.includes(p)) list.push(p);
  }
  if (list.length === 0) throw new InvalidFieldError(typeof paths === 'string' ? paths : '');
  const readers = list.map(pathReader);
  const carrier = carrierOnlyWhenPresent ? list.indexOf('carrier') : -1;
  /** The object literal: every path but `carrier` when it has none, `carrier` read once before (`c`). */
  const literal = (withCarrier: boolean) =>
    list
      .flatMap((p, i) => (i !== carrier ? [`${JSON.stringify(p)}: f${i}(r)`] : withCarrier ? [`${JSON.stringify(p)}: c`] : []))
      .join(', ');
  // As a whole record has it: `carrier` only where the range has one (the object then has one shape or the other).
  const body =
    carrier < 0
      ? `return (r) => ({ ${literal(true)} });`
      : `return (r) => { const c = f${carrier}(r); return c === null ? ({ ${literal(false)} }) : ({ ${literal(true)} }); };`;
  const make = new Function(...readers.map((_, i) => `f${i}`), body) as (...f: Reader[]) => (r: Reading) => Record<string, unknown>;
  return make(...readers);
}

/** Selections of top-level fields as `lookup(ip, { fields })` answers them, by their parsed list (kept as long as `parseFields` keeps the list). */
const fieldSelections = new WeakMap<readonly FieldName[], (r: Reading) => Record<string, unknown>>();

/**
 * The record's members in the order given, as `lookup(ip, { fields })`
 * answers them: read on their own, `carrier` left out where the range has
 * none (as a whole record leaves it out).
 */
export function fieldSelection(fields: readonly FieldName[]): (r: Reading) => Record<string, unknown> {
  let f = fieldSelections.get(fields);
  if (f === undefined) fieldSelections.set(fields, (f = compileSelection(fields, true)));
  return f;
}

/** The value of `path` (a member, or a member's member) in a record of type `R`: null where the record or an object on the way may have none. */
export type PathValue<R, P extends string> = P extends keyof R
  ? Exclude<R[P], undefined> | (undefined extends R[P] ? null : never)
  : P extends `${infer A}.${infer B}`
    ? A extends keyof R
      ? PathValue<NonNullable<R[A]>, B> | (null extends R[A] ? null : undefined extends R[A] ? null : never)
      : unknown
    : unknown;

/** What a selector answers: each path chosen, with its value. */
export type Selected<P extends string> = { [K in P]: PathValue<IpRecord, K> };
