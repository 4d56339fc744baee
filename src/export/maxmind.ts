/**
 * The MMDB export in MaxMind's own schemas, for the readers that take no
 * other (Elasticsearch's `geoip` processor, Logstash's `geoip` filter,
 * nginx's `geoip2` module, NiFi, MaxMind's typed readers): a record's
 * members under MaxMind's key paths, names in `en`, and a `database_type`
 * each of those readers accepts (docs/exports.md states their rules).
 *
 * - `city`: continent, country (`is_in_european_union` where true),
 *   subdivisions (the region, its ISO 3166-2 code), city, location
 *   (coordinates, time zone), postal.
 * - `asn`: `autonomous_system_number`, `autonomous_system_organization`.
 * - `anonymous-ip`: the anonymity flags from the threat flags, each
 *   present only where true, as MaxMind writes them; a network with none
 *   is not in the file (as in MaxMind's).
 * - `enterprise`: the city's members and `traits`: the network, its
 *   organisation and domain, connection and user type, mobile codes and
 *   the anonymity flags.
 *
 * Members with no source here are left out, never invented: geoname ids,
 * accuracy radius, registered and represented country, metro code,
 * `is_residential_proxy`, confidence. A network whose record has no member
 * of the schema is left out of the file: a reader answers it as not found.
 */

import type { Dataset } from '../dataset/format.js';
import type { Engine } from '../engine/engine.js';
import { MmdbWriter, Pointer, Typed, type WritableValue } from '../mmdb/writer.js';
import { insertRanges } from './mmdb.js';
import type { ExportRange } from './ranges.js';
import { recordAt, type StaticRecord } from './record.js';

export type MaxmindSchema = 'city' | 'asn' | 'anonymous-ip' | 'enterprise';
export const MAXMIND_SCHEMAS: readonly MaxmindSchema[] = ['city', 'asn', 'anonymous-ip', 'enterprise'];

/**
 * Each schema's `database_type`: Elasticsearch takes a type ending in
 * `-City`, `-ASN`, `-Anonymous-IP` or `-Enterprise`; Logstash, MaxMind's
 * Python and Node readers look for `City`, `GeoLite2-ASN`,
 * `GeoIP2-Anonymous-IP` and `Enterprise` in it.
 */
export const DATABASE_TYPES: Readonly<Record<MaxmindSchema, string>> = {
  city: 'iprecord-City',
  asn: 'iprecord-GeoLite2-ASN',
  'anonymous-ip': 'iprecord-GeoIP2-Anonymous-IP',
  enterprise: 'iprecord-Enterprise',
};

/** MaxMind's `user_type` for each `asn.type` (its values: business, college, government, hosting, residential, ...). */
const USER_TYPES = {
  isp: 'residential',
  hosting: 'hosting',
  business: 'business',
  education: 'college',
  government: 'government',
} as const;

type Value = { [k: string]: WritableValue | Value | Value[] };

/** `{ en: name }`, or nothing without a name. */
const names = (name: string | null): { names: Value } | null => (name === null ? null : { names: { en: name } });

/** The members of `o` whose values are not null or undefined; null when none is left. */
function present(o: Record<string, WritableValue | Value | Value[] | null | undefined>): Value | null {
  const out: Value = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v;
  return Object.keys(out).length === 0 ? null : out;
}

/** The anonymity flags of MaxMind's Anonymous-IP schema from the threat flags, only those that are true. */
function anonymity(r: StaticRecord): Value | null {
  const t = r.threat;
  const flags = {
    is_anonymous: t.is_anonymous,
    is_anonymous_vpn: t.is_vpn === true,
    is_hosting_provider: t.is_datacenter,
    is_public_proxy: t.is_proxy,
    is_tor_exit_node: t.is_tor,
  };
  return present(Object.fromEntries(Object.entries(flags).map(([k, v]) => [k, v ? true : null])));
}

