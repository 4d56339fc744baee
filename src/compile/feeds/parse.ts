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
 *   ranges), RFC 4180 quoting, `#` comment lines; another `delimiter`
 *   (Avastel's `;`), and entries below a `minConfidence` in a
 *   `confidence` column left out.
 * - `range-csv`: `start,end,...` columns (ipcat).
 * - `aws-json`, `gcp-json`, `azure-json`, `oracle-json`: the cloud
 *   providers' published range files.
 */

import { splitCsvLine } from '../../text/csv.js';
import { withoutBom } from '../../files/read.js';
import { parseCidr } from '../../ip/address.js';
import { Collector, lines, type ParsedFeed, type ParseOptions } from './collect.js';
import { parseList } from './parse-list.js';

export { commentDate, type BadLine, type ParsedFeed, type ParseOptions } from './collect.js';
export { parseList } from './parse-list.js';

export type FeedFormat = 'list' | 'csv' | 'range-csv' | 'aws-json' | 'gcp-json' | 'azure-json' | 'oracle-json';

export const FEED_FORMATS: readonly FeedFormat[] = ['list', 'csv', 'range-csv', 'aws-json', 'gcp-json', 'azure-json', 'oracle-json'];

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
  const sep = options.delimiter ?? ',';
  let column = typeof options.column === 'number' ? options.column : 0;
  // The confidence column (-1: none), its name found in the header.
  const least = options.minConfidence;
  let confidence = least === undefined ? -1 : typeof options.confidence === 'number' ? options.confidence : -1;
  let headerDone = false;
  for (let i = 0; i < all.length; i++) {
    const raw = all[i];
    if (raw.trim() === '') continue;
    if (raw.trimStart().startsWith('#')) {
      c.comment(raw.trimStart().slice(1));
      continue;
    }
    if (fast && headerDone && least === undefined && raw.indexOf('"') < 0) {
      addUnquoted(c, i + 1, raw, ranges, column, sep);
      continue;
    }
    const fields = splitCsvLine(raw, sep);
    if (fields === null) {
      c.bad(i + 1, raw, 'unclosed quoted field');
      continue;
    }
    if (!headerDone) {
      headerDone = true;
      const isHeader = options.header ?? (typeof options.column === 'string' || !isEntry(fields[column] ?? ''));
      if (isHeader) {
        const named = (name: string) => fields.findIndex((f) => f.trim().toLowerCase() === name.toLowerCase());
        for (const [name, set] of [
          [options.column, (at: number) => void (column = at)],
          [least === undefined ? undefined : options.confidence, (at: number) => void (confidence = at)],
        ] as const) {
          if (typeof name !== 'string') continue;
          const at = named(name);
          if (at < 0) {
            c.bad(i + 1, raw, `no column named "${name}" in the header`);
            return c.result();
          }
          set(at);
        }
        continue;
      }
    }
    if (confidence >= 0) {
      const said = Number(fields[confidence]?.trim() || Number.NaN);
      if (Number.isNaN(said)) {
        c.bad(i + 1, raw, `no confidence (a number) in column ${confidence}`);
        continue;
      }
      if (said < least!) {
        c.skipped++;
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

/** A line without quotes: field `column` (or fields 0 and 1) found between delimiters, as splitCsvLine splits it. */
function addUnquoted(c: Collector, line: number, raw: string, ranges: boolean, column: number, sep: string): void {
  const want = ranges ? 0 : column;
  let from = 0;
  for (let k = 0; k < want && from >= 0; k++) {
    const at = raw.indexOf(sep, from);
    from = at < 0 ? -1 : at + 1;
  }
  const to = from < 0 ? -1 : raw.indexOf(sep, from);
  if (!ranges) {
    if (from < 0) c.bad(line, raw, `no column ${column}`);
    else c.add(line, raw, raw.slice(from, to < 0 ? raw.length : to).trim());
  } else if (to < 0) c.bad(line, raw, 'expected start,end');
  else {
    const next = raw.indexOf(sep, to + 1);
    c.add(line, raw, `${raw.slice(0, to).trim()}-${raw.slice(to + 1, next < 0 ? raw.length : next).trim()}`);
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * Parses a cloud provider's JSON: `collect` passes each prefix with where
 * it is, as a function (the text of a place is made only for a bad one:
 * Azure's file has 90 000 prefixes).
 */
function parseJson(
  text: string,
  collect: (root: Json, add: (cidr: unknown, where: () => string) => void) => void,
  date: (root: Json) => unknown,
): ParsedFeed {
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
        (root, add) =>
          arr(obj(root).values).forEach((v, i) =>
            arr(obj(obj(v).properties).addressPrefixes).forEach((p, j) => add(p, () => `values[${i}].properties.addressPrefixes[${j}]`)),
          ),
        () => null,
      );
    case 'oracle-json':
      return parseJson(
        text,
        (root, add) =>
          arr(obj(root).regions).forEach((r, i) =>
            arr(obj(r).cidrs).forEach((c, j) => add(obj(c).cidr, () => `regions[${i}].cidrs[${j}]`)),
          ),
        (root) => obj(root).last_updated_timestamp,
      );
  }
}
