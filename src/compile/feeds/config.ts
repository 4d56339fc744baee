/**
 * The feed configuration: which lists to compile, where they come from, what
 * they mean. JSON:
 *
 * ```json
 * { "feeds": [
 *   { "name": "tor_exits", "source": "https://...", "format": "list",
 *     "categories": ["tor"],
 *     "blocklist": { "name": "...", "site": "https://...", "type": "general" },
 *     "except": ["bogon"], "options": { "minHits": 3 } } ] }
 * ```
 *
 * `source` is a URL (for `iprecord update`) or a path (relative paths are
 * read from the configuration file's directory). `except` drops the feed's
 * label where a feed of those categories also lists the address (FireHOL
 * level 1 lists bogon and private ranges besides attackers). `includes`
 * names the lists this one aggregates, loaded or not: feeds that carry a
 * common list (one includes the other, or both include it) count once
 * where they all list an address (FireHOL level 1 includes dshield, feodo
 * and Spamhaus DROP, levels 2 and 3 DShield's lists of the last day and
 * month, as their headers say: named `dshield` here, one origin). A
 * configuration may `extend` the default one (`"extends": "default"`):
 * its feeds are added, and a feed of the same name changes what it states
 * of the default's (`{ "name": "tor_exits", "source": "lists/tor.txt" }`);
 * `"disable": ["name"]` drops default feeds.
 *
 * Over 300 lines: the configuration's every member is checked here, each with its error message, so that a bad file is told in one place.
 */

import { defaultWidest, type Widest } from './widest.js';
import { dirname, isAbsolute, resolve } from 'node:path';
import { readRegularText, unreadableReason, withoutBom } from '../../files/read.js';
import { InvalidOptionsError } from '../../contract/errors.js';
import { CATEGORIES, type Category } from '../../contract/template.js';
import type { Blocklist } from '../../contract/types.js';
import DEFAULT_FEEDS from './default-feeds.json';
import { FEED_FORMATS, type FeedFormat, type ParseOptions } from './parse.js';

export interface FeedConfig {
  readonly name: string;
  /** URL or absolute path (relative paths are resolved when the configuration is read). */
  readonly source: string;
  readonly format: FeedFormat;
  readonly categories: readonly Category[];
  readonly blocklist?: Blocklist;
  readonly except?: readonly Category[];
  /** Lists this one aggregates, loaded or not (FireHOL's levels name theirs): feeds that carry a common list count once where they all list an address. */
  readonly includes?: readonly string[];
  readonly options?: ParseOptions;
  /** The widest entry taken, as the shortest prefix of each family (`widest.ts`; default by category, 0: any). */
  readonly widest?: Partial<Widest>;
}

/** The widest entry a feed takes: its own setting over its categories' default. */
export const widestOf = (feed: FeedConfig): Widest => ({ ...defaultWidest(feed.categories), ...feed.widest });

/** A well-known address that a downloaded database must still answer as stated (country for geo data, ASN for network data). */
export interface SourceCheck {
  readonly ip: string;
  readonly country?: string;
  readonly asn?: number;
}

/**
 * The databases a dataset is compiled from: URLs (`iprecord update`
 * downloads them) or paths; geo and ASN in order of priority; null: the
 * installed default data.
 */
export interface SourcesConfig {
  readonly geo: readonly string[] | null;
  readonly asn: readonly string[] | null;
  readonly anonymous: readonly string[];
  /** Network registries: PeeringDB's network objects (`compile/asn/registry.ts`), for `asn.type`. */
  readonly networks: readonly string[];
  /** Addresses every download must still answer as stated. Default: `DEFAULT_CHECKS`. */
  readonly checks: readonly SourceCheck[];
  /** Fewest networks a downloaded database must hold. @default 1000 */
  readonly minNetworks: number;
  /** Largest range CSV taken, in bytes: its rows are held in memory, about 19 bytes for each of its bytes. @default 128 MiB */
  readonly maxCsvBytes: number;
  /** The User-Agent of the sources' downloads (bgp.tools asks for one that names its user and a contact). @default iprecord-update */
  readonly userAgent?: string;
}

/**
 * Addresses whose country and network no geo or ASN database should lose:
 * not anycast where a country is checked (databases place Google's and
 * Cloudflare's IPv6 resolvers in different countries), Deutsche Telekom's
 * IPv6 block for IPv6.
 */
