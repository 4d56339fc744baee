/**
 * The databases of a configuration's `sources` given as URLs: `iprecord
 * update` downloads each into the dataset directory's `sources/` (gzip
 * or plain), validates it, and keeps it as the last good version; a build
 * compiles the last good versions. A source that fails keeps its last good
 * version; a role with a URL not downloaded yet is compiled from the
 * installed default data.
 *
 * Validation: the file opens as a database of a schema that can serve its
 * role (MMDB) or as ASN ranges (CSV); it holds at least `minNetworks`
 * networks, and not fewer than `1 - maxShrink` times the last good
 * version's; and every check address of a family the file covers is in it,
 * with the stated country (geo) or ASN (asn).
 */

import { closeSync, createReadStream, createWriteStream, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { openDatabase } from '../compile/sources.js';
import { downloadToFile, type DownloadOptions } from '../files/http.js';
import { writeAtomic } from '../files/write.js';
import type { AsnFacts, GeoFacts, Role } from '../geo/facts.js';
import { parseIpInto, type IpVersion } from '../ip/parse.js';
import type { Found } from '../mmdb/reader.js';
import { isUrl, type SourcesConfig } from '../threat/config.js';
import { sourcePath } from './local.js';
import { readDownloadState, type DownloadState } from './origin.js';

export interface SourceUpdate {
  readonly role: Role;
  readonly url: string;
  /** `updated`: a new download passed; `unchanged`: 304; `failed`: kept the last good download (if any). */
  readonly state: 'updated' | 'unchanged' | 'failed';
  readonly networks?: number;
  readonly error?: string;
}

const ROLES_IN_ORDER: readonly Role[] = ['geo', 'asn', 'anonymous'];

/** Whether a file starts as gzip does. */
function isGzip(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** Decompresses `from` into `to`, refusing more than `maxBytes` out. @throws Error */
async function gunzipFile(from: string, to: string, maxBytes: number): Promise<void> {
  let size = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      done(size > maxBytes ? new Error(`more than ${maxBytes} bytes once decompressed`) : null, chunk);
    },
  });
  await pipeline(createReadStream(from), createGunzip(), cap, createWriteStream(to));
}

/**
 * Checks a downloaded database for its role: its networks, or why it is
 * refused. @throws Error with the reason
 */
export function validateSource(path: string, role: Role, s: SourcesConfig, last: number | null, maxShrink: number): number {
  const db = openDatabase(path, role);
  // Networks of each family: IPv6 ones outside ::/96 and 2002::/16, where IPv6 trees file IPv4.
  const families: Record<IpVersion, number> = { 4: 0, 6: 0 };
  db.file.forEachNetwork(4, () => families[4]++);
  db.file.forEachNetwork(6, (w) => {
    if (w[0] !== 0 && w[0] >>> 16 !== 0x2002) families[6]++;
  });
  const networks = families[4] + families[6];
  if (networks < s.minNetworks) throw new Error(`${networks} networks, fewer than the minimum ${s.minNetworks}`);
  if (last !== null && networks < last * (1 - maxShrink)) throw new Error(`${networks} networks, down from ${last} (more than ${Math.round(maxShrink * 100)} % fewer)`);
  if (role === 'anonymous') return networks;
  const words = new Uint32Array(4);
  const found: Found = { offset: -1, prefix: 0 };
  for (const c of s.checks) {
    const want = role === 'geo' ? c.country : c.asn;
    const version = parseIpInto(c.ip, words);
    if (want === undefined || version === 0 || families[version] === 0) continue;
    db.file.find(version, words, found);
    const facts = found.offset < 0 ? null : db.facts(found.offset);
    const got = facts === null ? undefined : role === 'geo' ? (facts as GeoFacts).countryCode : (facts as AsnFacts).asn;
    const say = (v: unknown) => (role === 'geo' ? `in ${String(v)}` : `AS${String(v)}`);
    if (got !== want) throw new Error(`${c.ip} is ${got === undefined || got === null ? 'not in it' : say(got)}, not ${say(want)}`);
  }
  return networks;
}

/** Downloads, validates and keeps one URL source. */
async function updateSource(role: Role, index: number, url: string, dir: string, s: SourcesConfig, o: DownloadOptions & { maxShrink: number }): Promise<SourceUpdate> {
  const path = sourcePath(dir, role, index, url);
  const last = existsSync(path) ? readDownloadState(path) : null;
  const kept = last !== null ? '; kept the last good download' : '';
  const tmp = `${path}.${process.pid}.download`;
  const plain = `${path}.${process.pid}.plain`;
  try {
    const got = await downloadToFile(url, last, o, tmp);
    if (got === null) return { role, url, state: 'unchanged', networks: last?.networks };
    let file = tmp;
    if (isGzip(tmp)) {
      await gunzipFile(tmp, plain, o.maxBytes);
      file = plain;
    }
    // The downloaded file keeps the name's extension (the CSV or MMDB of it) while it is checked.
    const checked = `${path}.${process.pid}.check${/\.csv$/i.test(path) ? '.csv' : ''}`;
    renameSync(file, checked);
    let networks: number;
    try {
      networks = validateSource(checked, role, s, last?.networks ?? null, o.maxShrink);
    } catch (e) {
      rmSync(checked, { force: true });
      throw e;
    }
    renameSync(checked, path);
    const state: DownloadState = { url, etag: got.etag, lastModified: got.lastModified, networks, fetchedAt: new Date().toISOString() };
    writeAtomic(`${path}.json`, JSON.stringify(state) + '\n');
    return { role, url, state: 'updated', networks };
  } catch (e) {
    return { role, url, state: 'failed', error: (e as Error).message + kept };
  } finally {
    rmSync(tmp, { force: true });
    rmSync(plain, { force: true });
  }
}

/** Updates every URL source of a configuration in `dir`, one at a time (they are large). */
export async function updateSources(s: SourcesConfig, dir: string, o: DownloadOptions & { maxShrink: number }): Promise<SourceUpdate[]> {
  mkdirSync(join(dir, 'sources'), { recursive: true });
  const out: SourceUpdate[] = [];
  for (const role of ROLES_IN_ORDER) {
    const list = s[role] ?? [];
    for (let i = 0; i < list.length; i++) if (isUrl(list[i])) out.push(await updateSource(role, i, list[i], dir, s, o));
  }
  return out;
}
