/**
 * Compiles the configured feeds into `threat.bin`, and a dataset directory:
 * `manifest.json` (what was built from what) beside `threat.bin`.
 *
 * A feed's source is a local path, or a URL whose last download (by
 * `iprecord update`) waits in the dataset's `feeds/` directory. A feed that
 * cannot be read is reported and left out; a bad line is reported with its
 * file and line and never stops the build.
 *
 * Over 300 lines: a build is one sequence (read the feeds, compile, carry first and last seen, write threat.bin and the manifest) over the same feed reports.
 */

import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { writeAtomic } from '../../files/write.js';
import { compileInChild, datasetKey } from '../../dataset/locate.js';
import type { Blocklist } from '../../contract/types.js';
import { isUrl, widestOf, type FeedConfig, type ThreatConfig } from './config.js';
import { localSources } from '../origins/local.js';
import { compileThreat, type CompileFeed, type CompileStats, type SliceOutput } from './compile.js';
import { ownEntry, startPool, type PoolWorker } from '../../platform/threads.js';
import type { BadLine } from './parse.js';
import { joinParts, prepareFeed, type Prepared, type PrepareTask } from './prepare.js';
import { carryForward, coveredBy, dayOf, encodeSeen, seenBefore, type Held } from './seen.js';
import type { FeedMeta, ThreatMeta } from '../../dataset/threat-meta.js';

export interface FeedReport {
  readonly name: string;
  readonly source: string;
  /** `ok`: compiled; `missing`: no local copy of a URL yet; `failed`: unreadable. */
  readonly state: FeedState;
  readonly entries: number;
  readonly skipped: number;
  readonly badLines: readonly (BadLine & { readonly file: string })[];
  readonly error?: string;
}

export interface BuildResult {
  readonly buffer: Buffer;
  readonly meta: ThreatMeta;
  readonly feeds: readonly FeedReport[];
  readonly stats: CompileStats;
  /** What each loaded list holds and the day of its download (`seen.ts`). */
  readonly held: readonly Held[];
}

export { DATASET_FILE, resolveDataset } from '../../dataset/store.js';
import { DATASET_FILE, MANIFEST_FILE, SEEN_FILE, THREAT_FILE, type FeedState, type Manifest } from '../../dataset/store.js';

/** Where the last download of a URL feed is kept in a dataset directory. */
export function feedCachePath(dataDir: string, name: string): string {
  return join(dataDir, 'feeds', name);
}

/** Where a feed is read from: its path, or for a URL the download in `dataDir`. */
function feedFile(feed: FeedConfig, dataDir: string | null): string | null {
  if (!isUrl(feed.source)) return feed.source;
  return dataDir === null ? null : feedCachePath(dataDir, feed.name);
}

/** Lists of at least twice this size are read in parts on several threads. */
const PART_BYTES = 16 << 20;

/** Byte ranges of whole lines that split a large list file into `threads` parts; none for a small file. */
function splitList(file: string, threads: number, partBytes: number): { from: number; to: number }[] {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return [];
  }
  const parts = Math.min(threads, Math.floor(size / partBytes));
  if (parts < 2) return [];
  const fd = openSync(file, 'r');
  try {
    const window = Buffer.allocUnsafe(1 << 16);
    const cuts = [0];
    for (let k = 1; k < parts; k++) {
      // The start of the first line at or after the k-th share of the bytes.
      let at = Math.max(cuts[cuts.length - 1], Math.floor((size * k) / parts) - 1);
      for (;;) {
        const n = readSync(fd, window, 0, window.length, at);
        const nl = window.subarray(0, n).indexOf(10);
        if (nl >= 0) {
          at += nl + 1;
          break;
        }
        if (n === 0) {
          at = size;
          break;
        }
        at += n;
      }
      if (at < size && at > cuts[cuts.length - 1]) cuts.push(at);
    }
    cuts.push(size);
    return cuts.slice(1).map((to, k) => ({ from: cuts[k], to }));
  } finally {
    closeSync(fd);
  }
}

/** Below this many bytes of feeds, starting worker threads costs more than it saves. */
const WORKER_THRESHOLD = 8 << 20;

export interface BuildOptions {
  /** Threads that prepare feeds, this one included. Default: the machine's available parallelism. */
  readonly threads?: number;
  /** The build time written into the file. Default: now. */
  readonly now?: Date;
  /** Lists of at least twice this many bytes are read in parts, one per thread. Default 16 MiB. */
  readonly partBytes?: number;
  /**
   * Whether `buildDataset` also compiles the dataset (the configuration's
   * sources with the feeds compiled in: `dataset.iprd`). Default true.
   */
  readonly dataset?: boolean;
  /** The build this one follows (a directory), whose `seen.bin` it carries forward (`seen.ts`). Default: none. */
  readonly previous?: string | null;
}

