/**
 * Parsers for threat feeds in the formats they are published in. Each turns
 * a file into ranges of addresses (typed arrays, one range per entry) and
 * reports every line it could not read, with its line number; none stops
 * at a bad line.
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

import { splitCsvLine } from '../../text/csv.js';
import { withoutBom } from '../../files/read.js';
import { parseCidr, parseIp, type Address } from '../../ip/address.js';
import { CH_0, CH_9, CH_A, CH_COLON, CH_DOT, CH_F, CH_LA, CH_LF, hexValue, parseIpInto, wordsOfGroups } from '../../ip/parse.js';
import { RangeList, RangeList6, compareWords } from './ranges.js';

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

export interface BadLine {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

export interface ParsedFeed {
  /**
   * IPv4 entries as inclusive ranges of addresses (an entry is an address,
   * a CIDR block or a range), in file order; each range's value is the
   * entry's hit count (ipsum), else 1.
   */
  readonly v4: RangeList;
  /** IPv6 entries, the same way. */
  readonly v6: RangeList6;
  /** Entries read (one range each). */
  readonly entries: number;
  /** Entries left out on purpose (below `minHits`). */
  readonly skipped: number;
  readonly badLines: BadLine[];
  /** A date the file states for its data (FireHOL, ipsum, Spamhaus, geofeed headers, JSON fields), ISO 8601; else null. */
  readonly dataDate: string | null;
  /** Lines read (for a list: every line, empty ones too). */
  readonly lines: number;
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
  readonly v4: RangeList;
  readonly v6 = new RangeList6();
  readonly badLines: BadLine[] = [];
  entries = 0;
  skipped = 0;
  dataDate: string | null = null;
  private readonly first = new Uint32Array(4);
  private readonly last = new Uint32Array(4);

  /** `capacity`: IPv4 ranges to make room for (a guess from the size of the file). */
  constructor(capacity = 256) {
    this.v4 = new RangeList(capacity);
  }

  /**
   * Adds one textual entry: an address, a CIDR block or a range `a-b`.
   * `raw`, the text reported for a bad entry, may be made only then.
   */
  add(line: number, raw: string | (() => string), text: string, hits = 1): void {
    const reason = this.entry(text, hits);
    if (reason === null) this.entries++;
    else this.bad(line, typeof raw === 'string' ? raw : raw(), reason);
  }

  /** Adds an entry's range; a reason when it is not one. */
  private entry(text: string, hits: number): string | null {
    const dash = text.indexOf('-');
    if (dash > 0) {
      const a = parseIp(text.slice(0, dash).trim());
      const b = parseIp(text.slice(dash + 1).trim());
      if (!a || !b) return 'invalid address range';
      if (a.version !== b.version) return 'range ends of different address families';
      if (compareWords(a.words, b.words) > 0) return 'range start after its end';
      this.range(a, b.words, hits);
      return null;
    }
    // An address or a CIDR block: its first and last addresses, read into reused words.
    const f = this.first;
    const l = this.last;
    const slash = text.indexOf('/');
    const version = parseIpInto(text, f, slash < 0 ? text.length : slash);
    if (version === 0) return 'not an address or CIDR';
    let prefix = version === 4 ? 32 : 128;
    if (slash >= 0) {
      const digits = text.length - slash - 1;
      if (digits < 1 || digits > 3) return 'not an address or CIDR';
      let p = 0;
      for (let i = slash + 1; i < text.length; i++) {
        const d = text.charCodeAt(i) - 48;
        if (d < 0 || d > 9) return 'not an address or CIDR';
        p = p * 10 + d;
      }
      if (p > prefix) return 'not an address or CIDR';
      prefix = p;
    }
    toBlock(f, l, version === 4 ? prefix + 96 : prefix);
    if (version === 4) this.v4.push(f[3], l[3], hits);
    else this.v6.push(f, l, hits);
    return null;
  }

  private range(start: Address, end: readonly number[], hits: number): void {
    if (start.version === 4) this.v4.push(start.words[3], end[3], hits);
    else this.v6.push(start.words, end, hits);
  }

  bad(line: number, raw: string, reason: string): void {
    this.badLines.push({ line, text: raw.length > 200 ? raw.slice(0, 200) + '…' : raw, reason });
  }

  /** A comment's date makes the list's date when it is newer (a header may give the source's date and its own). */
  comment(text: string): void {
    const date = commentDate(text);
    if (date !== null && (this.dataDate === null || date > this.dataDate)) this.dataDate = date;
  }

  lines = 0;

  result(): ParsedFeed {
    return { v4: this.v4, v6: this.v6, entries: this.entries, skipped: this.skipped, badLines: this.badLines, dataDate: this.dataDate, lines: this.lines };
  }
}

