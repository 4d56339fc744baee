/**
 * The databases of a configuration's `sources` given as URLs: `iprecord
 * update` downloads each into the dataset directory's `sources/` (gzip
 * or plain), validates it, and keeps it as the last good version; a build
 * compiles the last good versions. A source that fails keeps its last good
 * version; a role with a URL not downloaded yet is compiled from the
 * installed default data.
 *
 * Validation: the file opens as a database of a schema that can serve its
 * role (MMDB) or as ASN ranges (CSV), and a CSV ends at a line's end (a
 * download cut short is not taken for a smaller file); it holds at least
 * `minNetworks` networks, not fewer than `1 - maxShrink` times the last
 * good version's, and per family covers not less than `1 -
 * maxCoverageShrink` times the addresses the last good version covered
 * (both waived by `allowShrink`); and every check address of a family the
 * file covers is in it, with the stated country (geo) or ASN (asn).
 *
 * One source refused refuses them all: the downloads that passed are not
 * taken either, so a build never mixes a new file of one provider with an
 * old one of another (a geo source's IPv4 and IPv6 files, say).
 *
 * Over 300 lines: the download of a source, its checks for each role and
 * the taking of all of them together are one transaction, read in one
 * place.
 */

import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { openDatabase } from '../sources.js';
import { readRegistry } from '../asn/registry.js';
import { downloadToFile, type DownloadOptions } from '../../files/http.js';
import { readFileRange } from '../../files/read.js';
import { untilDone } from '../../files/stop.js';
import { writeAtomic } from '../../files/write.js';
import type { AsnFacts, GeoFacts, Role } from '../geo/facts.js';
import { parseIpInto, type IpVersion } from '../../ip/parse.js';
import type { Found } from '../../mmdb/reader.js';
import { isUrl, type SourcesConfig } from '../feeds/config.js';
import { sourcePath } from './local.js';
import { expandUrl, shownUrl } from '../../files/url.js';
import { readDownloadState, type DownloadState } from './origin.js';

/** A role of a source: a database's, or a network registry's (`sources.networks`). */
export type SourceRole = Role | 'networks';

export interface SourceUpdate {
  readonly role: SourceRole;
  /** As it may be shown: a secret in its query written `***` (`files/url.ts`). */
  readonly url: string;
  /** `updated`: a new download passed; `unchanged`: 304; `failed`: kept the last good download (if any). */
  readonly state: 'updated' | 'unchanged' | 'failed';
  readonly networks?: number;
  readonly error?: string;
}

export const ROLES_IN_ORDER: readonly SourceRole[] = ['geo', 'asn', 'anonymous', 'networks'];

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
export function validateSource(
  path: string,
  role: SourceRole,
  s: SourcesConfig,
  last: DownloadState | null,
  rules: ShrinkRules,
  kept = path,
): { networks: number; space: { 4: number; 6: number } } {
  if (role === 'networks') return validateRegistry(path, kept, last, rules);
  if (/\.csv$/i.test(path)) {
    const size = statSync(path).size;
    // Its rows are held in memory to be checked and compiled (the default ASN data's 32.6 MB: 0.61 GB at peak).
    if (size > s.maxCsvBytes)
      throw new Error(
        `${size} bytes of CSV, over sources.maxCsvBytes (${s.maxCsvBytes}): its rows are held in memory to be checked and compiled`,
      );
    if (!endsAtLineEnd(path, size)) throw new Error('the file does not end at the end of a line (cut short?)');
  }
  const db = openDatabase(path, role);
  // Networks and addresses covered of each family: IPv6 outside ::/96 and 2002::/16, where IPv6 trees file IPv4.
  const families: Record<IpVersion, number> = { 4: 0, 6: 0 };
  const space = { 4: 0, 6: 0 };
  db.file.forEachNetwork(4, (_w, prefix) => {
    families[4]++;
    space[4] += 2 ** (32 - prefix);
  });
  db.file.forEachNetwork(6, (w, prefix) => {
    if (w[0] === 0 || w[0] >>> 16 === 0x2002) return;
    families[6]++;
    space[6] += 2 ** (128 - prefix);
  });
  const networks = families[4] + families[6];
  const result = { networks, space };
  if (networks < s.minNetworks) throw new Error(`${networks} networks, fewer than the minimum ${s.minNetworks}`);
  if (last !== null && !rules.allowShrink) {
    if (networks < last.networks * (1 - rules.maxShrink))
      throw new Error(
        `${networks} networks, down from ${last.networks} (more than ${Math.round(rules.maxShrink * 100)} % fewer; --allow-shrink takes it)`,
      );
    for (const v of [4, 6] as const) {
      const before = last.space?.[v] ?? 0;
      if (space[v] < before * (1 - rules.maxCoverageShrink)) {
        throw new Error(
          `its IPv${v} networks cover ${share(space[v], before)} of the addresses the last good version covered (more than ${Math.round(rules.maxCoverageShrink * 100)} % fewer; --allow-shrink takes it)`,
        );
      }
    }
  }
  if (role === 'anonymous') return result;
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
  return result;
}

/** Checks a downloaded network registry: it reads as one, states a type or a domain for some network, and did not shrink past the rules. */
function validateRegistry(
  path: string,
  kept: string,
  last: DownloadState | null,
  rules: ShrinkRules,
): { networks: number; space: { 4: number; 6: number } } {
  const registry = readRegistry(path, kept);
  const { networks } = registry;
  if (registry.says.size === 0 && registry.domains.size === 0)
    throw new Error(
      registry.kind === 'bgptools-tag'
        ? `its tag ${JSON.stringify(registry.tag)} (from its name) states no type, or it lists no network`
        : `none of its ${networks} networks has a type or a domain it states`,
    );
  if (last !== null && !rules.allowShrink && networks < last.networks * (1 - rules.maxShrink))
    throw new Error(
      `${networks} networks, down from ${last.networks} (more than ${Math.round(rules.maxShrink * 100)} % fewer; --allow-shrink takes it)`,
    );
  return { networks, space: { 4: 0, 6: 0 } };
}

