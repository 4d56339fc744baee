/**
 * What an engine reports of itself (`Engine.info()`): the dataset, the
 * databases it was compiled from, threat feeds and categories with their
 * state and age.
 */

import { readChanges, type Changes } from '../dataset/store.js';
import type { ResolvedOptions } from './options.js';
import type { SpecialTable } from '../ip/special.js';
import { CATEGORIES, type Category } from '../contract/template.js';
import { memoryState, type Snapshot } from './snapshot.js';
import type { DatabaseInfo } from '../dataset/layout.js';
import type { ZoneRulesInfo, ZoneTable } from '../time/zone.js';

/** State of one threat category in `info()`: whether any loaded source answers for it. */
export interface ListState {
  readonly name: Category;
  /** `loaded`; `stale` when every loaded source is older than `staleAfterDays`; `failed` when none is loaded and a feed of it failed (`reason` says which); `missing` when none is loaded. */
  readonly state: 'loaded' | 'stale' | 'missing' | 'failed';
  readonly sources: readonly string[];
  /** Entries of the loaded sources (feed lines, or records of a database). */
  readonly entries: number;
  /** Date of the newest loaded data, when known. */
  readonly dataDate: string | null;
  readonly reason?: string;
}

/** State of one configured feed in `info()`. */
export interface FeedState {
  readonly name: string;
  readonly categories: readonly Category[];
  readonly state: 'loaded' | 'stale' | 'missing' | 'failed';
  readonly source: string;
  readonly entries: number;
  /** Distinct addresses covered (a decimal string: IPv6 counts are large). */
  readonly addresses: string;
  readonly dataDate: string | null;
  readonly reason?: string;
}

export interface EngineInfo {
  readonly loadedAt: string;
  /** How database files are held: mapped (shared between processes and threads) or read; `reason` when maps were asked for and cannot be made. */
  readonly memory: { readonly mode: 'mmap' | 'read'; readonly reason?: string };
  /** The compiled dataset answering lookups: its file, size and when it was compiled. */
  readonly dataset: { readonly path: string; readonly bytes: number; readonly builtAt: string };
  readonly databases: readonly DatabaseInfo[];
  /** The compiled threat feeds in use, when any. */
  readonly threat: { readonly path: string; readonly builtAt: string } | null;
  readonly lists: readonly ListState[];
  readonly feeds: readonly FeedState[];
  readonly lookups24h: string;
  /** The time zone rules `time_zone` follows (`ZoneRulesInfo`). */
  readonly timeZones: ZoneRulesInfo;
  /** What a user should act on: location or network data older than `SOURCE_STALE_DAYS`. */
  readonly warnings: readonly string[];
  /** What changed against the build before (written by `iprecord build` and `update`); null: none. */
  readonly changes: Changes | null;
}

/** Location or network data older than this many days is said to be old (`info().warnings`). */
export const SOURCE_STALE_DAYS = 45;