function lines(text: string): string[] {
  const out = text.split('\n');
  for (let i = 0; i < out.length; i++) if (out[i].endsWith('\r')) out[i] = out[i].slice(0, -1);
  return out;
}

/** One line of a list, read from its text (any entry form). */
function listLine(c: Collector, line: number, raw: string, minHits: number): void {
  let t = raw.trim();
  if (t === '') return;
  if (t[0] === '#' || t[0] === ';') {
    c.comment(t.slice(1));
    return;
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
      c.bad(line, raw, 'unexpected text after the entry');
      return;
    }
    hits = Number(rest);
    t = t.slice(0, ws);
    if (hits < minHits) {
      c.skipped++;
      return;
    }
  }
  c.add(line, raw, stripProxy(t), hits);
}

const NL = 10;
const CR = 13;
const TAB = 9;
const SLASH = 47;

/** Whether bytes `from` to `to` are only hex digits, colons (two or more) and slashes. */
function bareV6(buf: Buffer, from: number, to: number): boolean {
  let colons = 0;
  for (let i = from; i < to; i++) {
    const ch = buf[i];
    if (ch === CH_COLON) colons++;
    else if (!((ch >= CH_0 && ch <= CH_9) || (ch >= CH_LA && ch <= CH_LF) || (ch >= CH_A && ch <= CH_F) || ch === SLASH)) return false;
  }
  return colons >= 2;
}

/** The first and last addresses of the block of `bits` prefix bits (of 128) around the address in `f`, into `f` and `l`. */
function toBlock(f: Uint32Array, l: Uint32Array, bits: number): void {
  for (let w = 0; w < 4; w++) {
    const keep = bits - w * 32;
    const host = keep >= 32 ? 0 : keep <= 0 ? 0xffffffff : 0xffffffff >>> keep;
    f[w] = (f[w] & ~host) >>> 0;
    l[w] = (f[w] | host) >>> 0;
  }
}

/** Groups of the IPv6 address `v6FromBytes` reads, and its first and last addresses. */
const groups6 = new Uint16Array(8);
const first6 = new Uint32Array(4);
const last6 = new Uint32Array(4);

/**
 * A bare IPv6 address or block (a `bareV6` line) read from the bytes into
 * `c`, as the text reader reads it; false, with nothing added, for any line
 * that is not a valid one (the text reader then says why).
 */
function v6FromBytes(buf: Buffer, from: number, to: number, c: Collector): boolean {
  let i = from;
  let count = 0;
  let gap = -1;
  if (buf[i] === CH_COLON) {
    if (i + 1 >= to || buf[i + 1] !== CH_COLON) return false;
    gap = 0;
    i += 2;
  }
  while (i < to && buf[i] !== SLASH) {
    let value = 0;
    let digits = 0;
    for (; i < to; i++) {
      const h = hexValue(buf[i]);
      if (h < 0) break;
      value = (value << 4) | h;
      if (++digits > 4) return false;
    }
    if (digits === 0 || count === 8) return false;
    groups6[count++] = value;
    if (i === to || buf[i] === SLASH) break;
    // A colon (the only other byte of a bare line), then a group, or a second colon.
    i++;
    if (i < to && buf[i] === CH_COLON) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i === to || buf[i] === SLASH) return false;
  }
  let prefix = 128;
  if (i < to) {
    // `/` and one to three digits, at most 128.
    const digits = to - i - 1;
    if (digits < 1 || digits > 3) return false;
    prefix = 0;
    for (let k = i + 1; k < to; k++) {
      const d = buf[k] - CH_0;
      if (d < 0 || d > 9) return false;
      prefix = prefix * 10 + d;
    }
    if (prefix > 128) return false;
  }
  // An IPv4-mapped address is IPv4 to the text reader, with prefixes up to 32.
  if (wordsOfGroups(groups6, count, gap, first6) !== 6) return false;
  toBlock(first6, last6, prefix);
  c.v6.push(first6, last6, 1);
  c.entries++;
  return true;
}

