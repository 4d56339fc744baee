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
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../engine.js';
import { compiledDataset } from '../engine-inside.js';
import { THREAT_FLAGS } from '../record/template.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt } from '../ip/ranges.js';
import { MANIFEST_FILE } from './store.js';
import type { Dataset } from './format.js';

/** The members compared, as `select()` names them. */
export const DIFF_MEMBERS: readonly string[] = ['country_code', 'region', 'city', 'asn.asn', 'asn.type', 'time_zone.name', ...THREAT_FLAGS.map((f) => `threat.${f}`)];

/** Space that changed: IPv4 addresses, IPv6 /48s (a changed piece smaller than a /48 counts as one). */
export interface Space {
  readonly ipv4: number;
  readonly ipv6_48s: number;
}

export interface DiffResult {
  /** Per member (`DIFF_MEMBERS`), the space whose answer changed. */
  readonly members: Readonly<Record<string, Space>>;
  /** Space whose answer changed in any member, of all the space either answers. */
  readonly changed: Space;
  readonly answered: Space;
  /** The networks (AS numbers as the new build answers, else the old) whose answers changed most, at most 20. */
  readonly networks: readonly { readonly asn: string | null; readonly name: string | null; readonly ipv4: number; readonly ipv6_48s: number }[];
  /** Threat lists of the builds' manifests: added, removed, and those whose entries or state changed. */
  readonly lists: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly { readonly name: string; readonly before: string; readonly after: string }[] };
}

const PATHS = [...DIFF_MEMBERS, 'asn.name'];
/** Where the AS number and name are in a row's answers. */
const ASN_AT = DIFF_MEMBERS.indexOf('asn.asn');
const NAME_AT = PATHS.length - 1;
const SLASH48 = 1n << 80n;

/** One side: its dataset and each record row's answers (read once, by the first address found with that row). */
class Side {
  readonly ds: Dataset;
  private readonly pick: ReturnType<Engine['select']>;
  private readonly rows = new Map<number, (string | null)[] | null>();

  constructor(engine: Engine) {
    this.ds = compiledDataset(engine);
    this.pick = engine.select(PATHS);
  }

  /** The answers of the record of `ref`, read at `ip`; null where the address answers an error (special space). */
  values(ref: number, ip: string): (string | null)[] | null {
    const row = ref >>> 8;
    let v = this.rows.get(row);
    if (v === undefined) {
      const r = this.pick.try(ip) as Record<string, unknown>;
      v = 'message' in r && 'status' in r ? null : PATHS.map((p) => (r[p] === null || r[p] === undefined ? null : String(r[p])));
      // Only a record read: an error is of the address, not of the row.
      if (v !== null) this.rows.set(row, v);
    }
    return v;
  }
}

/** Compares what two engines answer, over every address. */
export function diffEngines(before: Engine, after: Engine, builds?: { readonly before: string; readonly after: string }): DiffResult {
  const a = new Side(before);
  const b = new Side(after);
  const v4 = new Array<number>(DIFF_MEMBERS.length).fill(0);
  const v6 = new Array<bigint>(DIFF_MEMBERS.length).fill(0n);
  const total = { v4: 0, v6: 0n, c4: 0, c6: 0n };
  const networks = new Map<string, { asn: string | null; name: string | null; v4: number; v6: bigint }>();
  const note = (x: (string | null)[], y: (string | null)[], size4: number, size6: bigint) => {
    let any = false;
    for (let m = 0; m < DIFF_MEMBERS.length; m++) {
      if (x[m] === y[m]) continue;
      any = true;
      v4[m] += size4;
      v6[m] += size6;
    }
    total.v4 += size4;
    total.v6 += size6;
    if (!any) return;
    total.c4 += size4;
    total.c6 += size6;
    const asn = y[ASN_AT] ?? x[ASN_AT];
    const name = y[ASN_AT] !== null ? y[NAME_AT] : x[NAME_AT];
    const key = asn ?? '';
    const n = networks.get(key) ?? { asn, name, v4: 0, v6: 0n };
    n.v4 += size4;
    n.v6 += size6;
    networks.set(key, n);
  };

  // IPv4: numbers.
  const s4a = a.ds.starts4;
  const s4b = b.ds.starts4;
  for (let i = 0, j = 0, lo = 0; lo <= 0xffffffff;) {
    const endA = i + 1 < s4a.length ? s4a[i + 1] - 1 : 0xffffffff;
    const endB = j + 1 < s4b.length ? s4b[j + 1] - 1 : 0xffffffff;
    const hi = Math.min(endA, endB);
    const ip = `${lo >>> 24}.${(lo >>> 16) & 255}.${(lo >>> 8) & 255}.${lo & 255}`;
    const x = a.values(a.ds.refs4[i], ip);
    const y = x === null ? null : b.values(b.ds.refs4[j], ip);
    if (x !== null && y !== null) note(x, y, hi - lo + 1, 0n);
    if (hi === endA) i++;
    if (hi === endB) j++;
    lo = hi + 1;
  }

  // IPv6: 128-bit numbers.
  const at = (s: Uint32Array, k: number) => (BigInt(s[k * 4]) << 96n) | (BigInt(s[k * 4 + 1]) << 64n) | (BigInt(s[k * 4 + 2]) << 32n) | BigInt(s[k * 4 + 3]);
  const LAST = (1n << 128n) - 1n;
  const n6a = a.ds.starts6.length / 4;
  const n6b = b.ds.starts6.length / 4;
  let nextA = n6a > 1 ? at(a.ds.starts6, 1) : null;
  let nextB = n6b > 1 ? at(b.ds.starts6, 1) : null;
  for (let i = 0, j = 0, lo = 0n; ;) {
    const endA = nextA === null ? LAST : nextA - 1n;
    const endB = nextB === null ? LAST : nextB - 1n;
    const hi = endA < endB ? endA : endB;
    const ip = formatIp(6, fromBigInt(6, lo));
    const x = a.values(a.ds.refs6[i], ip);
    const y = x === null ? null : b.values(b.ds.refs6[j], ip);
    if (x !== null && y !== null) {
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

  const members: Record<string, Space> = {};
  DIFF_MEMBERS.forEach((m, k) => (members[m] = { ipv4: v4[k], ipv6_48s: Number(v6[k]) }));
  const ranked = [...networks.values()].sort((p, q) => q.v4 - p.v4 || Number(q.v6 - p.v6)).slice(0, 20);
  return {
    members,
    changed: { ipv4: total.c4, ipv6_48s: Number(total.c6) },
    answered: { ipv4: total.v4, ipv6_48s: Number(total.v6) },
    networks: ranked.map((n) => ({ asn: n.asn, name: n.name, ipv4: n.v4, ipv6_48s: Number(n.v6) })),
    lists: builds === undefined ? { added: [], removed: [], changed: [] } : diffLists(builds.before, builds.after),
  };
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
