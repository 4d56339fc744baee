/**
 * Parsers for threat feeds in the formats they are published in. Each turns
 * a file's text into networks (CIDR blocks) and reports every line it could
 * not read, with its line number; none stops at a bad line.
 *
 * Formats:
 * - `list`: one entry per line: an address, a CIDR, a range `a-b`, an
 *   `address:port` or `scheme://address:port` (proxy lists, `[v6]:port`
 *   too), or `address<TAB>hits` (ipsum, with `minHits`). Comments start
 *   with `#` or `;`, at the start of a line or after an entry (Spamhaus:
 *   `CIDR ; SBL123`). FireHOL `.netset` and `.ipset` files are lists.
 * - `csv`: the address or CIDR in a column chosen by header name or index
 *   (Tor and VPN exit CSVs, RFC 8805 geofeeds such as Apple's egress
 *   ranges), RFC 4180 quoting, `#` comment lines.
 * - `range-csv`: `start,end,...` columns (ipcat).
 * - `aws-json`, `gcp-json`, `azure-json`, `oracle-json`: the cloud
 *   providers' published range files.
 */

import { splitCsvLine } from '../build/csv.js';
import { rangeToCidrs } from '../build/ranges.js';
import { parseCidr, parseIp, type Address } from '../ip/address.js';
import { maskWords } from '../ip/format.js';
import type { IpVersion } from '../ip/parse.js';

export type FeedFormat = 'list' | 'csv' | 'range-csv' | 'aws-json' | 'gcp-json' | 'azure-json' | 'oracle-json';

export const FEED_FORMATS: readonly FeedFormat[] = ['list', 'csv', 'range-csv', 'aws-json', 'gcp-json', 'azure-json', 'oracle-json'];

export interface ParseOptions {
  /** `csv`: the column of the address, by header name or 0-based index. Default 0. */
  readonly column?: string | number;
  /** `csv`, `range-csv`: whether the first data line is a header. Default: detected (a first field that is not an address). */
  readonly header?: boolean;
  /** `list`: entries `address<TAB>hits` with fewer hits are left out (ipsum). */
  readonly minHits?: number;
}

/** One network of a feed. `hits` is the entry's hit count (ipsum), else 1. */
export interface Network {
  readonly version: IpVersion;
  readonly words: readonly [number, number, number, number];
  readonly prefix: number;
  readonly hits: number;
}

export interface BadLine {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

export interface ParsedFeed {
  readonly networks: Network[];
  /** Entries read (a range split into several blocks counts once). */
  readonly entries: number;
  /** Entries left out on purpose (below `minHits`). */
  readonly skipped: number;
  readonly badLines: BadLine[];
  /** A date the file states for its data (FireHOL, ipsum, Spamhaus, geofeed headers, JSON fields), ISO 8601; else null. */
  readonly dataDate: string | null;
}

/** The network of `prefix` bits that holds the address (host bits cleared). */
function network(a: Address, prefix: number, hits: number): Network {
  const w = maskWords(a.version, a.words, prefix);
  return { version: a.version, words: [w[0], w[1], w[2], w[3]], prefix, hits };
}

/** Networks of one textual entry: address, CIDR or range. Throws with a reason. */
function entryNetworks(text: string, hits: number): Network[] {
  const dash = text.indexOf('-');
  if (dash > 0) {
    const a = parseIp(text.slice(0, dash).trim());
    const b = parseIp(text.slice(dash + 1).trim());
    if (!a || !b) throw new Error('invalid address range');
    return rangeToCidrs(a, b).map((c) => network({ version: c.version, words: c.words }, c.prefix, hits));
  }
  const c = parseCidr(text);
  if (!c) throw new Error('not an address or CIDR');
  return [network(c.address, c.prefix, hits)];
}

/** The address part of a proxy entry: `scheme://host:port`, `host:port`, `[v6]:port`. */
function stripProxy(text: string): string {
  let t = text;
  const scheme = t.indexOf('://');
  if (scheme >= 0) t = t.slice(scheme + 3);
  const at = t.lastIndexOf('@'); // user:pass@host:port
  if (at >= 0) t = t.slice(at + 1);
  if (t.startsWith('[')) {
    const close = t.indexOf(']');
    return close > 0 ? t.slice(1, close) : t;
  }
  // host:port (one colon, so not a bare IPv6 address)
  const colon = t.indexOf(':');
  if (colon >= 0 && colon === t.lastIndexOf(':') && /^\d{1,5}$/.test(t.slice(colon + 1))) return t.slice(0, colon);
  return t;
}

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

/**
 * A date in a comment line: FireHOL's `Source File Date: Sat Aug 22 00:54:28
 * UTC 2026`, ipsum's `Last update: Sat, 22 Aug 2026 03:00:29 +0200`,
 * Spamhaus' `Last-Modified: ...`, Team Cymru's `last updated 1710089701`,
 * a geofeed's `Last modified: 2025-07-24 10:00:06`.
 */
export function commentDate(comment: string): string | null {
  const epoch = /last updated (\d{9,11})\b/i.exec(comment);
  if (epoch) return new Date(Number(epoch[1]) * 1000).toISOString();
  const labelled = /(?:source file date|last update|last-modified|last modified|updated)\s*:\s*(.+)$/i.exec(comment);
  if (!labelled) return null;
  const text = labelled[1].trim();
  // "Sat Aug 22 00:54:28 UTC 2026" (date(1) output), which Date.parse does not take everywhere.
  const unix = /^\w{3} (\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) UTC (\d{4})$/.exec(text);
  if (unix && MONTHS[unix[1].toLowerCase()] !== undefined) {
    return new Date(Date.UTC(Number(unix[6]), MONTHS[unix[1].toLowerCase()], Number(unix[2]), Number(unix[3]), Number(unix[4]), Number(unix[5]))).toISOString();
  }
  const iso = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)/.exec(text);
  const ms = iso ? Date.parse(`${iso[1]}T${iso[2]}Z`) : Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

class Collector {
  readonly networks: Network[] = [];
  readonly badLines: BadLine[] = [];
  entries = 0;
  skipped = 0;
  dataDate: string | null = null;