function isAscii(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] > 127) return false;
  return true;
}

/**
 * A list, read from its bytes. Lines of the commonest forms (`a.b.c.d`,
 * `a.b.c.d/n`, `a.b.c.d<TAB>hits`, an IPv6 address or block alone) are
 * read from the bytes directly; any
 * other line is read from its text by `listLine`, which gives the same
 * answer for those forms (a property test holds the two to that). `fast`
 * false reads every line from its text.
 */
export function parseList(bytes: Uint8Array, options: ParseOptions, fast = true): ParsedFeed {
  // Most lines of a large list are IPv4 addresses of 12 to 16 bytes.
  const c = new Collector(Math.max(256, Math.ceil(bytes.length / 12)));
  const minHits = options.minHits ?? 0;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = buf.length;
  const v4 = c.v4;
  let pos = 0;
  let line = 0;
  while (pos < n) {
    line++;
    fastPath: if (fast) {
      // Dotted quad: 1 to 3 digits per part, no leading zeros, each at most 255.
      let p = pos;
      let value = 0;
      for (let part = 0; part < 4; part++) {
        const d0 = buf[p];
        if (!(d0 >= CH_0 && d0 <= CH_9)) break fastPath;
        let v = d0 - CH_0;
        let ch = buf[++p];
        if (ch >= CH_0 && ch <= CH_9) {
          if (v === 0) break fastPath;
          v = v * 10 + ch - CH_0;
          ch = buf[++p];
          if (ch >= CH_0 && ch <= CH_9) {
            v = v * 10 + ch - CH_0;
            ch = buf[++p];
            if (v > 255) break fastPath;
          }
        }
        value = (value << 8) | v;
        if (part < 3) {
          if (ch !== CH_DOT) break fastPath;
          p++;
        }
      }
      let ch = buf[p];
      let prefix = 32;
      if (ch === SLASH) {
        const d0 = buf[++p];
        if (!(d0 >= CH_0 && d0 <= CH_9)) break fastPath;
        prefix = d0 - CH_0;
        ch = buf[++p];
        if (ch >= CH_0 && ch <= CH_9) {
          if (prefix === 0) break fastPath;
          prefix = prefix * 10 + ch - CH_0;
          ch = buf[++p];
          if (prefix > 32) break fastPath;
        }
      }
      let hits = 1;
      let counted = false;
      if (ch === TAB && prefix === 32) {
        counted = true;
        const d0 = buf[++p];
        if (!(d0 >= CH_0 && d0 <= CH_9)) break fastPath;
        hits = d0 - CH_0;
        ch = buf[++p];
        for (let k = 0; ch >= CH_0 && ch <= CH_9; k++) {
          if (k === 8) break fastPath;
          hits = hits * 10 + ch - CH_0;
          ch = buf[++p];
        }
      }
      if (ch === CR) ch = buf[++p];
      if (!(ch === NL || p >= n)) break fastPath;
      pos = p + 1;
      if (counted && hits < minHits) {
        c.skipped++;
        continue;
      }
      const host = prefix === 0 ? 0xffffffff : prefix === 32 ? 0 : 0xffffffff >>> prefix;
      const first = (value & ~host) >>> 0;
      v4.push(first, (first | host) >>> 0, hits);
      c.entries++;
      continue;
    }
    let end = buf.indexOf(NL, pos);
    if (end < 0) end = n;
    const stop = end > pos && buf[end - 1] === CR ? end - 1 : end;
    // An IPv6 address or block alone on its line (hex digits, two colons or more, a slash) is read from the bytes.
    const bare = fast && bareV6(buf, pos, stop);
    if (bare && v6FromBytes(buf, pos, stop, c)) {
      pos = end + 1;
      continue;
    }
    const raw = buf.toString('latin1', pos, stop);
    if (bare) c.add(line, raw, raw);
    else listLine(c, line, isAscii(buf, pos, stop) ? raw : buf.toString('utf8', pos, stop), minHits);
    pos = end + 1;
  }
  c.lines = line;
  return c.result();
}

