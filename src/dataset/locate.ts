/**
 * Where compiled datasets live, and having one compiled when none is up to
 * date.
 * The default data (DB-IP Lite City and the ASN ranges of the installed
 * packages) compiles at install into the package's `data/default.iprd`,
 * else (install scripts off, or a read-only package folder) on first open
 * into the user's cache; databases given to `open()` compile on first open
 * into the cache, under a name derived from their paths. The dataset's key
 * (each source's path, inode, size and modification time, the format and
 * compiler versions, and the tz release its zone rules would come from)
 * tells whether it is up to date: a changed file compiles again, into the
 * same place.
 */

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, readSync, realpathSync, statSync } from 'node:fs';
import { mustBeRegular, openRegular } from '../files/read.js';
import { killAndWait, untilDone } from '../files/stop.js';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultAsnSources, defaultGeoPaths } from './defaults.js';
import { iprecordRoot } from '../platform/root.js';
import { DATASET_FORMAT_VERSION, DATASET_MAGIC, HEADER, layout, readCounts } from './format.js';
import { InvalidDatasetError } from '../contract/errors.js';
import { ownEntry } from '../platform/threads.js';
import { zoneSource } from '../time/zoneinfo.js';

/** Version of what the compiler resolves (regions, zones, network types...): a change makes every dataset compile again. */
export const COMPILER_VERSION = 14;

/** The databases a dataset is compiled from (null: the default data), and the threat feeds compiled in (a threat.bin), if any. */
export interface DatasetSources {
  readonly geo: readonly string[] | null;
  readonly asn: readonly string[] | null;
  readonly anonymous: readonly string[];
  /** Network registries (`compile/asn/registry.ts`); none when absent. */
  readonly networks?: readonly string[];
  readonly threat?: string;
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
      // A device or a folder said here, before a compile is begun (and said) that would refuse it.
      mustBeRegular(path, st);
      // The modification time to the millisecond: what every runtime reads the same (Deno reads no finer).
      return `${realpathSync(path)}:${st.ino}:${st.size}:${Math.floor(st.mtimeMs)}`;
    } catch (e) {
      throw new InvalidDatasetError(`Cannot read database ${path}: ${(e as Error).message}`, { cause: e });
    }
  };
  const geo = sources.geo === null ? defaultGeoPaths().map((p) => `default:${p}:${statSync(p).size}`) : sources.geo.map(identity);
  const asn = sources.asn === null ? [`default:${defaultAsnSources().source}`] : sources.asn.map(identity);
  const threat = sources.threat === undefined ? {} : { threat: identity(sources.threat) };
  // The tz release the zone rules would come from: a newer one in the system's zoneinfo compiles again.
  const zones = zoneSource();
  const networks = (sources.networks ?? []).length === 0 ? {} : { networks: sources.networks!.map(identity) };
  return JSON.stringify({
    format: DATASET_FORMAT_VERSION,
    compiler: COMPILER_VERSION,
    geo,
    asn,
    anonymous: sources.anonymous.map(identity),
    ...networks,
    ...threat,
    zones: `${zones.tzdata} ${zones.source}`,
  });
}

/**
 * Places a dataset of these sources may live, in order of preference. The
 * name comes from the sources' paths, not their contents: a source that
 * changed compiles again into the same file (renamed over the old one, so
 * that old datasets do not pile up), and the key in the file tells whether
 * it is up to date.
 */
export function candidates(sources: DatasetSources): string[] {
  const networks = sources.networks ?? [];
  if (
    sources.geo === null &&
    sources.asn === null &&
    sources.anonymous.length === 0 &&
    networks.length === 0 &&
    sources.threat === undefined
  ) {
    return [join(iprecordRoot(), 'data', 'default.iprd'), join(cacheDir(), 'default.iprd')];
  }
  const real = (paths: readonly string[] | null) => paths?.map((p) => realpathSync(p)) ?? null;
  // Feeds merged in: one file per set of databases, whichever threat.bin (a new build's is a new path each time, and
  // one file per build would pile up); the key tells whether it holds this one.
  const threat = sources.threat === undefined ? {} : { threat: true };
  const name = JSON.stringify({
    geo: real(sources.geo),
    asn: real(sources.asn),
    anonymous: real(sources.anonymous),
    ...(networks.length === 0 ? {} : { networks: real(networks) }),
    ...threat,
  });
  return [join(cacheDir(), 'datasets', `${createHash('sha256').update(name).digest('hex').slice(0, 24)}.iprd`)];
}

