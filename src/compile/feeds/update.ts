/**
 * `iprecord update`: downloads the configured URL databases
 * (`compile/origins/update.ts`) and feeds into a dataset directory, validates
 * each one, compiles, and swaps the new build in.
 *
 * Per feed: a download by the rules of `files/http.ts` (conditional GET,
 * timeout, size cap, retries with backoff). The body must then pass
 * validation: at least `minEntries` entries, not fewer
 * than `1 - maxShrink` times the last good version's, no entry wider than
 * the feed takes (`widest.ts`), per family at most `maxGrowth` times the
 * addresses the last good version covered (beyond a /16 of IPv4 and a /32
 * of IPv6: many adjacent /9s pass the widest-entry rule, not this one),
 * and at most `maxBadShare` of its lines bad. A feed that fails keeps its last good
 * download, is reported, and makes the result not ok. Downloads are written
 * to a temporary file and renamed into place.
 *
 * The build goes to a new directory under `builds/`; the `current` file,
 * which names the build in use, is then replaced by one rename, so a reader
 * sees the old build or the new one, never a mix.
 *
 * Over 300 lines: a feed's download and its checks, one after another, and the build's swap; the databases' downloads are in `compile/origins/update.ts`.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { withDirectoryLock } from '../../files/lock.js';
import { untilDone } from '../../files/stop.js';
import { join } from 'node:path';
import { writeAtomic } from '../../files/write.js';
import { buildDataset, feedCachePath, type BuildOptions, type BuildResult } from './build.js';
import { isUrl, widestOf, type FeedConfig, type ThreatConfig } from './config.js';
import { refusal, tooWide } from './widest.js';
import { parseFeed } from './parse.js';
import { coveredAddresses } from './prepare.js';
import { download } from '../../files/http.js';
import type { SourceUpdate } from '../origins/update.js';
import { BUILDS_DIR, CURRENT_FILE } from '../../dataset/store.js';

export interface UpdateOptions {
  /** Per request. @default 30000 */
  readonly timeoutMs?: number;
  /** Largest body accepted. @default 64 MiB */
  readonly maxBytes?: number;
  /** Retries after the first attempt. @default 3 */
  readonly retries?: number;
  /** First backoff; doubles each retry. @default 500 */
  readonly backoffMs?: number;
  /** Fewest entries a download must have. @default 1 */
  readonly minEntries?: number;
  /** Largest accepted drop in entries (feeds) or networks (sources) against the last good download (0.5: half may go). @default 0.5 */
  readonly maxShrink?: number;
  /** Largest accepted drop in the addresses a source's networks cover, per family. @default 0.1 */
  readonly maxCoverageShrink?: number;
  /** Take smaller downloads knowingly: the shrink rules are not checked. @default false */
  readonly allowShrink?: boolean;
  /** Largest accepted growth of the addresses a feed covers, per family, against its last good download (10: tenfold). @default 10 */
  readonly maxGrowth?: number;
  /** Take feeds that grew past `maxGrowth` knowingly. @default false */
  readonly allowGrowth?: boolean;
  /** Largest share of bad lines. @default 0.1 */
  readonly maxBadShare?: number;
  /** Per database download (geo, ASN, Anonymous-IP sources given as URLs). @default 600000 */
  readonly sourceTimeoutMs?: number;
  /** Largest database accepted, downloaded or decompressed. @default 1 GiB */
  readonly sourceMaxBytes?: number;
  /** Called as each download ends: what ended, and the share of the downloads done (0 to 1). */
  readonly progress?: (step: string, done: number) => void;
}

/** The options with their defaults, as the downloads read them. */
type Settings = Required<Omit<UpdateOptions, 'progress'>>;

export interface FeedUpdate {
  readonly name: string;
  readonly source: string;
  /** `updated`: a new download passed; `unchanged`: 304; `failed`: kept the last good download (if any); `local`: a path, not downloaded. */
  readonly state: 'updated' | 'unchanged' | 'failed' | 'local';
  readonly entries?: number;
  readonly error?: string;
}

export interface UpdateResult {
  readonly ok: boolean;
  /** The databases given as URLs. */
  readonly sources: readonly SourceUpdate[];
  readonly feeds: readonly FeedUpdate[];
  /** The build made; null when every download failed, the current build kept (`buildDir`). */
  readonly build: BuildResult | null;
  readonly buildDir: string;
}

/** What the last good download of a feed was. */
interface FeedState {
  /** The URL it came from (absent in states written before it was kept). */
  readonly url?: string;
  readonly etag?: string;
  readonly lastModified?: string;
  readonly entries: number;
  /** Addresses its entries covered per family, IPv6 in decimal (absent in states written before it was kept). */
  readonly addresses?: { readonly v4: number; readonly v6: string };
  readonly fetchedAt: string;
}

/** Growth in covered addresses below this is never refused: a feed may add a /16 of IPv4 or a /32 of IPv6 whatever it held. */
const GROWTH_FLOOR = { v4: 2 ** 16, v6: 2n ** 96n };