/** Whether a CSV field holds an address or CIDR (to tell a header line). */
function isEntry(field: string): boolean {
  return parseCidr(field.trim()) !== null;
}

/**
 * A CSV feed: the address in one column (`range-csv`: a range in the first
 * two). After the header, a line without quotes has its field found by its
 * commas, without splitting the line into all its fields (a geofeed or VPN
 * list has a dozen per line); `fast` false splits every line.
 */
export function parseCsv(text: string, options: ParseOptions, ranges: boolean, fast = true): ParsedFeed {
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
    if (fast && headerDone && raw.indexOf('"') < 0) {
      // Fields `column` (or 0 and 1) between commas, as splitCsvLine splits a line without quotes.
      const want = ranges ? 0 : column;
      let from = 0;
      for (let k = 0; k < want && from >= 0; k++) {
        const comma = raw.indexOf(',', from);
        from = comma < 0 ? -1 : comma + 1;
      }
      const to = from < 0 ? -1 : raw.indexOf(',', from);
      if (!ranges) {
        if (from < 0) c.bad(i + 1, raw, `no column ${column}`);
        else c.add(i + 1, raw, raw.slice(from, to < 0 ? raw.length : to).trim());
      } else if (to < 0) c.bad(i + 1, raw, 'expected start,end');
      else {
        const next = raw.indexOf(',', to + 1);
        c.add(i + 1, raw, `${raw.slice(0, to).trim()}-${raw.slice(to + 1, next < 0 ? raw.length : next).trim()}`);
      }
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

/**
 * Parses a cloud provider's JSON: `collect` passes each prefix with where
 * it is, as a function (the text of a place is made only for a bad one:
 * Azure's file has 90 000 prefixes).
 */
function parseJson(text: string, collect: (root: Json, add: (cidr: unknown, where: () => string) => void) => void, date: (root: Json) => unknown): ParsedFeed {
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
    if (typeof cidr !== 'string') c.bad(n, `${where()}: ${JSON.stringify(cidr)}`, 'not a CIDR string');
    else c.add(n, () => `${where()}: ${cidr}`, cidr.trim());
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
export function parseFeed(input: string | Uint8Array, format: FeedFormat, options: ParseOptions = {}): ParsedFeed {
  if (format === 'list') return parseList(typeof input === 'string' ? Buffer.from(input, 'utf8') : input, options);
  const text = withoutBom(typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.length).toString('utf8'));
  switch (format) {
    case 'csv':
      return parseCsv(text, options, false);
    case 'range-csv':
      return parseCsv(text, options, true);
    case 'aws-json':
      return parseJson(
        text,
        (root, add) => {
          arr(obj(root).prefixes).forEach((p, i) => add(obj(p).ip_prefix, () => `prefixes[${i}]`));
          arr(obj(root).ipv6_prefixes).forEach((p, i) => add(obj(p).ipv6_prefix, () => `ipv6_prefixes[${i}]`));
        },
        (root) => obj(root).createDate,
      );
    case 'gcp-json':
      return parseJson(
        text,
        (root, add) => arr(obj(root).prefixes).forEach((p, i) => add(obj(p).ipv4Prefix ?? obj(p).ipv6Prefix, () => `prefixes[${i}]`)),
        (root) => obj(root).creationTime,
      );
    case 'azure-json':
      return parseJson(
        text,
        (root, add) => arr(obj(root).values).forEach((v, i) => arr(obj(obj(v).properties).addressPrefixes).forEach((p, j) => add(p, () => `values[${i}].properties.addressPrefixes[${j}]`))),
        () => null,
      );
    case 'oracle-json':
      return parseJson(
        text,
        (root, add) => arr(obj(root).regions).forEach((r, i) => arr(obj(r).cidrs).forEach((c, j) => add(obj(c).cidr, () => `regions[${i}].cidrs[${j}]`))),
        (root) => obj(root).last_updated_timestamp,
      );
  }
}
