/**
 * `iprecord update`: downloads the configured URL feeds into a dataset
 * directory, validates each one, compiles, and swaps the new build in.
 *
 * Per feed: a conditional GET (`If-None-Match`, `If-Modified-Since` from
 * the last good download), a timeout, a size cap, and retries with
 * exponential backoff for network errors, timeouts and 5xx answers. The
 * body must then pass validation: at least `minEntries` entries, not fewer
 * than `1 - maxShrink` times the last good version's, and at most
 * `maxBadShare` of its lines bad. A feed that fails keeps its last good
 * download, is reported, and makes the result not ok. Downloads are written
 * to a temporary file and renamed into place.
 *
 * The build goes to a new directory under `builds/`; the `current` file,
 * which names the build in use, is then replaced by one rename, so a reader
 * sees the old build or the new one, never a mix.
 */

import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { withDirectoryLock } from '../files/lock.js';
import { join } from 'node:path';
import { writeAtomic } from '../files/write.js';
import { buildDataset, feedCachePath, type BuildOptions, type BuildResult } from './build.js';
import { isUrl, type FeedConfig, type ThreatConfig } from './config.js';
import { parseFeed } from './parse.js';

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
  /** Largest accepted drop in entries against the last good download (0.5: half may go). @default 0.5 */
  readonly maxShrink?: number;
  /** Largest share of bad lines. @default 0.1 */
  readonly maxBadShare?: number;
}

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
  readonly feeds: readonly FeedUpdate[];
  readonly build: BuildResult;
  readonly buildDir: string;
}

/** What the last good download of a feed was. */
interface FeedState {
  readonly etag?: string;
  readonly lastModified?: string;
  readonly entries: number;
  readonly fetchedAt: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class HttpError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

/** One GET: the body, or null for 304. @throws HttpError */
async function get(url: string, state: FeedState | null, timeoutMs: number, maxBytes: number): Promise<{ body: Buffer; etag?: string; lastModified?: string } | null> {
  const headers: Record<string, string> = { 'user-agent': 'iprecord-update' };
  if (state?.etag) headers['if-none-match'] = state.etag;
  if (state?.lastModified) headers['if-modified-since'] = state.lastModified;
  let res: Response;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    res = await fetch(url, { headers, signal, redirect: 'follow' });
  } catch (e) {
    const err = e as Error;
    throw new HttpError(err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `request failed: ${(err.cause as Error | undefined)?.message ?? err.message}`, true);
  }
  if (res.status === 304) return null;
  if (res.status >= 500) throw new HttpError(`HTTP ${res.status}`, true);
  if (res.status !== 200) throw new HttpError(`HTTP ${res.status}`, false);
  // fetch decodes a compressed body (Content-Encoding gzip, deflate, br): Content-Length then counts the encoded
  // bytes, not those read here (a body cut short fails to decode instead).
  const encoded = (res.headers.get('content-encoding') ?? 'identity').toLowerCase() !== 'identity';
  const declared = encoded ? NaN : Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new HttpError(`body of ${declared} bytes is over the ${maxBytes} byte cap`, false);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) throw new HttpError(`body is over the ${maxBytes} byte cap`, false);
      chunks.push(Buffer.from(chunk));
    }
  } catch (e) {
    if (e instanceof HttpError) throw e;
    const err = e as Error;
    throw new HttpError(err.name === 'TimeoutError' ? `body not received within ${timeoutMs} ms` : `body cut short: ${err.message}`, true);
  }
  if (Number.isFinite(declared) && size !== declared) throw new HttpError(`body cut short: ${size} of ${declared} bytes`, true);
  return { body: Buffer.concat(chunks, size), etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined };
}

function readState(dir: string, name: string): FeedState | null {
  try {
    return JSON.parse(readFileSync(feedCachePath(dir, name) + '.json', 'utf8')) as FeedState;
  } catch {
    return null;
  }
}