  add(line: number, raw: string, text: string, hits = 1): void {
    try {
      const nets = entryNetworks(text, hits);
      for (const n of nets) this.networks.push(n);
      this.entries++;
    } catch (e) {
      this.bad(line, raw, (e as Error).message);
    }
  }

  bad(line: number, raw: string, reason: string): void {
    this.badLines.push({ line, text: raw.length > 200 ? raw.slice(0, 200) + '…' : raw, reason });
  }

  comment(text: string): void {
    if (this.dataDate === null) this.dataDate = commentDate(text);
  }

  result(): ParsedFeed {
    return { networks: this.networks, entries: this.entries, skipped: this.skipped, badLines: this.badLines, dataDate: this.dataDate };
  }
}

function lines(text: string): string[] {
  const out = text.split('\n');
  for (let i = 0; i < out.length; i++) if (out[i].endsWith('\r')) out[i] = out[i].slice(0, -1);
  return out;
}

function parseList(text: string, options: ParseOptions): ParsedFeed {
  const c = new Collector();
  const minHits = options.minHits ?? 0;
  const all = lines(text);
  for (let i = 0; i < all.length; i++) {
    const raw = all[i];
    let t = raw.trim();
    if (t === '') continue;
    if (t[0] === '#' || t[0] === ';') {
      c.comment(t.slice(1));
      continue;
    }
    const cut = t.search(/\s[#;]/);
    if (cut >= 0) t = t.slice(0, cut).trim();
    // A range may have spaces around its dash: "a - b".
    if (t.includes('-')) t = t.replace(/\s*-\s*/, '-');
    let hits = 1;
    const ws = t.search(/\s/);
    if (ws >= 0) {
      const rest = t.slice(ws).trim();
      if (!/^\d+$/.test(rest)) {
        c.bad(i + 1, raw, 'unexpected text after the entry');
        continue;
      }
      hits = Number(rest);
      t = t.slice(0, ws);
      if (hits < minHits) {
        c.skipped++;
        continue;
      }
    }
    c.add(i + 1, raw, stripProxy(t), hits);
  }
  return c.result();
}

/** Whether a CSV field holds an address or CIDR (to tell a header line). */
function isEntry(field: string): boolean {
  return parseCidr(field.trim()) !== null;
}

function parseCsv(text: string, options: ParseOptions, ranges: boolean): ParsedFeed {
  const c = new Collector();
  const all = lines(text);
  let column = typeof options.column === 'number' ? options.column : 0;
  let headerDone = false;
  for (let i = 0; i < all.length; i++) {
    const raw = all[i];
    if (raw.trim() === '') continue;
    if (raw.trimStart().startsWith('#')) {
      c.comment(raw.trimStart().slice(1));
      continue;
    }
    const fields = splitCsvLine(raw);
    if (fields === null) {
      c.bad(i + 1, raw, 'unclosed quoted field');
      continue;
    }
    if (!headerDone) {
      headerDone = true;
      const isHeader = options.header ?? (typeof options.column === 'string' || !isEntry(fields[column] ?? ''));
      if (isHeader) {
        if (typeof options.column === 'string') {
          const at = fields.findIndex((f) => f.trim().toLowerCase() === String(options.column).toLowerCase());
          if (at < 0) {
            c.bad(i + 1, raw, `no column named "${options.column}" in the header`);
            return c.result();
          }
          column = at;
        }
        continue;
      }
    }
    if (ranges) {
      if (fields.length < 2) {
        c.bad(i + 1, raw, 'expected start,end');
        continue;
      }
      c.add(i + 1, raw, `${fields[0].trim()}-${fields[1].trim()}`);
    } else {
      const f = fields[column];
      if (f === undefined) {
        c.bad(i + 1, raw, `no column ${column}`);
        continue;
      }
      c.add(i + 1, raw, f.trim());
    }
  }
  return c.result();
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Walks a cloud JSON file: `pick` returns the CIDR strings of one object, the walk finds the objects. */
function parseJson(text: string, collect: (root: Json, add: (cidr: unknown, where: string) => void) => void, date: (root: Json) => unknown): ParsedFeed {
  const c = new Collector();
  let root: Json;
  try {
    root = JSON.parse(text) as Json;
  } catch (e) {
    c.bad(1, text.slice(0, 200), `invalid JSON: ${(e as Error).message}`);
    return c.result();
  }
  let n = 0;
  collect(root, (cidr, where) => {
    n++;
    if (typeof cidr !== 'string') c.bad(n, `${where}: ${JSON.stringify(cidr)}`, 'not a CIDR string');
    else c.add(n, `${where}: ${cidr}`, cidr.trim());
  });
  const d = date(root);
  if (typeof d === 'string' || typeof d === 'number') {
    const ms = typeof d === 'number' ? d * 1000 : Date.parse(isoUtc(d));
    if (!Number.isNaN(ms)) c.dataDate = new Date(ms).toISOString();
  }
  return c.result();
}

/**
 * The cloud files' dates as ISO 8601 in UTC: AWS writes `2025-07-24-21-43-06`,
 * Google and Oracle a local-looking `2025-07-24T14:56:24.436` (in UTC).
 */
function isoUtc(d: string): string {
  const aws = /^(\d{4}-\d\d-\d\d)-(\d\d)-(\d\d)-(\d\d)$/.exec(d);
  if (aws) return `${aws[1]}T${aws[2]}:${aws[3]}:${aws[4]}Z`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(d)) return d + 'Z';
  return d;
}

const obj = (v: Json | undefined): Record<string, Json> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});
const arr = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);