/**
 * Prepares feeds on this thread and on the workers, the largest files
 * first, each thread taking the next feed when it is done. This thread
 * hands out feeds only between its own, so a worker has its next feed
 * queued while it works on one (else it waited: 140 ms while this thread
 * parsed Azure's JSON). A feed whose worker fails is prepared here.
 * @internal Exported for tests.
 */
export async function prepareAll(
  tasks: readonly (PrepareTask | null)[],
  workers: readonly PoolWorker[],
  sizes: readonly number[],
): Promise<(Prepared | null)[]> {
  const order = tasks.map((_, i) => i).sort((a, b) => sizes[b] - sizes[a]);
  const results: (Prepared | null)[] = tasks.map(() => null);
  let next = 0;
  const take = () => (next < order.length ? order[next++] : -1);
  const run = (i: number) => {
    const t = tasks[i];
    results[i] = t === null ? null : prepareFeed(t);
  };
  const left: number[] = [];
  const answers: Promise<void>[] = [];
  const queued = workers.map(() => 0);
  const failed = workers.map(() => false);
  /** Gives each worker feeds until it has `depth` of them. */
  const dispatch = (depth: number) => {
    workers.forEach((w, k) => {
      while (!failed[k] && queued[k] < depth) {
        const i = take();
        if (i < 0) return;
        const t = tasks[i];
        if (t === null) continue;
        queued[k]++;
        answers.push(
          w.run<Prepared>({ kind: 'prepare', task: t }).then(
            (r) => {
              results[i] = r;
              queued[k]--;
            },
            () => {
              failed[k] = true;
              left.push(i);
            },
          ),
        );
      }
    });
  };
  // The largest feeds one each, then one more for each worker while this thread works.
  dispatch(1);
  for (let i = take(); i >= 0; i = take()) {
    dispatch(2);
    run(i);
    // Let the workers' answers in.
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(answers);
  for (const i of left) run(i);
  return results;
}

/**
 * Compiles the configuration's feeds. `dataDir` holds downloads of URL
 * feeds (`feeds/<name>`); without it URL feeds are missing. Feeds are read
 * and parsed on worker threads when they are large.
 */
export async function buildThreat(config: ThreatConfig, dataDir: string | null, options: BuildOptions = {}): Promise<BuildResult> {
  const now = options.now ?? new Date();
  const files = config.feeds.map((f) => feedFile(f, dataDir));
  const threads = Math.max(1, options.threads ?? availableParallelism());
  // Tasks: one per feed, or one per part of a large list; `owner` maps a task to its feed.
  const tasks: (PrepareTask | null)[] = [];
  const owner: number[] = [];
  config.feeds.forEach((f, i) => {
    const file = files[i];
    const task: PrepareTask | null =
      file === null ? null : { file, format: f.format, options: f.options, fetched: isUrl(f.source), widest: widestOf(f) };
    const parts = task !== null && f.format === 'list' ? splitList(task.file, threads, options.partBytes ?? PART_BYTES) : [];
    for (const part of parts.length > 1 ? parts : [undefined]) {
      tasks.push(task === null || part === undefined ? task : { ...task, part });
      owner.push(i);
    }
  });
  const sizes = tasks.map((t) => {
    try {
      return t === null ? 0 : t.part !== undefined ? t.part.to - t.part.from : statSync(t.file).size;
    } catch {
      return 0;
    }
  });
  const total = sizes.reduce((a, b) => a + b, 0);
  const parted = tasks.some((t) => t?.part !== undefined);
  const workers = startPool(
    total < WORKER_THRESHOLD && !parted ? 0 : threads - 1,
    ownEntry(import.meta.url, './worker.ts', 'threat-worker'),
  );
  try {
    const results = await prepareAll(tasks, workers, sizes);
    return await compileAll(config, files, owner, results, workers, now);
  } finally {
    for (const w of workers) w.close();
  }
}

/** The report of a feed that was not read: missing (a URL feed not downloaded, or no directory to hold it) or failed. */
function unreadReport(feed: FeedConfig, p: Extract<Prepared, { ok: false }> | null, url: boolean): FeedReport {
  const missing = p === null || (p.missing && url);
  const error =
    p === null
      ? 'a URL feed with no dataset directory to hold its download'
      : missing
        ? 'not downloaded yet (run iprecord update)'
        : p.error;
  return { name: feed.name, source: feed.source, state: missing ? 'missing' : 'failed', entries: 0, skipped: 0, badLines: [], error };
}

/** The second stage of `buildThreat`: reports, metadata and the compilation. */
async function compileAll(
  config: ThreatConfig,
  files: readonly (string | null)[],
  owner: readonly number[],
  results: readonly (Prepared | null)[],
  workers: readonly PoolWorker[],
  now: Date,
): Promise<BuildResult> {
  const prepared = config.feeds.map((_, i) => {
    const mine = results.filter((_r, k) => owner[k] === i);
    return mine.length === 1 || mine[0] === null ? mine[0] : joinParts(mine as Prepared[]);
  });
  const blocklists: Blocklist[] = [];
  const blocklistIds = new Map<string, number>();
  const compileFeeds: CompileFeed[] = [];
  const compiled: FeedConfig[] = [];
  const metas: FeedMeta[] = [];
  const reports: FeedReport[] = [];
  const held: Held[] = [];
  config.feeds.forEach((feed, i) => {
    const p = prepared[i];
    const url = isUrl(feed.source);
    if (p === null || !p.ok) {
      // Feeds the configuration names but that could not be read are listed too, as not loaded.
      reports.push(unreadReport(feed, p, url));
      return;
    }
    let bl = -1;
    if (feed.blocklist) {
      bl = blocklistIds.get(feed.blocklist.name) ?? blocklists.push(feed.blocklist) - 1;
      blocklistIds.set(feed.blocklist.name, bl);
    }
    // A list prepared in parts is counted by the compiler, on both threads.
    compileFeeds.push({
      categories: feed.categories,
      except: feed.except ?? [],
      blocklist: bl,
      v4: p.v4,
      v6: p.v6,
      count: p.addresses === '',
    });
    compiled.push(feed);
    metas.push({
      name: feed.name,
      categories: feed.categories,
      source: feed.source,
      format: feed.format,
      entries: p.entries,
      badLines: p.badLines.length,
      addresses: p.addresses,
      dataDate: p.dataDate,
      fetchedAt: p.fetchedAt,
    });
    // What the list holds, for seen.bin: read before the compile, which may hand the ranges to its thread.
    held.push({ name: feed.name, day: dayOf((p.fetchedAt === null ? now : new Date(p.fetchedAt)).getTime()), ...coveredBy(p) });
    const file = files[i] as string;
    reports.push({
      name: feed.name,
      source: feed.source,
      state: 'ok',
      entries: p.entries,
      skipped: p.skipped,
      badLines: p.badLines.map((b) => ({ file, ...b })),
    });
  });
  // Each feed's origins, numbered by name: its own and the lists it aggregates (loaded or not).
  const origin = new Map<string, number>();
  const id = (name: string) => origin.get(name) ?? origin.set(name, origin.size).size - 1;
  const feeds = compileFeeds.map((c, k) => ({ ...c, origins: [id(compiled[k].name), ...(compiled[k].includes ?? []).map(id)] }));
  const meta: ThreatMeta = { builtAt: now.toISOString(), feeds: metas, blocklists };
  const other = workers[0];
  const result = await compileThreat(feeds, meta, {
    other: other === undefined ? undefined : (input, transfer) => other.run<SliceOutput>({ kind: 'slice', input }, transfer),
  });
  return { buffer: result.buffer, meta: result.meta, feeds: reports, stats: result.stats, held };
}

/**
 * Builds into a directory: `threat.bin`, then (unless `options.dataset` is
 * false) `dataset.iprd`, the feeds merged into the configuration's
 * sources' own dataset in a child process (`compile/run.ts`: about 3 s
 * for the default data; 13 s and 1.2 GB more when the sources changed),
 * then `manifest.json`, each replaced atomically. URL feeds and databases
 * are read from `dataDir`'s downloads (default: `dir`).
 * @throws InvalidDatasetError when a source cannot be compiled
 */
export async function buildDataset(config: ThreatConfig, dir: string, dataDir = dir, options: BuildOptions = {}): Promise<BuildResult> {
  mkdirSync(dir, { recursive: true });
  const result = await buildThreat(config, dataDir, options);
  writeAtomic(join(dir, THREAT_FILE), result.buffer);
  const today = dayOf((options.now ?? new Date()).getTime());
  writeAtomic(join(dir, SEEN_FILE), encodeSeen(carryForward(seenBefore(options.previous), result.held, today)));
  const compile = options.dataset !== false;
  const sources = localSources(config.sources, dataDir);
  if (compile) {
    const withFeeds = { ...sources, threat: join(dir, THREAT_FILE) };
    await compileInChild({ sources: withFeeds, key: datasetKey(withFeeds), places: [join(dir, DATASET_FILE)] });
  }
  const manifest: Manifest = {
    format: 1,
    builtAt: result.meta.builtAt,
    threat: THREAT_FILE,
    ...(compile ? { dataset: DATASET_FILE } : {}),
    feeds: result.feeds.map((f) => ({
      name: f.name,
      state: f.state,
      categories: config.feeds.find((c) => c.name === f.name)?.categories ?? [],
      entries: f.entries,
      badLines: f.badLines.length,
      ...(f.error ? { error: f.error } : {}),
    })),
  };
  writeAtomic(join(dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  return result;
}