export const DEFAULT_CHECKS: readonly SourceCheck[] = [
  { ip: '8.8.8.8', country: 'US', asn: 15169 },
  { ip: '1.1.1.1', asn: 13335 },
  { ip: '2003::1', country: 'DE', asn: 3320 },
  { ip: '2001:4860:4860::8888', asn: 15169 },
];

export interface ThreatConfig {
  readonly feeds: readonly FeedConfig[];
  /** The databases `iprecord build` and `update` compile the feeds with. */
  readonly sources: SourcesConfig;
}

/** Whether a feed source is a URL (else a path). */
export const isUrl = (s: string): boolean => /^https?:\/\//i.test(s);

function fail(where: string, what: string): never {
  throw new InvalidOptionsError(`Feed configuration ${where}: ${what}`);
}

function categories(v: unknown, where: string, field: string): Category[] {
  if (!Array.isArray(v) || v.some((c) => !CATEGORIES.includes(c as Category)))
    fail(where, `"${field}" must be a list of ${CATEGORIES.join(', ')}.`);
  return v as Category[];
}

function feed(v: unknown, i: number, base: string): FeedConfig {
  const where = `feeds[${i}]`;
  if (v === null || typeof v !== 'object') fail(where, 'must be an object.');
  const f = v as Record<string, unknown>;
  // The name is a file name under feeds/: not "." or ".." nor hidden.
  if (typeof f.name !== 'string' || !/^[\w-][\w.-]{0,63}$/.test(f.name))
    fail(where, '"name" must be 1-64 letters, digits, "_", "." or "-", not starting with ".".');
  if (typeof f.source !== 'string' || f.source === '') fail(where, '"source" must be a URL or a path.');
  if (!FEED_FORMATS.includes(f.format as FeedFormat)) fail(where, `"format" must be one of ${FEED_FORMATS.join(', ')}.`);
  const cats = categories(f.categories, where, 'categories');
  if (cats.length === 0) fail(where, '"categories" must not be empty.');
  let blocklist: Blocklist | undefined;
  if (f.blocklist !== undefined) {
    const b = f.blocklist as Record<string, unknown>;
    if (
      b === null ||
      typeof b !== 'object' ||
      typeof b.name !== 'string' ||
      typeof b.site !== 'string' ||
      (b.type !== undefined && typeof b.type !== 'string')
    ) {
      fail(where, '"blocklist" must be { name, site, type }.');
    }
    blocklist = { name: b.name, site: b.site, type: (b.type as string | undefined) ?? 'general' };
  }
  const except = f.except === undefined ? undefined : categories(f.except, where, 'except');
  if (f.includes !== undefined && (!Array.isArray(f.includes) || f.includes.some((n) => typeof n !== 'string')))
    fail(where, '"includes" must be a list of feed names.');
  const includes = f.includes as string[] | undefined;
  const o = (f.options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object') fail(where, '"options" must be an object.');
  if (o.column !== undefined && typeof o.column !== 'string' && !(Number.isInteger(o.column) && (o.column as number) >= 0))
    fail(where, '"options.column" must be a name or an index.');
  if (o.header !== undefined && typeof o.header !== 'boolean') fail(where, '"options.header" must be true or false.');
  if (o.minHits !== undefined && !(Number.isInteger(o.minHits) && (o.minHits as number) >= 0))
    fail(where, '"options.minHits" must be a whole number.');
  if (o.delimiter !== undefined && !(typeof o.delimiter === 'string' && /^[^"\r\n]$/u.test(o.delimiter)))
    fail(where, '"options.delimiter" must be one character (not a quote or a line break).');
  if (o.confidence !== undefined && typeof o.confidence !== 'string' && !(Number.isInteger(o.confidence) && (o.confidence as number) >= 0))
    fail(where, '"options.confidence" must be a name or an index.');
  if (o.minConfidence !== undefined && !(typeof o.minConfidence === 'number' && Number.isFinite(o.minConfidence)))
    fail(where, '"options.minConfidence" must be a number.');
  if ((o.confidence === undefined) !== (o.minConfidence === undefined) || (o.minConfidence !== undefined && f.format !== 'csv'))
    fail(where, '"options.confidence" (a column) and "options.minConfidence" go together, for a "csv" feed.');
  const w = (f.widest === undefined ? {} : f.widest) as Record<string, unknown>;
  if (w === null || typeof w !== 'object' || Object.keys(w).some((k) => k !== 'ipv4' && k !== 'ipv6'))
    fail(where, '"widest" must be { "ipv4": a prefix length, "ipv6": a prefix length }.');
  for (const [family, most] of [
    ['ipv4', 32],
    ['ipv6', 128],
  ] as const) {
    const v = w[family];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= most))
      fail(where, `"widest.${family}" must be a prefix length from 0 (any entry) to ${most}.`);
  }
  const widest = f.widest === undefined ? {} : { widest: w as Partial<Widest> };
  const source = isUrl(f.source) || isAbsolute(f.source) ? f.source : resolve(base, f.source);
  return {
    name: f.name,
    source,
    format: f.format as FeedFormat,
    categories: cats,
    blocklist,
    except,
    ...(includes === undefined ? {} : { includes }),
    options: o as ParseOptions,
    ...widest,
  };
}

/**
 * Validates a configuration object. `base` is the directory that relative
 * sources are read from.
 * @throws InvalidOptionsError with the place of the first problem.
 */
export function parseThreatConfig(value: unknown, base: string): ThreatConfig {
  if (value === null || typeof value !== 'object') fail('', 'must be a JSON object with "feeds".');
  const v = value as Record<string, unknown>;
  let feeds: FeedConfig[] = [];
  // The default configuration's own entries, by name: a feed of the same name states only what it changes. The
  // catalogue's feeds are loaded only where named so (`{ "name": "avastel_proxy_1d" }`), extending or not.
  const inherited = new Map<string, Record<string, unknown>>();
  for (const f of DEFAULT_FEEDS.catalogue as Record<string, unknown>[]) inherited.set(f.name as string, f);
  if (v.extends !== undefined) {
    if (v.extends !== 'default') fail('', '"extends" can only be "default".');
    feeds = [...defaultThreatConfig().feeds];
    for (const f of DEFAULT_FEEDS.feeds as Record<string, unknown>[]) inherited.set(f.name as string, f);
  }
  if (v.disable !== undefined) {
    if (!Array.isArray(v.disable) || v.disable.some((n) => typeof n !== 'string')) fail('', '"disable" must be a list of feed names.');
    const off = new Set(v.disable as string[]);
    feeds = feeds.filter((f) => !off.has(f.name));
  }
  if (!Array.isArray(v.feeds)) fail('', '"feeds" must be a list.');
  const own = v.feeds.map((f, i) => feed(overlay(inherited, f), i, base));
  const names = new Set<string>();
  for (const f of own) {
    if (names.has(f.name)) fail('', `two feeds are named "${f.name}".`);
    names.add(f.name);
  }
  // A default feed changed keeps its place; new feeds come after.
  const changed = new Map(own.map((f) => [f.name, f]));
  const kept = feeds.map((f) => changed.get(f.name) ?? f);
  const present = new Set(kept.map((f) => f.name));
  // Extending the default configuration keeps its sources unless this one names its own.
  const sources = v.sources === undefined && v.extends !== undefined ? defaultThreatConfig().sources : sourcesOf(v.sources, base);
  return { feeds: [...kept, ...own.filter((f) => !present.has(f.name))], sources };
}

/** The configuration of the installed default data alone. */
/** The default `sources.maxCsvBytes`: bounds update's memory near 2.5 GB, four times the default ASN data's CSV. */
export const MAX_CSV_SOURCE_BYTES = 128 << 20;

export const NO_SOURCES: SourcesConfig = {
  geo: null,
  asn: null,
  anonymous: [],
  networks: [],
  checks: DEFAULT_CHECKS,
  minNetworks: 1000,
  maxCsvBytes: MAX_CSV_SOURCE_BYTES,
};

/**
 * The `sources` member: `{ "geo": [...], "asn": [...], "anonymous": [...],
 * "networks": [...], "checks": [{ "ip", "country", "asn" }],
 * "minNetworks": n, "maxCsvBytes": n, "userAgent": "..." }`, each
 * optional; list entries are URLs (`${NAME}` in one: that environment
 * variable's value, `files/url.ts`) or paths.
 */
function sourcesOf(value: unknown, base: string): SourcesConfig {
  if (value === undefined) return NO_SOURCES;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('', '"sources" must be an object of "geo", "asn", "anonymous" and "networks" lists.');
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v))
    if (!['geo', 'asn', 'anonymous', 'networks', 'checks', 'minNetworks', 'maxCsvBytes', 'userAgent'].includes(k))
      fail('', `"sources" has an unknown member "${k}".`);
  const entries = (k: string): string[] | null => {
    const list = v[k];
    if (list === undefined) return null;
    if (!Array.isArray(list) || list.length === 0 || list.some((p) => typeof p !== 'string' || p === ''))
      fail('', `"sources.${k}" must be a list of URLs or file paths.`);
    return (list as string[]).map((p) => (isUrl(p) || isAbsolute(p) ? p : resolve(base, p)));
  };
  let checks = DEFAULT_CHECKS;
  if (v.checks !== undefined) {
    const ok = (c: unknown) => {
      const e = c as Record<string, unknown>;
      return (
        c !== null &&
        typeof c === 'object' &&
        typeof e.ip === 'string' &&
        (e.country === undefined || typeof e.country === 'string') &&
        (e.asn === undefined || Number.isInteger(e.asn))
      );
    };
    if (!Array.isArray(v.checks) || !v.checks.every(ok)) fail('', '"sources.checks" must be a list of { "ip", "country", "asn" }.');
    checks = v.checks as SourceCheck[];
  }
  if (v.minNetworks !== undefined && !(Number.isInteger(v.minNetworks) && (v.minNetworks as number) >= 0))
    fail('', '"sources.minNetworks" must be a whole number.');
  if (v.maxCsvBytes !== undefined && !(Number.isInteger(v.maxCsvBytes) && (v.maxCsvBytes as number) > 0))
    fail('', '"sources.maxCsvBytes" must be a whole number of bytes.');
  // A header's value: visible ASCII and spaces, not empty.
  if (v.userAgent !== undefined && !(typeof v.userAgent === 'string' && /^[\x20-\x7e]*[\x21-\x7e][\x20-\x7e]*$/.test(v.userAgent)))
    fail('', '"sources.userAgent" must be a User-Agent header\'s text (printable ASCII).');
  return {
    geo: entries('geo'),
    asn: entries('asn'),
    anonymous: entries('anonymous') ?? [],
    networks: entries('networks') ?? [],
    checks,
    minNetworks: (v.minNetworks as number | undefined) ?? 1000,
    maxCsvBytes: (v.maxCsvBytes as number | undefined) ?? MAX_CSV_SOURCE_BYTES,
    ...(v.userAgent === undefined ? {} : { userAgent: v.userAgent as string }),
  };
}

