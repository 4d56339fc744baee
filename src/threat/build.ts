/**
 * Compiles the configured feeds into `threat.bin`, and a dataset directory:
 * `manifest.json` (what was built from what) beside `threat.bin`.
 *
 * A feed's source is a local path, or a URL whose last download (by
 * `iprecord update`) waits in the dataset's `feeds/` directory. A feed that
 * cannot be read is reported and left out; a bad line is reported with its
 * file and line and never stops the build.
 */

import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../build/write.js';
import type { Blocklist } from '../types.js';
import { isUrl, type FeedConfig, type ThreatConfig } from './config.js';
import { compileThreat, type CompileFeed, type CompileStats } from './compile.js';
import { parseFeed, type BadLine, type ParsedFeed } from './parse.js';
import type { FeedMeta, ThreatMeta } from './tree.js';

export interface FeedReport {
  readonly name: string;
  readonly source: string;
  /** `ok`: compiled; `missing`: no local copy of a URL yet; `failed`: unreadable. */
  readonly state: 'ok' | 'missing' | 'failed';
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
}

/**
 * The directory that holds a dataset's `threat.bin` and `manifest.json`:
 * the build that the `current` file names (`iprecord update` swaps it by
 * one rename), else the directory itself (`iprecord build`).
 */
export function resolveDataset(dir: string): string {
  let pointer: string;
  try {
    pointer = readFileSync(join(dir, 'current'), 'utf8').trim();
  } catch {
    return dir;
  }
  return pointer === '' ? dir : join(dir, pointer);
}

/** Where the last download of a URL feed is kept in a dataset directory. */
export function feedCachePath(dataDir: string, name: string): string {
  return join(dataDir, 'feeds', name);
}

/** Reads and parses one feed: from its path, or for a URL from `dataDir`'s download. */
function readFeed(feed: FeedConfig, dataDir: string | null): { parsed: ParsedFeed | null; file: string; state: FeedReport['state']; error?: string; fetchedAt: string | null } {
  const file = isUrl(feed.source) ? (dataDir === null ? '' : feedCachePath(dataDir, feed.name)) : feed.source;
  if (file === '') return { parsed: null, file: feed.source, state: 'missing', error: 'a URL feed with no dataset directory to hold its download', fetchedAt: null };
  let bytes: Buffer;
  let fetchedAt: string | null = null;
  try {
    bytes = readFileSync(file);
    if (isUrl(feed.source)) fetchedAt = statSync(file).mtime.toISOString();
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      parsed: null,
      file,
      state: missing && isUrl(feed.source) ? 'missing' : 'failed',
      error: missing && isUrl(feed.source) ? 'not downloaded yet (run iprecord update)' : (e as Error).message,
      fetchedAt,
    };
  }
  return { parsed: parseFeed(bytes, feed.format, feed.options), file, state: 'ok', fetchedAt };
}

/**
 * Compiles the configuration's feeds. `dataDir` holds downloads of URL
 * feeds (`feeds/<name>`); without it URL feeds are missing.
 */
export function buildThreat(config: ThreatConfig, dataDir: string | null, now = new Date()): BuildResult {
  const blocklists: Blocklist[] = [];
  const blocklistIds = new Map<string, number>();
  const compileFeeds: CompileFeed[] = [];
  const metas: Omit<FeedMeta, 'addresses'>[] = [];
  const reports: FeedReport[] = [];
  for (const feed of config.feeds) {
    const { parsed, file, state, error, fetchedAt } = readFeed(feed, dataDir);
    if (parsed === null) {
      reports.push({ name: feed.name, source: feed.source, state, entries: 0, skipped: 0, badLines: [], error });
      continue;
    }
    let bl = -1;
    if (feed.blocklist) {
      bl = blocklistIds.get(feed.blocklist.name) ?? -1;
      if (bl < 0) {
        bl = blocklists.length;
        blocklists.push(feed.blocklist);
        blocklistIds.set(feed.blocklist.name, bl);
      }
    }
    compileFeeds.push({ categories: feed.categories, except: feed.except ?? [], blocklist: bl, v4: parsed.v4, v6: parsed.v6 });
    metas.push({
      name: feed.name,
      categories: feed.categories,
      source: feed.source,
      format: feed.format,
      entries: parsed.entries,
      badLines: parsed.badLines.length,
      dataDate: parsed.dataDate,
      fetchedAt,
    });
    reports.push({
      name: feed.name,
      source: feed.source,
      state: 'ok',
      entries: parsed.entries,
      skipped: parsed.skipped,
      badLines: parsed.badLines.map((b) => ({ file, ...b })),
    });
  }
  // Feeds the configuration names but that could not be read are listed too, as not loaded.
  let meta: ThreatMeta | null = null;
  const { buffer, stats } = compileThreat(compileFeeds, (covered) => {
    meta = { builtAt: now.toISOString(), feeds: metas.map((m, i) => ({ ...m, addresses: covered[i].toString() })), blocklists };
    return meta;
  });
  return { buffer, meta: meta as unknown as ThreatMeta, feeds: reports, stats };
}

export interface Manifest {
  readonly format: 1;
  readonly builtAt: string;
  readonly threat: string;
  readonly feeds: readonly { readonly name: string; readonly state: FeedReport['state']; readonly entries: number; readonly badLines: number; readonly error?: string }[];
}

/**
 * Builds into a directory: `threat.bin` and `manifest.json`, each replaced
 * atomically. URL feeds are read from `dataDir`'s downloads (default: `dir`).
 */
export function buildDataset(config: ThreatConfig, dir: string, dataDir = dir): BuildResult {
  mkdirSync(dir, { recursive: true });
  const result = buildThreat(config, dataDir);
  writeAtomic(join(dir, 'threat.bin'), result.buffer);
  const manifest: Manifest = {
    format: 1,
    builtAt: result.meta.builtAt,
    threat: 'threat.bin',
    feeds: result.feeds.map((f) => ({ name: f.name, state: f.state, entries: f.entries, badLines: f.badLines.length, ...(f.error ? { error: f.error } : {}) })),
  };
  writeAtomic(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return result;
}