async function updateFeed(feed: FeedConfig, dir: string, o: Required<UpdateOptions>): Promise<FeedUpdate> {
  const base = { name: feed.name, source: feed.source };
  if (!isUrl(feed.source)) return { ...base, state: 'local' };
  const state = readState(dir, feed.name);
  let got: Awaited<ReturnType<typeof get>> | undefined;
  let lastError = '';
  for (let attempt = 0; attempt <= o.retries; attempt++) {
    if (attempt > 0) await sleep(o.backoffMs * 2 ** (attempt - 1));
    try {
      got = await get(feed.source, state, o.timeoutMs, o.maxBytes);
      break;
    } catch (e) {
      const err = e as HttpError;
      lastError = err.message;
      if (!err.retry) break;
    }
  }
  if (got === undefined) return { ...base, state: 'failed', error: lastError + (state ? '; kept the last good download' : '') };
  if (got === null) return { ...base, state: 'unchanged', entries: state?.entries };
  const text = got.body.toString('utf8');
  const parsed = parseFeed(text, feed.format, feed.options);
  const lines = parsed.entries + parsed.badLines.length + parsed.skipped;
  const reject = (why: string): FeedUpdate => ({ ...base, state: 'failed', entries: parsed.entries, error: why + (state ? '; kept the last good download' : '') });
  if (parsed.entries < o.minEntries) return reject(`${parsed.entries} entries, fewer than the minimum ${o.minEntries}`);
  if (state && parsed.entries < state.entries * (1 - o.maxShrink)) return reject(`${parsed.entries} entries, down from ${state.entries} (more than ${Math.round(o.maxShrink * 100)} % fewer)`);
  if (lines > 0 && parsed.badLines.length / lines > o.maxBadShare) return reject(`${parsed.badLines.length} of ${lines} lines bad (over ${Math.round(o.maxBadShare * 100)} %)`);
  const path = feedCachePath(dir, feed.name);
  writeAtomic(path, got.body);
  const next: FeedState = { etag: got.etag, lastModified: got.lastModified, entries: parsed.entries, fetchedAt: new Date().toISOString() };
  writeAtomic(path + '.json', JSON.stringify(next) + '\n');
  return { ...base, state: 'updated', entries: parsed.entries };
}

/**
 * Updates a dataset directory: downloads, validates, builds into
 * `builds/<time>`, and points `current` at it.
 */
export async function updateDataset(config: ThreatConfig, dir: string, options: UpdateOptions = {}): Promise<UpdateResult> {
  const o: Required<UpdateOptions> = {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxBytes: options.maxBytes ?? 64 << 20,
    retries: options.retries ?? 3,
    backoffMs: options.backoffMs ?? 500,
    minEntries: options.minEntries ?? 1,
    maxShrink: options.maxShrink ?? 0.5,
    maxBadShare: options.maxBadShare ?? 0.1,
  };
  mkdirSync(join(dir, 'feeds'), { recursive: true });
  mkdirSync(join(dir, 'builds'), { recursive: true });
  return withDirectoryLock(dir, async () => {
    // Two downloads at a time: polite to the sources, and enough to hide latency.
    const feeds: FeedUpdate[] = new Array(config.feeds.length);
    let next = 0;
    const worker = async () => {
      while (next < config.feeds.length) {
        const i = next++;
        feeds[i] = await updateFeed(config.feeds[i], dir, o);
      }
    };
    await Promise.all([worker(), worker()]);
    const { build, buildDir } = await swap(config, dir);
    return { ok: feeds.every((f) => f.state !== 'failed') && build.feeds.every((f) => f.state === 'ok'), feeds, build, buildDir };
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
export async function buildAndSwap(config: ThreatConfig, dir: string, options: BuildOptions = {}): Promise<{ build: BuildResult; buildDir: string }> {
  mkdirSync(join(dir, 'builds'), { recursive: true });
  return withDirectoryLock(dir, () => swap(config, dir, options));
}

/** `buildAndSwap` with the lock held. */
async function swap(config: ThreatConfig, dir: string, options: BuildOptions = {}): Promise<{ build: BuildResult; buildDir: string }> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const name = `${stamp}-${process.pid}`;
  const buildDir = join(dir, 'builds', name);
  const previous = currentBuild(dir);
  const build = await buildDataset(config, buildDir, dir, options);
  writeAtomic(join(dir, 'current'), join('builds', name) + '\n');
  for (const old of readdirSync(join(dir, 'builds'))) {
    if (old !== name && old !== previous && BUILD_NAME.test(old)) rmSync(join(dir, 'builds', old), { recursive: true, force: true });
  }
  return { build, buildDir };
}

/** The build that `current` names (`builds/<name>`), or null. */
function currentBuild(dir: string): string | null {
  try {
    const pointer = readFileSync(join(dir, 'current'), 'utf8').trim();
    return pointer.startsWith('builds/') ? pointer.slice('builds/'.length) : null;
  } catch {
    return null;
  }
}
