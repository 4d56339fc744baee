/**
 * What changed between two builds (`iprecord diff`): per member of the
 * record, how much address space answers it otherwise (IPv4 addresses,
 * IPv6 in /48s), the networks whose answers changed most, and the threat
 * lists added, removed or changed.
 *
 * Both datasets are partitions of each family into ranges; their ranges'
 * boundaries merged make intervals in which each side answers one record.
 * Each record is read once per dataset (by its row, through `select()`),
 * so a walk of the default data costs about a lookup per distinct record
 * and a comparison per interval.
 *
 * Over 300 lines: the walk over the address space and the sample's comparison share the members, the value ids and the report's form.
 */

import { readFileSync } from 'node:fs';
import { writeAtomic } from '../files/write.js';
import { join } from 'node:path';
import { THREAT_FLAGS } from '../contract/template.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt } from '../ip/ranges.js';
import { CHANGES_FILE, MANIFEST_FILE, type Changes, type Space } from '../dataset/store.js';
import type { Dataset } from '../dataset/format.js';

/** The members compared, as `select()` names them. */
export const DIFF_MEMBERS: readonly string[] = [
  'country_code',
  'region',
  'city',
  'asn.asn',
  'asn.type',
  'time_zone.name',
  ...THREAT_FLAGS.map((f) => `threat.${f}`),
];

export interface DiffResult {
  /** Per member (`DIFF_MEMBERS`), the space whose answer changed. */
  readonly members: Readonly<Record<string, Space>>;
  /** Space whose answer changed in any member, of all the space either answers. */
  readonly changed: Space;
  readonly answered: Space;
  /** The networks (AS numbers as the new build answers, else the old) whose answers changed most, at most 20. */
  readonly networks: readonly {
    readonly asn: string | null;
    readonly name: string | null;
    readonly ipv4: number;
    readonly ipv6_48s: number;
  }[];
  /** Threat lists of the builds' manifests: added, removed, and those whose entries or state changed. */
  readonly lists: Changes['lists'];
}

const PATHS = [...DIFF_MEMBERS, 'asn.name'];
/** Where the AS number and name are in a row's answers. */
const ASN_AT = DIFF_MEMBERS.indexOf('asn.asn');
const NAME_AT = PATHS.length - 1;
const SLASH48 = 1n << 80n;

/** Values as small numbers, one table for both sides, so that equal answers compare as equal numbers (0: null). */
class Values {
  private readonly ids = new Map<string, number>();
  readonly text: (string | null)[] = [null];

  id(v: unknown): number {
    if (v === null || v === undefined) return 0;
    const key = String(v);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.text.push(key) - 1;
      this.ids.set(key, id);
    }
    return id;
  }
}

/**
 * One side of a diff: its compiled dataset, and chosen members of the
 * record of an address, errors as values (an engine's `select(paths).try`;
 * `engine/inside.ts`'s `diffSide` makes one of an engine).
 */
export interface DiffSide {
  readonly dataset: Dataset;
  pick(paths: readonly string[]): (ip: string) => unknown;
}

/** A row not read yet. */
const UNREAD = 0xffffffff;

/** One side: its dataset and each record row's answers as value ids (read once, at the first address found with that row). */
class Side {
  readonly ds: Dataset;
  private readonly pick: (ip: string) => unknown;
  /** Per record row, PATHS.length value ids; the first UNREAD until read. */
  private readonly rows: Uint32Array;

  constructor(
    side: DiffSide,
    private readonly values: Values,
  ) {
    this.ds = side.dataset;
    this.pick = side.pick(PATHS);
    this.rows = new Uint32Array(this.ds.recordCount * PATHS.length).fill(UNREAD);
  }

  /** Where the answers of the record of `ref` start in `answers` (read at the address `ip()` gives); -1 where it answers an error. */
  at(ref: number, ip: () => string): number {
    const base = (ref >>> 8) * PATHS.length;
    if (this.rows[base] === UNREAD) {
      const r = this.pick(ip()) as Record<string, unknown>;
      // An error is of the address (special space), not of the row: it is not kept.
      if ('message' in r && 'status' in r) return -1;
      for (let k = 0; k < PATHS.length; k++) this.rows[base + k] = this.values.id(r[PATHS[k]]);
    }
    return base;
  }

  get answers(): Uint32Array {
    return this.rows;
  }
}