/**
 * A feed entry over the default entry of the same name, if any: what it
 * states replaces the default's (`options` member by member), the rest is
 * kept.
 */
function overlay(inherited: ReadonlyMap<string, Record<string, unknown>>, entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object') return entry;
  const e = entry as Record<string, unknown>;
  const d = typeof e.name === 'string' ? inherited.get(e.name) : undefined;
  if (d === undefined) return entry;
  const options =
    d.options !== undefined && e.options !== null && typeof e.options === 'object'
      ? { ...(d.options as object), ...e.options }
      : (e.options ?? d.options);
  return { ...d, ...e, ...(options === undefined ? {} : { options }) };
}

/** A configuration file's largest size: the built-in one is under 20 kB. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** Reads a configuration file. @throws InvalidOptionsError */
export function readThreatConfig(path: string): ThreatConfig {
  let text: string;
  try {
    text = readRegularText(path, MAX_CONFIG_BYTES);
  } catch (e) {
    throw new InvalidOptionsError(`Cannot read the feed configuration ${path}: ${unreadableReason(e)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (e) {
    throw new InvalidOptionsError(`The feed configuration ${path} is not valid JSON: ${(e as Error).message}`);
  }
  return parseThreatConfig(value, dirname(resolve(path)));
}

/** The default feeds (public lists, by URL): `src/compile/feeds/default-feeds.json`. */
export function defaultThreatConfig(): ThreatConfig {
  return parseThreatConfig(DEFAULT_FEEDS, process.cwd());
}
