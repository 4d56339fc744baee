/**
 * What the record's readers read (`record/select.ts`'s `Reading`) made by
 * hand over a snapshot of the default data, for the unit tests of the
 * readers and cells, beside an engine over the same data whose `lookup()`
 * is their reference; and the paths a record has.
 */

import { findRange, RECORD, THR, THREAT } from '../../src/dataset/format.js';
import { resolveOptions } from '../../src/engine/options.js';
import { Snapshot } from '../../src/engine/snapshot.js';
import { AddressCheck, Bad } from '../../src/ip/check.js';
import { specialTable } from '../../src/ip/special.js';
import type { Reading } from '../../src/record/select.js';
import { ASN_MEMBERS, CARRIER_MEMBERS, RECORD_MEMBERS } from '../../src/contract/template.js';
import { threatOf } from '../../src/record/threat.js';
import type { Threat } from '../../src/contract/types.js';

/** Every path of the record: its members, and the members of its objects. */
export const ALL_PATHS: readonly string[] = [
  ...RECORD_MEMBERS,
  ...ASN_MEMBERS.map((k) => `asn.${k}`),
  ...CARRIER_MEMBERS.map((k) => `carrier.${k}`),
  ...['name', 'code', 'symbol', 'native', 'plural'].map((k) => `currency.${k}`),
  ...['name', 'abbr', 'offset', 'is_dst', 'current_time'].map((k) => `time_zone.${k}`),
  ...Object.keys(threatOf(0)).map((k) => `threat.${k}`),
  ...Object.keys(threatOf(0).scores ?? {}).map((k) => `threat.scores.${k}`),
];

/** The value at a path of a record object: null where a member on the way is null or absent. */
export function at(record: unknown, path: string): unknown {
  let v = record as Record<string, unknown> | null | undefined;
  for (const k of path.split('.')) v = v?.[k] as Record<string, unknown> | null | undefined;
  return v ?? null;
}

/** A snapshot of the default data and a maker of readings over it. */
export function readings(): { snap: Snapshot; read: (ip: string, now: number, basic?: boolean) => Reading | null } {
  const snap = Snapshot.openSync(resolveOptions({}));
  const check = new AddressCheck(specialTable());
  const read = (ip: string, now: number, basic = false): Reading | null => {
    if (check.check(ip) !== Bad.None) return null;
    const ds = snap.dataset;
    const words = Uint32Array.from(check.words);
    const ref = findRange(ds, check.parsed.version, words);
    const threat = (): Threat =>
      JSON.parse(ds.json(ds.threats, ds.records[(ref >>> 8) * RECORD + 2] * THREAT + (basic ? THR.basic : THR.object)));
    return {
      ds,
      countries: snap.objects.countries,
      clock: snap.clock,
      version: check.parsed.version,
      words,
      ref,
      address: { text: check.parsed.text },
      now,
      count: '7',
      flagBase: 'https://flagcdn.com/w320',
      threat,
      basic,
    };
  };
  return { snap, read };
}
