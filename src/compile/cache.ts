/**
 * Where compiled datasets live, and compiling one when none is up to date.
 * The default data (DB-IP Lite City and the ASN ranges of the installed
 * packages) compiles at install into the package's `data/default.iprd`,
 * else (install scripts off, or a read-only package folder) on first open
 * into the user's cache; databases given to `open()` compile on first open
 * into the cache, under a name derived from their identity (path, inode,
 * size, modification time), so that a changed file compiles again.
 */

import { closeSync, existsSync, mkdirSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeAtomic } from '../build/write.js';
import { defaultAsnSources, defaultGeoPaths, iprecordRoot } from '../data.js';
import { DATASET_FORMAT_VERSION, DATASET_MAGIC, HEADER } from '../dataset/format.js';
import { InvalidDatasetError } from '../errors.js';
import { parseIp } from '../ip/address.js';
import { buildSpecialTable } from '../ip/special.js';
import { compileDataset } from './dataset.js';
import { Sources, type SourceFile } from './sources.js';

/** Version of what the compiler resolves (regions, zones, network types...): a change makes every dataset compile again. */
export const COMPILER_VERSION = 1;

/** The databases a dataset is compiled from; null: the default data. */
export interface DatasetSources {
  readonly geo: readonly string[] | null;
  readonly asn: readonly string[] | null;
  readonly anonymous: readonly string[];
}

/** The user's cache folder of iprecord: `$XDG_CACHE_HOME/iprecord`, else `~/.cache/iprecord`. */
export function cacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'iprecord');
}

/** What a dataset compiled from these sources would be named in its metadata. */
export function datasetKey(sources: DatasetSources): string {
  const identity = (path: string) => {
    try {
      const st = statSync(path);
      return `${realpathSync(path)}:${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch (e) {
      throw new InvalidDatasetError(`Cannot read database ${path}: ${(e as Error).message}`, { cause: e });
    }
  };
  const geo = sources.geo === null ? defaultGeoPaths().map((p) => `default:${p}:${statSync(p).size}`) : sources.geo.map(identity);
  const asn = sources.asn === null ? [`default:${defaultAsnSources().source}`] : sources.asn.map(identity);
  return JSON.stringify({ format: DATASET_FORMAT_VERSION, compiler: COMPILER_VERSION, geo, asn, anonymous: sources.anonymous.map(identity) });
}

/** Places a dataset of these sources may live, in order of preference. */
function candidates(sources: DatasetSources, key: string): string[] {
  if (sources.geo === null && sources.asn === null && sources.anonymous.length === 0) return [join(iprecordRoot(), 'data', 'default.iprd'), join(cacheDir(), 'default.iprd')];
  return [join(cacheDir(), 'datasets', `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.iprd`)];
}

/** The `key` of a dataset file's metadata, read from its header and tail only; null when it is not a readable dataset. */
export function readDatasetKey(path: string): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(HEADER);
    if (readSync(fd, head, 0, HEADER, 0) !== HEADER || head.toString('latin1', 0, 8) !== DATASET_MAGIC || head.readUInt32LE(8) !== DATASET_FORMAT_VERSION) return null;
    const metaBytes = head.readUInt32LE(48);
    const size = statSync(path).size;
    const meta = Buffer.alloc(metaBytes);
    if (readSync(fd, meta, 0, metaBytes, size - metaBytes) !== metaBytes) return null;
    const key = (JSON.parse(meta.toString('utf8')) as { key?: unknown }).key;
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The special-purpose registry as the compiler uses it. */
export function specialTable() {
  return buildSpecialTable((text) => [...(parseIp(text)?.words ?? [0, 0, 0, 0])]);
}

/** The sources opened for the compiler (the default ASN ranges compiled into an MMDB in memory). */
export function openSources(sources: DatasetSources): Sources {
  let asn: readonly SourceFile[];
  if (sources.asn !== null) asn = sources.asn;
  else {
    const { files, source } = defaultAsnSources();
    asn = [{ path: source, csv: files }];
  }
  return new Sources({ geo: sources.geo ?? defaultGeoPaths(), asn, anonymous: sources.anonymous });
}

/**
 * The path of an up-to-date dataset compiled from `sources`, compiling it
 * (written to a temporary file, then renamed into place) when there is
 * none; `say` is told what happens (by default, standard error).
 * @throws InvalidDatasetError when a source cannot be read or no place can be written
 */
export function ensureDataset(sources: DatasetSources, say: (line: string) => void = (line) => process.stderr.write(`iprecord: ${line}\n`)): string {
  const key = datasetKey(sources);
  const places = candidates(sources, key);
  for (const path of places) if (existsSync(path) && readDatasetKey(path) === key) return path;
  const started = Date.now();
  const what = sources.geo === null && sources.asn === null ? 'the default data' : 'the databases given to open()';
  say(`compiling ${what} into one dataset (once; the default data takes about a minute)...`);
  const compiled = compileDataset(openSources(sources), null, specialTable(), key);
  let lastError: unknown;
  for (const path of places) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeAtomic(path, compiled.buffer);
      say(`compiled ${compiled.ranges.v4 + compiled.ranges.v6} ranges into ${path} (${(compiled.buffer.length / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return path;
    } catch (e) {
      lastError = e;
    }
  }
  throw new InvalidDatasetError(`Cannot write the compiled dataset to ${places.join(' or ')}.`, { cause: lastError });
}