/** How a source may shrink against its last good version. */
export interface ShrinkRules {
  /** Largest accepted drop in networks (0.5: half may go). */
  readonly maxShrink: number;
  /** Largest accepted drop in the addresses covered, per family. */
  readonly maxCoverageShrink: number;
  /** Take a smaller source knowingly: neither drop is checked. */
  readonly allowShrink: boolean;
}

const share = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

/** Whether a file of `size` bytes is empty or its last byte ends a line. */
function endsAtLineEnd(path: string, size: number): boolean {
  return size === 0 || readFileRange(path, (n) => Buffer.alloc(n), size - 1, size)[0] === 0x0a;
}

/** A source that passed, waiting for the others: its checked file and the state to write beside it. */
interface Staged {
  readonly checked: string;
  readonly path: string;
  readonly state: DownloadState;
}

/** Downloads and validates one URL source, staging it (`commit` takes it). */
async function updateSource(
  role: SourceRole,
  index: number,
  url: string,
  dir: string,
  s: SourcesConfig,
  o: DownloadOptions & ShrinkRules,
  staged: Staged[],
): Promise<SourceUpdate> {
  const path = sourcePath(dir, role, index, url);
  const shown = shownUrl(url);
  const earlier = existsSync(path) ? readDownloadState(path) : null;
  const kept = earlier !== null ? '; kept the last good download' : '';
  // What an earlier download says (its validators for a conditional request, its size for the shrink rules) holds for the
  // URL it came from: a source whose URL changed is downloaded whole and checked on its own.
  const last = earlier?.url === url ? earlier : null;
  const tmp = `${path}.${process.pid}.download`;
  const plain = `${path}.${process.pid}.plain`;
  const done = untilDone(() => {
    rmSync(tmp, { force: true });
    rmSync(plain, { force: true });
  });
  // The URL requested, with its variables put in: never shown, nor kept in the download's state.
  let expanded = url;
  try {
    expanded = expandUrl(url);
    const got = await downloadToFile(expanded, last, { ...o, ...(s.userAgent === undefined ? {} : { userAgent: s.userAgent }) }, tmp);
    if (got === null) {
      // A 304 answers a conditional request; with no earlier download there was none to answer.
      if (last === null || !existsSync(path)) throw new Error('the server answered 304 Not Modified, but there is no earlier download');
      return { role, url: shown, state: 'unchanged', networks: last.networks };
    }
    let file = tmp;
    if (isGzip(tmp)) {
      await gunzipFile(tmp, plain, o.maxBytes);
      file = plain;
    }
    // The downloaded file keeps the name's extension (the CSV or MMDB of it) while it is checked.
    const checked = `${path}.${process.pid}.check${/\.csv$/i.test(path) ? '.csv' : ''}`;
    renameSync(file, checked);
    let found: ReturnType<typeof validateSource>;
    try {
      found = validateSource(checked, role, s, last, o, path);
    } catch (e) {
      rmSync(checked, { force: true });
      throw e;
    }
    const { networks, space } = found;
    staged.push({
      checked,
      path,
      state: { url, etag: got.etag, lastModified: got.lastModified, networks, space, fetchedAt: new Date().toISOString() },
    });
    return { role, url: shown, state: 'updated', networks };
  } catch (e) {
    return { role, url: shown, state: 'failed', error: (e as Error).message.split(expanded).join(shown) + kept };
  } finally {
    done();
    rmSync(tmp, { force: true });
    rmSync(plain, { force: true });
  }
}

/**
 * Updates every URL source of a configuration in `dir`, one at a time
 * (they are large): all that passed are taken when none failed; else none
 * is, and each that passed says it was refused with the others.
 */
export async function updateSources(
  s: SourcesConfig,
  dir: string,
  o: DownloadOptions & ShrinkRules,
  onEach: (u: SourceUpdate) => void = () => {},
): Promise<SourceUpdate[]> {
  mkdirSync(join(dir, 'sources'), { recursive: true });
  const out: SourceUpdate[] = [];
  const staged: Staged[] = [];
  const done = untilDone(() => {
    for (const { checked } of staged) rmSync(checked, { force: true });
  });
  try {
    for (const role of ROLES_IN_ORDER) {
      const list = s[role] ?? [];
      for (let i = 0; i < list.length; i++) {
        if (!isUrl(list[i])) continue;
        out.push(await updateSource(role, i, list[i], dir, s, o, staged));
        onEach(out[out.length - 1]);
      }
    }
    const failed = out.filter((u) => u.state === 'failed');
    if (failed.length > 0) {
      const why = `not taken: ${failed.map((f) => `${f.role} ${f.url}`).join(', ')} failed, and sources are taken together; kept the last good downloads`;
      return out.map((u) => (u.state === 'updated' ? { ...u, state: 'failed', error: why } : u));
    }
    for (const { checked, path, state } of staged.splice(0)) {
      renameSync(checked, path);
      writeAtomic(`${path}.json`, JSON.stringify(state) + '\n');
    }
    return out;
  } finally {
    done();
    for (const { checked } of staged) rmSync(checked, { force: true });
  }
}
