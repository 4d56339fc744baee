/**
 * Network registries (`sources.networks`): what a registry says each
 * network is, and its domain, read by what the file holds:
 *
 * - PeeringDB's network objects, as its API answers them
 *   (`https://www.peeringdb.com/api/net`: `{ "data": [...] }`) or as a
 *   whole dump holds them (`{ "net": { "data": [...] } }`, CAIDA's daily
 *   dumps): each object's `asn`, `info_type` (or, where that is not
 *   disclosed, the first of `info_types` that names a type) and `website`
 *   (its host, without `www.`, is the domain);
 * - bgp.tools' AS list (`https://bgp.tools/asns.csv`: `asn,name,class,cc`,
 *   `AS13335,...`): each network's `class`;
 * - a bgp.tools tag list (`https://bgp.tools/tags/<tag>.csv`: `AS<n>,name`
 *   lines): the tag, named by the file's name (`dsl.csv`, or a download's
 *   `networks-2-dsl.csv`);
 * - IPinfo Lite's CSV (`network,country,country_code,continent,
 *   continent_code,asn,as_name,as_domain`, by its header): each network's
 *   `as_domain`, read line by line (the file is some hundreds of MB).
 *
 * The statements each can make and the type each gives are numbered in
 * `dataset/registry-statements.ts`. Combined (`combineRegistries`): a
 * network's PeeringDB type first (its operator's own word; a later file
 * wins), else bgp.tools' statements in `BGP_TOOLS_ORDER`; its domain from
 * IPinfo Lite, else PeeringDB's website. Build time only.
 */

import { basename } from 'node:path';
import { readRegular, regularLines, unreadableReason, withoutBom } from '../../files/read.js';
import { InvalidDatasetError } from '../../contract/errors.js';
import { BGP_TOOLS_ORDER, statementOf, type RegistryKind } from '../../dataset/registry-statements.js';

export type { RegistryKind } from '../../dataset/registry-statements.js';
import { splitCsvLine } from '../../text/csv.js';

/**
 * The largest JSON registry file read: PeeringDB's network objects are
 * about 60 MB, a whole CAIDA dump of every object type a few times that;
 * parsed, JSON takes several times its size in memory. CSV registries are
 * read a line at a time, whatever their size.
 */
export const MAX_REGISTRY_BYTES = 256 * 1024 * 1024;

/** What one registry file says. */
export interface Registry {
  readonly kind: RegistryKind;
  /** The tag of a bgp.tools tag list. */
  readonly tag?: string;
  /** Network objects, AS lines or rows read. */
  readonly networks: number;
  /** The statement (`registry-statements.ts`) each network's entry makes, where it makes one. */
  readonly says: Map<number, number>;
  readonly domains: Map<number, string>;
}

/** What the registries say of a network together. */
export interface RegistryEntry {
  /** The statement that decides its type (`registry-statements.ts`), or 0. */
  readonly statement: number;
  readonly domain: string | null;
}

/** The domain of a website's address (`https://www.example.net/x` is `example.net`), or null. */
export function websiteDomain(website: unknown): string | null {
  if (typeof website !== 'string' || website.trim() === '') return null;
  const text = website.trim();
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`).hostname;
  } catch {
    return null;
  }
  return domainOf(host.replace(/^www\./, ''));
}

/** A domain name as given (lower case, no trailing dot), or null when it is not one (no dot, an address, a space). */
export function domainOf(text: string): string | null {
  const d = text.trim().toLowerCase().replace(/\.$/, '');
  return /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(d) ? d : null;
}

/** An AS number as bgp.tools and IPinfo write it (`AS13335`, or the digits alone), or null. */
function asNumber(text: string | undefined): number | null {
  const m = /^(?:AS)?(\d{1,10})$/i.exec(text?.trim() ?? '');
  const n = m === null ? NaN : Number(m[1]);
  return n >= 0 && n <= 0xffffffff ? n : null;
}

/** A bgp.tools tag list's tag, from its file's name (`dsl.csv`, a download's `networks-2-dsl.csv`). */
export function tagOf(path: string): string {
  return basename(path)
    .replace(/\.(?:csv|txt)$/i, '')
    .replace(/^networks-\d+-/, '')
    .toLowerCase();
}

const unreadable = (path: string, what: string, e?: unknown): InvalidDatasetError =>
  new InvalidDatasetError(`${path}: cannot be read as a network registry: ${what}`, e === undefined ? undefined : { cause: e });

/**
 * Reads one registry file, its kind told by its first bytes: JSON
 * (PeeringDB), a CSV header naming `as_domain` (IPinfo Lite) or `class`
 * (bgp.tools' AS list), or `AS<n>,` lines (a bgp.tools tag list, its
 * tag from `name`: the path it is kept at).
 * @throws InvalidDatasetError when the file is not one of them, or is too large for its kind
 */
export function readRegistry(path: string, name = path): Registry {
  let first = '';
  try {
    for (const line of regularLines(path, 4096, 4096)) {
      first = withoutBom(line).trim();
      if (first !== '') break;
    }
  } catch (e) {
    throw unreadable(path, unreadableReason(e), e);
  }
  if (first.startsWith('{')) return readPeeringDb(path);
  const header = (splitCsvLine(first) ?? []).map((f) => f.trim().toLowerCase());
  if (header.includes('as_domain')) return readIpinfoLite(path, header);
  if (header[0] === 'asn' && header.includes('class')) return readBgpToolsAsns(path, header);
  if (/^AS\d+,/i.test(first) || (header[0] === 'asn' && header.length <= 3)) return readBgpToolsTag(path, tagOf(name));
  throw unreadable(
    path,
    "expected PeeringDB's network objects (JSON), bgp.tools' asns.csv or a tag list of it, or IPinfo Lite's CSV; " +
      `it begins ${JSON.stringify(first.slice(0, 60))}`,
  );
}

function readPeeringDb(path: string): Registry {
  let doc: unknown;
  try {
    doc = JSON.parse(withoutBom(readRegular(path, MAX_REGISTRY_BYTES).toString('utf8')));
  } catch (e) {
    throw unreadable(path, `not PeeringDB's JSON: ${(e as Error).message}`, e);
  }
  const root = doc as { data?: unknown; net?: { data?: unknown } } | null;
  const list = root?.data ?? root?.net?.data;
  if (!Array.isArray(list))
    throw unreadable(path, `expected PeeringDB's network objects ({ "data": [...] } or { "net": { "data": [...] } }).`);
  const says = new Map<number, number>();
  const domains = new Map<number, string>();
  let networks = 0;
  for (const net of list as (Record<string, unknown> | null)[]) {
    const asn = net?.asn;
    if (net === null || typeof asn !== 'number' || asn !== asNumber(String(asn))) continue;
    networks++;
    const stated = [net.info_type, ...(Array.isArray(net.info_types) ? net.info_types : [])]
      .map((t) => (typeof t === 'string' ? statementOf('PeeringDB', 'info_type', t) : 0))
      .find((n) => n !== 0);
    if (stated !== undefined) says.set(asn, stated);
    const domain = websiteDomain(net.website);
    if (domain !== null) domains.set(asn, domain);
  }
  return { kind: 'peeringdb-net', networks, says, domains };
}