/** The members of MaxMind's City schema in a record. */
function city(r: StaticRecord): Value | null {
  const at = (x: number | null) => (x === null ? null : new Typed('double', x));
  return present({
    city: names(r.city),
    continent: r.continent_code === null ? null : present({ code: r.continent_code, ...names(r.continent_name) }),
    country:
      r.country_code === null
        ? null
        : present({ iso_code: r.country_code, ...names(r.country_name), is_in_european_union: r.is_eu || null }),
    location: present({
      latitude: at(r.latitude),
      longitude: at(r.longitude),
      time_zone: r.time_zone?.name ?? null,
    }),
    postal: r.postal === null ? null : { code: r.postal },
    subdivisions: r.region === null && r.region_code === null ? null : [present({ iso_code: r.region_code, ...names(r.region) })!],
  });
}

/** The members of MaxMind's ASN schema in a record. */
function asn(r: StaticRecord): Value | null {
  if (r.asn === null) return null;
  return present({
    autonomous_system_number: new Typed('uint32', Number(r.asn.asn.slice(2))),
    autonomous_system_organization: r.asn.name,
  });
}

/** The record of a schema, or null where it has none of the schema's members. */
export function maxmindRecord(schema: MaxmindSchema, r: StaticRecord): Value | null {
  if (schema === 'city') return city(r);
  if (schema === 'asn') return asn(r);
  if (schema === 'anonymous-ip') return anonymity(r);
  // A record has `carrier` only for mobile networks.
  const carrier = r.carrier ?? null;
  const traits = present({
    ...asn(r),
    organization: r.asn?.name ?? null,
    isp: carrier?.name ?? null,
    domain: r.asn?.domain ?? null,
    connection_type: carrier === null ? null : 'Cellular',
    user_type: carrier !== null ? 'cellular' : r.asn?.type == null ? null : USER_TYPES[r.asn.type],
    mobile_country_code: carrier?.mcc ?? null,
    mobile_network_code: carrier?.mnc ?? null,
    ...anonymity(r),
  });
  return present({ ...city(r), traits });
}

/**
 * A record whose members that are maps or lists (a country, a city, a
 * location, the traits) are pointers to them, each written once: records
 * of one place differ only in a member or two.
 */
function pointing(w: MmdbWriter, record: Value): WritableValue {
  const out: Record<string, WritableValue> = {};
  for (const [k, v] of Object.entries(record))
    out[k] = typeof v === 'object' && !(v instanceof Typed) ? new Pointer(w.shared(v as WritableValue)) : v;
  return out;
}

/**
 * Writes the ranges' records in a MaxMind schema to `path` (through
 * `path`.data): each dataset record mapped once, equal maps stored once,
 * ranges side by side with one map joined into one network. `rows`
 * counts the networks in the tree.
 */
export async function writeMaxmindMmdb(
  engine: Engine,
  ds: Dataset,
  walked: Iterable<ExportRange>,
  path: string,
  schema: MaxmindSchema,
): Promise<{ ranges: { v4: number; v6: number }; rows: number; bytes: number }> {
  const w = new MmdbWriter({
    databaseType: DATABASE_TYPES[schema],
    description: { en: `iprecord records in MaxMind's ${schema} schema (members without a source left out)` },
    languages: ['en'],
    spillTo: `${path}.data`,
  });
  // By dataset record: where its map is (-1: not yet mapped; -2: it has none of the schema's members, left out).
  const at = new Float64Array(ds.recordCount).fill(-1);
  const { ranges, rows } = await insertRanges(w, walked, (version, first, ref) => {
    const i = ref >>> 8;
    if (at[i] === -1) {
      const record = maxmindRecord(schema, recordAt(engine, version, first));
      at[i] = record === null ? -2 : w.shared(pointing(w, record));
    }
    return at[i];
  });
  return { ranges, rows, bytes: await w.writeFile(path) };
}