/** Compares what two engines answer, over every address. */
export function diffEngines(before: DiffSide, after: DiffSide, builds?: { readonly before: string; readonly after: string }): DiffResult {
  const values = new Values();
  const a = new Side(before, values);
  const b = new Side(after, values);
  const ra = a.answers;
  const rb = b.answers;
  const v4 = new Array<number>(DIFF_MEMBERS.length).fill(0);
  const v6 = new Array<bigint>(DIFF_MEMBERS.length).fill(0n);
  const total = { v4: 0, v6: 0n, c4: 0, c6: 0n };
  const networks = new Map<number, { asn: number; name: number; v4: number; v6: bigint }>();
  const note: Note = (x, y, size4, size6) => {
    let any = false;
    for (let m = 0; m < DIFF_MEMBERS.length; m++) {
      if (ra[x + m] === rb[y + m]) continue;
      any = true;
      v4[m] += size4;
      v6[m] += size6;
    }
    total.v4 += size4;
    total.v6 += size6;
    if (!any) return;
    total.c4 += size4;
    total.c6 += size6;
    const asn = rb[y + ASN_AT] !== 0 ? rb[y + ASN_AT] : ra[x + ASN_AT];
    const name = rb[y + ASN_AT] !== 0 ? rb[y + NAME_AT] : ra[x + NAME_AT];
    const n = networks.get(asn) ?? { asn, name, v4: 0, v6: 0n };
    n.v4 += size4;
    n.v6 += size6;
    networks.set(asn, n);
  };

  walk4(a, b, note);
  walk6(a, b, note);

  const members: Record<string, Space> = {};
  DIFF_MEMBERS.forEach((m, k) => (members[m] = { ipv4: v4[k], ipv6_48s: Number(v6[k]) }));
  const ranked = [...networks.values()].sort((p, q) => q.v4 - p.v4 || Number(q.v6 - p.v6)).slice(0, 20);
  return {
    members,
    changed: { ipv4: total.c4, ipv6_48s: Number(total.c6) },
    answered: { ipv4: total.v4, ipv6_48s: Number(total.v6) },
    networks: ranked.map((n) => ({ asn: values.text[n.asn], name: values.text[n.name], ipv4: n.v4, ipv6_48s: Number(n.v6) })),
    lists: builds === undefined ? { added: [], removed: [], changed: [] } : diffLists(builds.before, builds.after),
  };
}

/** What a walk tells of each piece of the address space on which both sides have a record: its rows, its size (IPv4 addresses, IPv6 /48s). */
type Note = (x: number, y: number, size4: number, size6: bigint) => void;

/** Walks the IPv4 space by the ranges of both sides at once (numbers). */
function walk4(a: Side, b: Side, note: Note): void {
  const s4a = a.ds.starts4;
  const s4b = b.ds.starts4;
  for (let i = 0, j = 0, lo = 0; lo <= 0xffffffff;) {
    const endA = i + 1 < s4a.length ? s4a[i + 1] - 1 : 0xffffffff;
    const endB = j + 1 < s4b.length ? s4b[j + 1] - 1 : 0xffffffff;
    const hi = Math.min(endA, endB);
    const start = lo;
    const ip = () => `${start >>> 24}.${(start >>> 16) & 255}.${(start >>> 8) & 255}.${start & 255}`;
    const x = a.at(a.ds.refs4[i], ip);
    const y = x < 0 ? -1 : b.at(b.ds.refs4[j], ip);
    if (y >= 0) note(x, y, hi - lo + 1, 0n);
    if (hi === endA) i++;
    if (hi === endB) j++;
    lo = hi + 1;
  }
}

/** Walks the IPv6 space by the ranges of both sides at once (128-bit numbers). */
function walk6(a: Side, b: Side, note: Note): void {
  const at = (s: Uint32Array, k: number) =>
    (BigInt(s[k * 4]) << 96n) | (BigInt(s[k * 4 + 1]) << 64n) | (BigInt(s[k * 4 + 2]) << 32n) | BigInt(s[k * 4 + 3]);
  const LAST = (1n << 128n) - 1n;
  const n6a = a.ds.starts6.length / 4;
  const n6b = b.ds.starts6.length / 4;
  let nextA = n6a > 1 ? at(a.ds.starts6, 1) : null;
  let nextB = n6b > 1 ? at(b.ds.starts6, 1) : null;
  for (let i = 0, j = 0, lo = 0n; ;) {
    const endA = nextA === null ? LAST : nextA - 1n;
    const endB = nextB === null ? LAST : nextB - 1n;
    const hi = endA < endB ? endA : endB;
    const first = lo;
    const ip = () => formatIp(6, fromBigInt(6, first));
    const x = a.at(a.ds.refs6[i], ip);
    const y = x < 0 ? -1 : b.at(b.ds.refs6[j], ip);
    if (y >= 0) {
      const size = hi - lo + 1n;
      note(x, y, 0, size < SLASH48 ? 1n : (size + SLASH48 - 1n) / SLASH48);
    }
    if (hi === LAST) break;
    if (hi === endA) {
      i++;
      nextA = i + 1 < n6a ? at(a.ds.starts6, i + 1) : null;
    }
    if (hi === endB) {
      j++;
      nextB = j + 1 < n6b ? at(b.ds.starts6, j + 1) : null;
    }
    lo = hi + 1n;
  }
}