/** The rows of a CSV registry after its header line, split, with their AS number by `asnAt`. */
function* csvRows(path: string, header: boolean, asnAt: number): Generator<{ asn: number; fields: string[] }> {
  let skip = header;
  for (const raw of regularLines(path)) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (skip) {
      skip = withoutBom(line).trim() === '';
      continue;
    }
    const fields = line === '' ? null : splitCsvLine(line);
    const asn = asNumber(fields?.[asnAt]);
    if (fields !== null && asn !== null) yield { asn, fields };
  }
}

function readBgpToolsAsns(path: string, header: string[]): Registry {
  const at = header.indexOf('class');
  const says = new Map<number, number>();
  let networks = 0;
  for (const { asn, fields } of csvRows(path, true, header.indexOf('asn'))) {
    networks++;
    const stated = statementOf('bgp.tools', 'class', fields[at]?.trim() ?? '');
    if (stated !== 0) says.set(asn, stated);
  }
  return { kind: 'bgptools-asns', networks, says, domains: new Map() };
}

function readBgpToolsTag(path: string, tag: string): Registry {
  const stated = statementOf('bgp.tools', 'tag', tag);
  const says = new Map<number, number>();
  let networks = 0;
  // A header line (`asn,name`), first or not, names no AS number: left out as any such line is.
  for (const { asn } of csvRows(path, false, 0)) {
    networks++;
    if (stated !== 0) says.set(asn, stated);
  }
  return { kind: 'bgptools-tag', tag, networks, says, domains: new Map() };
}

function readIpinfoLite(path: string, header: string[]): Registry {
  const at = header.indexOf('as_domain');
  const domains = new Map<number, string>();
  let networks = 0;
  for (const { asn, fields } of csvRows(path, true, header.indexOf('asn'))) {
    networks++;
    if (domains.has(asn)) continue;
    const domain = domainOf(fields[at] ?? '');
    if (domain !== null) domains.set(asn, domain);
  }
  return { kind: 'ipinfo-lite-csv', networks, says: new Map(), domains };
}

/** What the registries say of each network together (see the module comment). */
export function combineRegistries(registries: readonly Registry[]): Map<number, RegistryEntry> {
  const peeringDb = new Map<number, number>();
  const bgpTools = new Map<number, Set<number>>();
  const ipinfo = new Map<number, string>();
  const websites = new Map<number, string>();
  for (const r of registries) {
    for (const [asn, n] of r.says) {
      if (r.kind === 'peeringdb-net') peeringDb.set(asn, n);
      else {
        let set = bgpTools.get(asn);
        if (set === undefined) bgpTools.set(asn, (set = new Set()));
        set.add(n);
      }
    }
    for (const [asn, d] of r.domains) (r.kind === 'ipinfo-lite-csv' ? ipinfo : websites).set(asn, d);
  }
  const out = new Map<number, RegistryEntry>();
  for (const asn of new Set([...peeringDb.keys(), ...bgpTools.keys(), ...ipinfo.keys(), ...websites.keys()])) {
    const tools = bgpTools.get(asn);
    const statement = peeringDb.get(asn) ?? (tools === undefined ? 0 : (BGP_TOOLS_ORDER.find((n) => tools.has(n)) ?? 0));
    out.set(asn, { statement, domain: ipinfo.get(asn) ?? websites.get(asn) ?? null });
  }
  return out;
}