/** Why a download's covered addresses grew too much against the last good one's, or null. */
function grewTooMuch(now: { v4: number; v6: bigint }, last: NonNullable<FeedState['addresses']>, factor: number): string | null {
  const lastV6 = BigInt(last.v6);
  if (now.v4 > GROWTH_FLOOR.v4 + last.v4 * factor)
    return `its IPv4 entries cover ${now.v4} addresses, up from ${last.v4} (more than ${factor} times; --allow-growth takes it)`;
  if (now.v6 > GROWTH_FLOOR.v6 + lastV6 * BigInt(Math.ceil(factor)))
    return `its IPv6 entries cover ${now.v6} addresses, up from ${lastV6} (more than ${Math.ceil(factor)} times; --allow-growth takes it)`;
  return null;
}

function readState(dir: string, name: string): FeedState | null {
  try {
    return JSON.parse(readFileSync(feedCachePath(dir, name) + '.json', 'utf8')) as FeedState;
  } catch {
    return null;
  }
}

async function updateFeed(feed: FeedConfig, dir: string, o: Settings): Promise<FeedUpdate> {
  const base = { name: feed.name, source: feed.source };
  if (!isUrl(feed.source)) return { ...base, state: 'local' };
  const kept = readState(dir, feed.name);
  // A download's validators and entry count belong to its URL and its file: a feed whose URL changed, or whose file is
  // gone, is downloaded whole.
  const state = kept?.url === feed.source && existsSync(feedCachePath(dir, feed.name)) ? kept : null;
  let got: Awaited<ReturnType<typeof download>>;
  try {
    got = await download(feed.source, state, o);
  } catch (e) {
    return { ...base, state: 'failed', error: (e as Error).message + (kept ? '; kept the last good download' : '') };
  }
  if (got === null) {
    // A 304 answers a conditional request; with no earlier download there was none to answer.
    if (state === null)
      return { ...base, state: 'failed', error: 'the server answered 304 Not Modified, but there is no earlier download' };
    // The source says its list is still the one downloaded: held today, for first and last seen and for staleness.
    checked(feedCachePath(dir, feed.name), { ...state, fetchedAt: new Date().toISOString() });
    return { ...base, state: 'unchanged', entries: state.entries };
  }
  const text = got.body.toString('utf8');
  const parsed = parseFeed(text, feed.format, feed.options);
  const lines = parsed.entries + parsed.badLines.length + parsed.skipped;
  const reject = (why: string): FeedUpdate => ({
    ...base,
    state: 'failed',
    entries: parsed.entries,
    error: why + (kept ? '; kept the last good download' : ''),
  });
  if (parsed.entries < o.minEntries) return reject(`${parsed.entries} entries, fewer than the minimum ${o.minEntries}`);
  const wide = tooWide(parsed.v4, parsed.v6, widestOf(feed));
  if (wide !== null) return reject(refusal(wide));
  if (state && !o.allowShrink && parsed.entries < state.entries * (1 - o.maxShrink))
    return reject(`${parsed.entries} entries, down from ${state.entries} (more than ${Math.round(o.maxShrink * 100)} % fewer)`);
  const addresses = coveredAddresses(parsed.v4, parsed.v6);
  const grew = state?.addresses !== undefined && !o.allowGrowth ? grewTooMuch(addresses, state.addresses, o.maxGrowth) : null;
  if (grew !== null) return reject(grew);
  if (lines > 0 && parsed.badLines.length / lines > o.maxBadShare)
    return reject(`${parsed.badLines.length} of ${lines} lines bad (over ${Math.round(o.maxBadShare * 100)} %)`);
  const path = feedCachePath(dir, feed.name);
  writeAtomic(path, got.body);
  checked(path, {
    url: feed.source,
    etag: got.etag,
    lastModified: got.lastModified,
    entries: parsed.entries,
    addresses: { v4: addresses.v4, v6: addresses.v6.toString() },
    fetchedAt: new Date().toISOString(),
  });
  return { ...base, state: 'updated', entries: parsed.entries };
}

/**
 * Records a download checked at `state.fetchedAt`: its state beside it, and
 * that time as the file's modification time, which a build reads as the
 * list's date (`prepare.ts`): the day of the check by this process's
 * clock, also when the server answered 304 and the file stayed.
 */
function checked(path: string, state: FeedState): void {
  const at = new Date(state.fetchedAt);
  utimesSync(path, at, at);
  writeAtomic(path + '.json', JSON.stringify(state) + '\n');
}

/**
 * Updates a dataset directory: downloads, validates, builds into
 * `builds/<time>`, and points `current` at it.
 */
