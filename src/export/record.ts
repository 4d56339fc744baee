/**
 * The record an export holds per range: every key of the full record but
 * `ip`, `count` and the clock members of `time_zone` (`time_zone.name`
 * kept), nested as in the record; and its columns, dotted as
 * `enrich --fields` names them (`asn.name`), for the tabular formats.
 */

import type { Engine } from '../engine/engine.js';
import { formatIp } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';
import { fromBigInt } from '../ip/ranges.js';
import { InvalidOptionsError } from '../contract/errors.js';
import { FIELD_NAMES } from '../record/fields.js';
import { THREAT_FLAGS } from '../contract/template.js';
import type { IpRecord } from '../contract/types.js';

/** A record without what depends on the address or the moment. */
export type StaticRecord = Omit<IpRecord, 'ip' | 'count' | 'time_zone'> & { time_zone: { name: string } | null };

/** The static part of a record (the key order kept). */
export function staticRecord(r: IpRecord): StaticRecord {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === 'ip' || k === 'count') continue;
    out[k] = k === 'time_zone' ? (v === null ? null : { name: (v as { name: string }).name }) : v;
  }
  return out as StaticRecord;
}

/** A range's static record: the engine's answer at its first address, less what depends on the address or the moment. */
export function recordAt(engine: Engine, version: IpVersion, first: bigint): StaticRecord {
  return staticRecord(engine.lookup(formatIp(version, fromBigInt(version, first))));
}

/** The members of the record's objects, in their key order (CONTRACT.md); `threat.scores` nested once more. */
const MEMBERS: Readonly<Record<string, readonly string[]>> = {
  asn: ['asn', 'name', 'domain', 'route', 'type'],
  carrier: ['name', 'mcc', 'mnc'],
  currency: ['name', 'code', 'symbol', 'native', 'plural'],
  time_zone: ['name'],
  threat: [...THREAT_FLAGS, 'blocklists', 'scores.vpn_score', 'scores.proxy_score', 'scores.threat_score', 'scores.trust_score'],
};

/** The columns of a static record, in the record's key order; lists (`languages`, `threat.blocklists`) are one column of JSON. */
export const EXPORT_COLUMNS: readonly string[] = FIELD_NAMES.filter((f) => f !== 'ip' && f !== 'count').flatMap(
  (f) => MEMBERS[f]?.map((m) => `${f}.${m}`) ?? [f],
);

/** A record's values by dotted path: scalars as they are, lists as JSON text; a member of a missing or null object is null. */
export function flatten(r: StaticRecord): Map<string, string | number | boolean | null> {
  const out = new Map<string, string | number | boolean | null>();
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) out.set(path, JSON.stringify(v));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path === '' ? k : `${path}.${k}`);
    else out.set(path, v as string | number | boolean | null);
  };
  walk(r, '');
  return out;
}

/** The names a CSV export's `fields` may give: a column of `EXPORT_COLUMNS`, a top-level key (its value, objects and lists as JSON), or `record` (the whole record's JSON). */
export const CSV_FIELDS: readonly string[] = [
  ...new Set([...EXPORT_COLUMNS, ...FIELD_NAMES.filter((f) => f !== 'ip' && f !== 'count'), 'record']),
];

/** Checks chosen CSV fields; the error names the first unknown one and why. */
export function checkCsvFields(fields: readonly string[]): void {
  if (fields.length === 0)
    throw new InvalidOptionsError('fields is empty: name at least one field (or leave it out for every column and record)');
  for (const f of fields) {
    if (CSV_FIELDS.includes(f)) continue;
    if (f === 'ip' || f === 'count' || f.startsWith('time_zone.'))
      throw new InvalidOptionsError(`${f} depends on the address or the moment and is not exported (time_zone.name is)`);
    throw new InvalidOptionsError(
      `${f} is not an exported field (a dotted column such as asn.name, a top-level key such as asn, or record)`,
    );
  }
}

/** A record's cells for chosen fields, by `flatten()`'s values: a top-level object or list as JSON, `record` as the whole record's JSON. */
export function fieldValues(
  r: StaticRecord,
  flat: Map<string, string | number | boolean | null>,
  fields: readonly string[],
): (string | number | boolean | null)[] {
  return fields.map((f) => {
    if (f === 'record') return JSON.stringify(r);
    if (flat.has(f)) return flat.get(f)!;
    const v = (r as unknown as Record<string, unknown>)[f];
    // A member of a null object, or an object or list at the top.
    return v === undefined ? null : v !== null && typeof v === 'object' ? JSON.stringify(v) : (v as string | number | boolean | null);
  });
}

/** A value with its null members left out, all the way down (MMDB has no null). */
export function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = withoutNulls(x);
  return out;
}
