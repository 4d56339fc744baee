/**
 * Which schema an MMDB file uses, from its `database_type`, else from the
 * shape of its first record; and which roles each schema can fill.
 */

import { InvalidDatasetError } from '../../contract/errors.js';
import type { MmdbFile } from '../../mmdb/reader.js';
import { isRow } from './adapters/values.js';
import type { Role, Schema } from './facts.js';

const BY_TYPE: readonly (readonly [RegExp, Schema])[] = [
  [/anonymous-ip/i, 'maxmind-anonymous'],
  [/\bisp\b|-isp/i, 'maxmind-isp'],
  [/ipinfo/i, 'ipinfo-lite'],
  [/asn/i, 'maxmind-asn'],
  [/^(GeoIP2|GeoLite2|GeoIP)-(City|Country|Enterprise|Precision-Enterprise|Precision-City)/i, 'maxmind-city'],
  [/^(dbip|city|country)\b/i, 'flat'],
];

/** Roles a schema can fill. */
export const ROLES: Readonly<Record<Schema, readonly Role[]>> = {
  flat: ['geo'],
  'maxmind-city': ['geo'],
  'maxmind-asn': ['asn'],
  'maxmind-isp': ['asn'],
  'maxmind-anonymous': ['anonymous'],
  'ipinfo-lite': ['geo', 'asn'],
  'asn-csv': ['asn'],
  'geo-csv': ['geo'],
};

/**
 * @throws InvalidDatasetError when the schema is not one iprecord reads.
 */
export function detectSchema(file: MmdbFile, name: string): Schema {
  const type = file.metadata.databaseType;
  for (const [re, schema] of BY_TYPE) if (re.test(type)) return schema;
  const sample = file.firstRecord();
  if (isRow(sample)) {
    if ('state1' in sample || 'postcode' in sample) return 'flat';
    if ('as_name' in sample || 'as_domain' in sample) return 'ipinfo-lite';
    if ('is_anonymous' in sample || 'is_tor_exit_node' in sample) return 'maxmind-anonymous';
    if ('mobile_country_code' in sample || 'isp' in sample) return 'maxmind-isp';
    if ('autonomous_system_number' in sample) return 'maxmind-asn';
    if ('country' in sample || 'registered_country' in sample || 'location' in sample) return 'maxmind-city';
  }
  throw new InvalidDatasetError(`${name}: unknown MMDB schema (database_type "${type}").`);
}