/** The `key` of a dataset file's metadata, read from its header and tail only; null when it is not a readable dataset. */
export function readDatasetKey(path: string): string | null {
  let fd: number | undefined;
  try {
    fd = openRegular(path).fd;
    const head = Buffer.alloc(HEADER);
    if (
      readSync(fd, head, 0, HEADER, 0) !== HEADER ||
      head.toString('latin1', 0, 8) !== DATASET_MAGIC ||
      head.readUInt32LE(8) !== DATASET_FORMAT_VERSION
    )
      return null;
    const counts = readCounts(head);
    const meta = Buffer.alloc(counts.metaBytes);
    if (readSync(fd, meta, 0, counts.metaBytes, layout(counts).meta) !== counts.metaBytes) return null;
    const key = (JSON.parse(meta.toString('utf8')) as { key?: unknown }).key;
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The path of an up-to-date dataset compiled from `sources`, compiling it
 * when there is none: in a child process (`compile/main.ts`; in this one
 * after `compileInThisProcess`), so that the
 * compiler's code and its peak memory (about 1.7 GB for the default data)
 * never enter the process that looks up; it writes a temporary file and
 * renames it into place, and tells on standard error what it does.
 * @throws InvalidDatasetError when a source cannot be read or no place can be written
 */
export function ensureDataset(sources: DatasetSources): string {
  const key = datasetKey(sources);
  const places = candidates(sources);
  for (const path of places) if (existsSync(path) && readDatasetKey(path) === key) return path;
  if (compileHere !== null) return compiledHere(compileHere, { sources, key, places });
  const [command, args] = compilerCommand({ sources, key, places });
  const child = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 20 });
  return compiledPath(child.status, child.stdout, child.error?.message ?? `exit ${child.status ?? child.signal}`);
}

/**
 * Compiles a dataset in a child process without blocking (`iprecord
 * build`); its path.
 * @throws InvalidDatasetError when a source cannot be read or no place can be written
 */
export function compileInChild(job: CompileJob): Promise<string> {
  if (compileHere !== null) {
    const compile = compileHere;
    return new Promise((resolve) => resolve(compiledHere(compile, job)));
  }
  const [command, args] = compilerCommand(job);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    // Stopped by a signal (`files/stop.ts`), the command ends its compile first: the compile makes the directory it
    // writes into, and would make it again after the command's removal of the build being written.
    const done = child.pid === undefined ? () => {} : untilDone(() => killAndWait(child.pid!));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      done();
      try {
        resolve(compiledPath(code, out, `exit ${code ?? signal}`));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** A compiler run in this process instead of a child (`compileInThisProcess`), or null: a child process each compile. */
let compileHere: ((job: CompileJob) => string) | null = null;

/**
 * From now on, compiles in this process with `compile` (`compile/run.ts`'s
 * `compileTo` over the job) instead of a child process: for a process that
 * loads the compiler anyway and whose peak memory is not a concern, as a
 * test process is; null goes back to child processes.
 */
export function compileInThisProcess(compile: ((job: CompileJob) => string) | null): void {
  compileHere = compile;
}

/** A compile run here, failing as one in a child process does: an InvalidDatasetError with the compiler's message. */
function compiledHere(compile: (job: CompileJob) => string, job: CompileJob): string {
  try {
    return compile(job);
  } catch (e) {
    throw e instanceof InvalidDatasetError ? e : new InvalidDatasetError((e as Error).message, { cause: e });
  }
}

/** The compiler process's command line for a job. */
function compilerCommand(job: CompileJob): [string, string[]] {
  const entry = fileURLToPath(ownEntry(import.meta.url, '../compile/main.ts', 'compile'));
  // --expose-gc: the compiler lets go of what it built before it reads the file back (`compile/run.ts`).
  return [
    process.execPath,
    ['--expose-gc', ...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry, JSON.stringify({ ...job, parent: process.pid })],
  ];
}

/** The path the compiler process answered. @throws InvalidDatasetError with its error */
function compiledPath(status: number | null, stdout: string, failure: string): string {
  let answer: { path?: string; error?: string } = {};
  try {
    answer = JSON.parse(stdout.trim().split('\n').pop() ?? '') as typeof answer;
  } catch {
    // reported below
  }
  if (status === 0 && typeof answer.path === 'string') return answer.path;
  throw new InvalidDatasetError(answer.error ?? `The dataset compiler failed (${failure}).`);
}

/** What the compiler process is asked: the sources, the key to write into the dataset, the places to try in order. */
export interface CompileJob {
  readonly sources: DatasetSources;
  readonly key: string;
  readonly places: readonly string[];
  /** The process that started the compile: it stops when that one is gone (`compile/main.ts`). */
  readonly parent?: number;
}