/**
 * Parses a feed's text. JSON formats number their "lines" by entry (the
 * n-th prefix of the file), with the entry's place in the report's text.
 */
export function parseFeed(text: string, format: FeedFormat, options: ParseOptions = {}): ParsedFeed {
  switch (format) {
    case 'list':
      return parseList(text, options);
    case 'csv':
      return parseCsv(text, options, false);
    case 'range-csv':
      return parseCsv(text, options, true);
    case 'aws-json':
      return parseJson(
        text,
        (root, add) => {
          arr(obj(root).prefixes).forEach((p, i) => add(obj(p).ip_prefix, `prefixes[${i}]`));
          arr(obj(root).ipv6_prefixes).forEach((p, i) => add(obj(p).ipv6_prefix, `ipv6_prefixes[${i}]`));
        },
        (root) => obj(root).createDate,
      );
    case 'gcp-json':
      return parseJson(
        text,
        (root, add) => arr(obj(root).prefixes).forEach((p, i) => add(obj(p).ipv4Prefix ?? obj(p).ipv6Prefix, `prefixes[${i}]`)),
        (root) => obj(root).creationTime,
      );
    case 'azure-json':
      return parseJson(
        text,
        (root, add) =>
          arr(obj(root).values).forEach((v, i) => arr(obj(obj(v).properties).addressPrefixes).forEach((p, j) => add(p, `values[${i}].properties.addressPrefixes[${j}]`))),
        () => null,
      );
    case 'oracle-json':
      return parseJson(
        text,
        (root, add) => arr(obj(root).regions).forEach((r, i) => arr(obj(r).cidrs).forEach((c, j) => add(obj(c).cidr, `regions[${i}].cidrs[${j}]`))),
        (root) => obj(root).last_updated_timestamp,
      );
  }
}