/** The warnings of databases whose data is older than `SOURCE_STALE_DAYS`. */
function staleSources(databases: readonly DatabaseInfo[], now: number): string[] {
  const out: string[] = [];
  for (const d of databases) {
    if (d.role === 'anonymous' || d.dataDate === null) continue;
    const days = Math.floor((now - Date.parse(d.dataDate)) / 86_400_000);
    if (days <= SOURCE_STALE_DAYS) continue;
    const what = d.role === 'geo' ? 'location' : d.role === 'networks' ? 'network registry' : 'network';
    const how =
      d.origin === 'package'
        ? 'the installed package is not updated: iprecord update downloads current data'
        : d.origin === 'download'
          ? 'run iprecord update'
          : 'replace the file';
    const line = `${what} data is ${days} days old (${d.from}, ${d.dataDate.slice(0, 10)}): ${how}.`;
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

/** The `info()` of an engine answering from `snap`, with the count of its lookups in the last 24 hours. */
export function describeEngine(snap: Snapshot, options: ResolvedOptions, special: SpecialTable, lookups24h: string): EngineInfo {
  const now = Date.now();
  const threatMeta = snap.dataset.meta.threat ?? null;
  const feeds = feedStates(snap, options.staleAfterDays * 86_400_000, now);
  const databases = snap.databases();
  return {
    loadedAt: snap.loadedAt.toISOString(),
    memory: memoryState(options),
    dataset: { path: snap.dataset.name, bytes: snap.dataset.bytes, builtAt: snap.dataset.meta.builtAt },
    databases,
    threat: threatMeta === null || snap.threatPath === null ? null : { path: snap.threatPath, builtAt: threatMeta.builtAt },
    lists: CATEGORIES.map((name) => categoryState(name, feeds, databases, special)),
    feeds,
    lookups24h: lookups24h,
    timeZones: zoneRelease(snap.dataset.meta.timeZones),
    warnings: staleSources(databases, now),
    changes: readChanges(snap.build),
  };
}

/** Each feed compiled in (stale past `staleMs`), then each the last build named but could not load. */
function feedStates(snap: Snapshot, staleMs: number, now: number): FeedState[] {
  const isStale = (date: string | null) => date !== null && now - Date.parse(date) > staleMs;
  const feeds: FeedState[] = (snap.dataset.meta.threat?.feeds ?? []).map((f) => {
    // The data's own date, else when it was downloaded (a local file: last modified).
    const date = f.dataDate ?? f.fetchedAt;
    return {
      name: f.name,
      categories: f.categories,
      state: isStale(date) ? 'stale' : 'loaded',
      source: f.source,
      entries: f.entries,
      addresses: f.addresses,
      dataDate: date,
    };
  });
  for (const m of snap.manifest?.feeds ?? []) {
    if (m.state !== 'ok' && !feeds.some((f) => f.name === m.name)) {
      feeds.push({
        name: m.name,
        categories: m.categories ?? [],
        state: m.state,
        source: '',
        entries: 0,
        addresses: '0',
        dataDate: null,
        reason: m.error ?? m.state,
      });
    }
  }
  return feeds;
}

/** A threat category's state: its feeds, and the registries and databases that answer for it too. */
function categoryState(name: Category, feeds: readonly FeedState[], databases: readonly DatabaseInfo[], special: SpecialTable): ListState {
  const anonymous = databases.filter((d) => d.role === 'anonymous');
  const asn = databases.filter((d) => d.role === 'asn');
  const sources: string[] = [];
  let entries = 0;
  let newest: string | null = null;
  let fresh = false;
  for (const f of feeds) {
    if (!f.categories.includes(name) || (f.state !== 'loaded' && f.state !== 'stale')) continue;
    sources.push(f.name);
    entries += f.entries;
    if (f.dataDate !== null && (newest === null || f.dataDate > newest)) newest = f.dataDate;
    if (f.state === 'loaded') fresh = true;
  }
  if (name === 'bogon') {
    sources.push('IANA special-purpose and IPv6 address space registries');
    entries += special.v4.length + special.v6.length;
    fresh = true;
  }
  if (name === 'datacenter') {
    sources.push('ASN classification of ' + asn.map((d) => d.path).join(', '));
    entries += asn.reduce((a, d) => a + d.nodeCount, 0);
    fresh = true;
  }
  if (anonymous.length > 0 && (name === 'tor' || name === 'vpn' || name === 'proxy' || name === 'datacenter')) {
    for (const d of anonymous) sources.push(d.path);
    entries += anonymous.reduce((a, d) => a + d.nodeCount, 0);
    fresh = true;
  }
  if (sources.length > 0) return { name, state: fresh ? 'loaded' : 'stale', sources, entries, dataDate: newest };
  // A feed of the category that failed, with no other source loaded: the category failed.
  const failed = feeds.filter((f) => f.state === 'failed' && f.categories.includes(name));
  if (failed.length > 0)
    return {
      name,
      state: 'failed',
      sources,
      entries: 0,
      dataDate: null,
      reason: failed.map((f) => `${f.name}: ${f.reason ?? 'failed'}`).join('; '),
    };
  return { name, state: 'missing', sources, entries: 0, dataDate: null, reason: 'no source of this category is loaded' };
}

/** What `info()` says of a zone table. */
const zoneRelease = ({ tzdata, source, from, to, fromPackage }: ZoneTable) => ({
  tzdata,
  source,
  from,
  to,
  ...(fromPackage === undefined ? {} : { fromPackage }),
});

/** The code of the process warning of an engine whose threat categories have no loaded source. */
export const MISSING_LISTS = 'IPRECORD_MISSING_LISTS';

/** What to tell of the threat categories that no loaded source answers for, or null when every one has a source. */
export function missingListsWarning(info: EngineInfo): string | null {
  const missing = info.lists.filter((l) => l.state === 'missing' || l.state === 'failed').map((l) => l.name);
  if (missing.length === 0) return null;
  return (
    `no loaded source answers for ${missing.join(', ')}: those flags are false for every address; ` +
    '`iprecord update` downloads the public lists (docs/threat-feeds.md)'
  );
}