interface ManifestFeed {
  readonly name: string;
  readonly state: string;
  readonly entries: number;
}

/** The feeds a build's manifest names (none where it has none: a dataset without feeds). */
function feedsOf(build: string): Map<string, ManifestFeed> {
  try {
    const m = JSON.parse(readFileSync(join(build, MANIFEST_FILE), 'utf8')) as { feeds?: ManifestFeed[] };
    return new Map((m.feeds ?? []).map((f) => [f.name, f]));
  } catch {
    return new Map();
  }
}

function diffLists(before: string, after: string): DiffResult['lists'] {
  const x = feedsOf(before);
  const y = feedsOf(after);
  const said = (f: ManifestFeed) => `${f.entries} entries${f.state === 'ok' ? '' : `, ${f.state}`}`;
  return {
    added: [...y.keys()].filter((n) => !x.has(n)),
    removed: [...x.keys()].filter((n) => !y.has(n)),
    changed: [...y.values()].flatMap((f) => {
      const old = x.get(f.name);
      return old !== undefined && said(old) !== said(f) ? [{ name: f.name, before: said(old), after: said(f) }] : [];
    }),
  };
}

/** A diff in brief, for `changes.json`. */
export type { Changes, Space };

export function briefly(r: DiffResult, builds: { readonly before: string; readonly after: string }): Changes {
  const members = Object.fromEntries(Object.entries(r.members).filter(([, s]) => s.ipv4 > 0 || s.ipv6_48s > 0));
  return { before: builds.before, after: builds.after, changed: r.changed, answered: r.answered, members, lists: r.lists };
}

/** One line of what changed: the space, the members that changed most, the lists. */
export function changesLine(c: Changes): string {
  const pct = (x: number, of: number) => {
    const p = of === 0 ? 0 : (100 * x) / of;
    return p > 0 && p < 0.01 ? p.toPrecision(2) : p.toFixed(2);
  };
  const top = Object.entries(c.members)
    .sort(([, a], [, b]) => b.ipv4 - a.ipv4 || b.ipv6_48s - a.ipv6_48s)
    .slice(0, 3)
    .map(([m, s]) => `${m} ${s.ipv4.toLocaleString('en')}`);
  const { added, removed, changed } = c.lists;
  return (
    `changed since the build before: ${c.changed.ipv4.toLocaleString('en')} IPv4 addresses (${pct(c.changed.ipv4, c.answered.ipv4)} %) and ${c.changed.ipv6_48s.toLocaleString('en')} IPv6 /48s` +
    (top.length > 0 ? ` (most: ${top.join(', ')})` : '') +
    `; lists ${added.length} added, ${removed.length} removed, ${changed.length} changed`
  );
}

/** Writes `changes.json` into the build `after`. */
export function writeChanges(c: Changes): void {
  writeAtomic(join(c.after, CHANGES_FILE), JSON.stringify(c, null, 2) + '\n');
}

/** What a sample of addresses (a log's) would see change: per member, how many answer otherwise, with a few examples. */
export interface SampleChanges {
  /** Addresses read, and those both builds answer with a record (the others answer an error on both sides). */
  readonly addresses: number;
  readonly answered: number;
  /** Addresses whose answer changed in any member. */
  readonly changed: number;
  readonly members: Readonly<
    Record<
      string,
      { readonly changed: number; readonly examples: readonly { readonly ip: string; readonly before: unknown; readonly after: unknown }[] }
    >
  >;
}

/** Looks every address of `ips` up on both sides: what changes for that traffic. */
export function diffSample(before: DiffSide, after: DiffSide, ips: Iterable<string>): SampleChanges {
  const pa = before.pick(DIFF_MEMBERS);
  const pb = after.pick(DIFF_MEMBERS);
  const members: Record<string, { changed: number; examples: { ip: string; before: unknown; after: unknown }[] }> = Object.fromEntries(
    DIFF_MEMBERS.map((m) => [m, { changed: 0, examples: [] }]),
  );
  let addresses = 0;
  let answered = 0;
  let changed = 0;
  for (const ip of ips) {
    addresses++;
    const x = pa(ip) as Record<string, unknown>;
    const y = pb(ip) as Record<string, unknown>;
    if ('status' in x || 'status' in y) continue;
    answered++;
    let any = false;
    for (const m of DIFF_MEMBERS) {
      if (x[m] === y[m]) continue;
      any = true;
      const c = members[m];
      c.changed++;
      if (c.examples.length < 3) c.examples.push({ ip, before: x[m], after: y[m] });
    }
    if (any) changed++;
  }
  return { addresses, answered, changed, members };
}
