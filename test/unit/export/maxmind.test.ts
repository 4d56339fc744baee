/**
 * `export/maxmind.ts`'s records: MaxMind's key paths from a record's
 * members for random addresses of the default data (coordinates as
 * doubles, the ASN as a uint32, flags only where true, nothing for a
 * member without a value, no record where none is left), and the export
 * options refused where they make no sense, before any work.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { distinctAddresses } from '../../../bench/mix.js';
import { InvalidOptionsError } from '../../../src/contract/errors.js';
import { openSync } from '../../../src/engine/engine.js';
import { exportDataset } from '../../../src/export/index.js';
import { maxmindRecord } from '../../../src/export/maxmind.js';
import { staticRecord } from '../../../src/export/record.js';
import { Typed } from '../../../src/mmdb/writer.js';
import { seed } from '../../helpers/env.js';

/** The value at a dotted path (a list's index as a key), or null. */
const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v === null || v === undefined ? v : (v as Record<string, unknown>)[k]), o) ?? null;

/** The paths under `o` whose value is null, undefined or an empty object or list. */
const emptyPaths = (o: unknown, at = ''): string[] => {
  if (o === null || o === undefined) return [at];
  if (typeof o !== 'object' || o instanceof Typed) return [];
  const entries = Object.entries(o);
  return entries.length === 0 ? [at] : entries.flatMap(([k, v]) => emptyPaths(v, at === '' ? k : `${at}.${k}`));
};

const engine = openSync();
afterAll(() => engine.close());
const addresses = [...distinctAddresses(1000, seed() + 7, 4), ...distinctAddresses(1000, seed() + 8, 6)];

describe("records in MaxMind's schemas", () => {
  it('put each member of the record under its MaxMind path, leaving out what has no value', () => {
    for (const ip of addresses) {
      const r = staticRecord(engine.lookup(ip));
      const city = maxmindRecord('city', r);
      expect(get(city, 'country.iso_code')).toBe(r.country_code);
      expect(get(city, 'country.is_in_european_union') ?? false).toBe(r.is_eu === true);
      expect(get(city, 'subdivisions.0.iso_code')).toBe(r.region_code);
      expect(get(city, 'city.names.en')).toBe(r.city);
      expect(get(city, 'location.time_zone')).toBe(r.time_zone?.name ?? null);
      if (r.latitude !== null) expect(get(city, 'location.latitude')).toEqual(new Typed('double', r.latitude));
      const asn = maxmindRecord('asn', r);
      expect(asn === null).toBe(r.asn === null);
      if (r.asn !== null) expect(get(asn, 'autonomous_system_number')).toEqual(new Typed('uint32', Number(r.asn.asn.slice(2))));
      const anonymous = maxmindRecord('anonymous-ip', r) as Record<string, boolean> | null;
      for (const v of Object.values(anonymous ?? {})) expect(v).toBe(true);
      expect(anonymous?.is_hosting_provider ?? false).toBe(r.threat.is_datacenter);
      const enterprise = maxmindRecord('enterprise', r);
      expect(get(enterprise, 'traits.autonomous_system_organization')).toBe(r.asn?.name ?? null);
      expect(emptyPaths(enterprise)).toEqual([]);
    }
  });

  it('refuses a schema for a format without one, and a schema it does not know, before any work', async () => {
    await expect(exportDataset(engine, { format: 'csv', out: '/nonexistent/x.csv', schema: 'city' })).rejects.toThrow(InvalidOptionsError);
    await expect(exportDataset(engine, { format: 'mmdb', out: '/nonexistent/x.mmdb', schema: 'country' as 'city' })).rejects.toThrow(
      /Unknown export schema country \(iprecord, city, asn, anonymous-ip, enterprise\)/,
    );
  });
});
