/**
 * What the feed parsers share: the options, what a parse gives, the
 * collector of entries and bad lines, and one line of a list read from
 * its text (any entry form).
 */

import { parseIp, type Address } from '../../ip/address.js';
import { parseIpInto } from '../../ip/parse.js';
import { RangeList } from './ranges.js';
import { compareWords, RangeList6 } from './ranges6.js';

export interface ParseOptions {
  /** `csv`: the column of the address, by header name or 0-based index. Default 0. */
  readonly column?: string | number;
  /** `csv`, `range-csv`: whether the first data line is a header. Default: detected (a first field that is not an address). */
  readonly header?: boolean;
  /** `list`: entries `address<TAB>hits` with fewer hits are left out (ipsum). */
  readonly minHits?: number;
  /** `csv`, `range-csv`: the character between fields. Default `,` (Avastel's lists: `;`). */
  readonly delimiter?: string;
  /** `csv`: the column of each entry's confidence (a number), by header name or index; with `minConfidence`. */
  readonly confidence?: string | number;
  /** `csv`: entries whose confidence is lower are left out (counted as skipped); needs `confidence`. */
  readonly minConfidence?: number;
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
  /** Entries left out on purpose (below `minHits` or `minConfidence`). */
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
    return new Date(
      Date.UTC(Number(unix[6]), MONTHS[unix[1].toLowerCase()], Number(unix[2]), Number(unix[3]), Number(unix[4]), Number(unix[5])),
    ).toISOString();
  }
  const iso = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)/.exec(text);
  const ms = iso ? Date.parse(`${iso[1]}T${iso[2]}Z`) : Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export class Collector {
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
    return {
      v4: this.v4,
      v6: this.v6,
      entries: this.entries,
      skipped: this.skipped,
      badLines: this.badLines,
      dataDate: this.dataDate,
      lines: this.lines,
    };
  }
}

export function lines(text: string): string[] {
  const out = text.split('\n');
  for (let i = 0; i < out.length; i++) if (out[i].endsWith('\r')) out[i] = out[i].slice(0, -1);
  return out;
}

/** One line of a list, read from its text (any entry form). */
export function listLine(c: Collector, line: number, raw: string, minHits: number): void {
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

/** The first and last addresses of the block of `bits` prefix bits (of 128) around the address in `f`, into `f` and `l`. */
export function toBlock(f: Uint32Array, l: Uint32Array, bits: number): void {
  for (let w = 0; w < 4; w++) {
    const keep = bits - w * 32;
    const host = keep >= 32 ? 0 : keep <= 0 ? 0xffffffff : 0xffffffff >>> keep;
    f[w] = (f[w] & ~host) >>> 0;
    l[w] = (f[w] | host) >>> 0;
  }
}