export async function updateDataset(config: ThreatConfig, dir: string, options: UpdateOptions = {}): Promise<UpdateResult> {
  const o: Settings = {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxBytes: options.maxBytes ?? 64 << 20,
    retries: options.retries ?? 3,
    backoffMs: options.backoffMs ?? 500,
    minEntries: options.minEntries ?? 1,
    maxShrink: options.maxShrink ?? 0.5,
    maxCoverageShrink: options.maxCoverageShrink ?? 0.1,
    allowShrink: options.allowShrink ?? false,
    maxGrowth: options.maxGrowth ?? 10,
    allowGrowth: options.allowGrowth ?? false,
    maxBadShare: options.maxBadShare ?? 0.1,
    sourceTimeoutMs: options.sourceTimeoutMs ?? 600_000,
    sourceMaxBytes: options.sourceMaxBytes ?? 1 << 30,
  };
  mkdirSync(join(dir, 'feeds'), { recursive: true });
  mkdirSync(join(dir, BUILDS_DIR), { recursive: true });
  return withDirectoryLock(dir, async () => {
    // Loaded here: checking a download needs the compiler, which a lookup never does.
    const { ROLES_IN_ORDER, updateSources } = await import('../origins/update.js');
    const urls = ROLES_IN_ORDER.flatMap((role) => (config.sources[role] ?? []).filter(isUrl));
    const downloads = urls.length + config.feeds.length;
    let ended = 0;
    const progress = (what: string) => options.progress?.(`downloaded ${what} (${++ended} of ${downloads})`, ended / downloads);
    const sources = await updateSources(
      config.sources,
      dir,
      {
        timeoutMs: o.sourceTimeoutMs,
        maxBytes: o.sourceMaxBytes,
        retries: o.retries,
        backoffMs: o.backoffMs,
        maxShrink: o.maxShrink,
        maxCoverageShrink: o.maxCoverageShrink,
        allowShrink: o.allowShrink,
      },
      (u) => progress(`${u.role} ${u.url}`),
    );
    // Two downloads at a time: polite to the sources, and enough to hide latency.
    const feeds: FeedUpdate[] = new Array(config.feeds.length);
    let next = 0;
    const worker = async () => {
      while (next < config.feeds.length) {
        const i = next++;
        feeds[i] = await updateFeed(config.feeds[i], dir, o);
        progress(config.feeds[i].name);
      }
    };
    await Promise.all([worker(), worker()]);
    // Nothing downloaded (offline, say): the build there is kept, not built again from the same files.
    const current = currentBuild(dir);
    if (current !== null && sources.length + feeds.length > 0 && [...sources, ...feeds].every((u) => u.state === 'failed'))
      return { ok: false, sources, feeds, build: null, buildDir: join(dir, BUILDS_DIR, current) };
    const { build, buildDir } = await swap(config, dir);
    const ok =
      sources.every((s) => s.state !== 'failed') && feeds.every((f) => f.state !== 'failed') && build.feeds.every((f) => f.state === 'ok');
    return { ok, sources, feeds, build, buildDir };
  });
}

/** The names of builds that `buildAndSwap` makes: `<time>-<process id>`. */
const BUILD_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-\d+$/;

/**
 * Builds into a new `builds/<time>` directory and replaces the `current`
 * file with one rename, holding the directory's lock (a second build or
 * update waits for it). Then removes the builds it made before, all but
 * the one `current` named until now (a reader may still be opening it):
 * which builds stay is decided by what `current` names, never by the
 * order of names, and other entries of `builds/` are left alone.
 */
export async function buildAndSwap(
  config: ThreatConfig,
  dir: string,
  options: BuildOptions = {},
): Promise<{ build: BuildResult; buildDir: string }> {
  mkdirSync(join(dir, BUILDS_DIR), { recursive: true });
  return withDirectoryLock(dir, () => swap(config, dir, options));
}

/** `buildAndSwap` with the lock held. */
async function swap(config: ThreatConfig, dir: string, options: BuildOptions = {}): Promise<{ build: BuildResult; buildDir: string }> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const name = `${stamp}-${process.pid}`;
  const buildDir = join(dir, BUILDS_DIR, name);
  const previous = currentBuild(dir);
  // Stopped before it is current, the build goes (its compile process dies with this one).
  const done = untilDone(() => rmSync(buildDir, { recursive: true, force: true }));
  let build: BuildResult;
  try {
    build = await buildDataset(config, buildDir, dir, { ...options, previous: previous === null ? null : join(dir, BUILDS_DIR, previous) });
    writeAtomic(join(dir, CURRENT_FILE), join(BUILDS_DIR, name) + '\n');
  } finally {
    done();
  }
  for (const old of readdirSync(join(dir, BUILDS_DIR))) {
    if (old !== name && old !== previous && BUILD_NAME.test(old)) rmSync(join(dir, BUILDS_DIR, old), { recursive: true, force: true });
  }
  return { build, buildDir };
}

/** The build that `current` names (`builds/<name>`), or null. */
function currentBuild(dir: string): string | null {
  try {
    const pointer = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
    return pointer.startsWith('builds/') ? pointer.slice('builds/'.length) : null;
  } catch {
    return null;
  }
}
