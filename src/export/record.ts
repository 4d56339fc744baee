/**
 * The record an export holds per range: every key of the full record but
 * `ip`, `count` and the clock members of `time_zone` (`time_zone.name`
 * kept), nested as in the record; and its columns, dotted as
 * `enrich --fields` names them (`asn.name`), for the tabular formats.
 */

import { FIELD_NAMES } from '../record/fields.js';
import type { IpRecord } from '../types.js';

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

/** The members of the record's objects, in their key order (CONTRACT.md); `threat.scores` nested once more. */
const MEMBERS: Readonly<Record<string, readonly string[]>> = {
  asn: ['asn', 'name', 'domain', 'route', 'type'],
  carrier: ['name', 'mcc', 'mnc'],
  currency: ['name', 'code', 'symbol', 'native', 'plural'],
  time_zone: ['name'],
  threat: [
    'is_tor',
    'is_vpn',
    'is_icloud_relay',
    'is_proxy',
    'is_datacenter',
    'is_anonymous',
    'is_known_attacker',
    'is_known_abuser',
    'is_threat',
    'is_bogon',
    'blocklists',
    'scores.vpn_score',
    'scores.proxy_score',
    'scores.threat_score',
    'scores.trust_score',
  ],
};

/** The columns of a static record, in the record's key order; lists (`languages`, `threat.blocklists`) are one column of JSON. */
export const EXPORT_COLUMNS: readonly string[] = FIELD_NAMES.filter((f) => f !== 'ip' && f !== 'count').flatMap((f) => MEMBERS[f]?.map((m) => `${f}.${m}`) ?? [f]);

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
