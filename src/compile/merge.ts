/**
 * Threat feeds compiled into a dataset compiled without them (the base),
 * in one sweep: what `iprecord build` and `update` do when only feeds
 * changed, so that the geo and ASN sources (most of a compile) are
 * compiled again only when they change. Build time only.
 *
 * The base's ranges are cut where a feed's label starts or ends, in one
 * walk of both lists; a range
 * with a label gets a record of the same location and network and the
 * threat of that label with the flags the base's threat row holds (the
 * ASN type's, the registry's and Anonymous-IP's: its third column), the
 * way the full compile makes it (`intern.ts`). The base's tables, text and
 * parts are kept as they are; threat rows, their text, parts and records
 * are added after them. Neighbours that end up with one ref are
 * merged, as the full compile merges them, so both compiles give the same
 * partition and the same answers (`test/integration/dataset.test.ts`).
 * A network whose name states no type and whose IPv4 space the feeds list
 * as datacenter space in the share that makes it `hosting`
 * (`asn/evidence.ts`) gets a network row typed so, and its ranges the
 * datacenter flag, labelled or not.
 */

import {
  Dataset,
  layout,
  NET,
  NET_TYPED_BY,
  NETWORK,
  NO_ROUTE,
  readCounts,
  readTypedBy,
  RECORD,
  THR,
  THREAT,
  TABLE_NAMES,
  typedByWord,
  type DatasetMeta,
  type TableName,
} from '../dataset/format.js';
import type { IpVersion } from '../ip/parse.js';
import { labelledThreat, staleBogon, threatOf } from '../record/threat.js';
import { ThreatFlag } from '../contract/template.js';
import { datacenterLabels, hostedBy } from './asn/evidence.js';
import type { ThreatTree } from './feeds/tree.js';
import { recordRow, Table, TextPool, threatRow } from './intern.js';
import { compare, next, Ranges } from './partition.js';
import { CompiledDataset, type Family } from './write.js';

/**
 * The base dataset with `tree`'s feeds compiled in; `key` names what it
 * was compiled from (kept in its metadata). Networks a registry, a brand
 * or a word of the name typed (their rows' `typedBy`) are not typed again.
 * @throws InvalidDatasetError when the base is not a dataset; Error when the base holds feeds already, or past MAX_RECORDS
 */
export function mergeThreat(baseBytes: Buffer, tree: ThreatTree, key: string, builtAt = new Date()): CompiledDataset {
  const base = new Dataset(baseBytes, 'the base dataset');
  if (base.meta.threat !== undefined) throw new Error('the base dataset has threat feeds compiled in already');
  const counts = readCounts(baseBytes);
  const at = layout(counts);
  const records = new Table(RECORD, base.records);
  const threats = new Table(THREAT, base.threats);
  const text = new TextPool(counts);
  for (let at = 0; at < base.threats.length; at += THREAT)
    for (const form of [THR.object, THR.basic]) text.known(base.json(base.threats, at + form), base.threats[at + form]);
  const networks = new Table(NETWORK, base.networks);
  const hosted = hostedNetworks(base, tree, networks, text);
  // Records of hosted networks, whose ranges change without a label too.
  const retyped = new Uint8Array(base.records.length / RECORD);
  if (networks.count > base.networks.length / NETWORK)
    for (let r = 0; r < retyped.length; r++) retyped[r] = hosted[base.records[r * RECORD + 1]] < 0 ? 0 : 1;
  const threatIds = new Map<number, number>();
  const scratch = new Uint32Array(3);
  /** The ref of a range of the base ref `ref` that the feeds label `label` (0: none). */
  const labelled = (ref: number, label: number): number => {
    const prefix = ref & 255;
    const rec = (ref >>> 8) * RECORD;
    const network = hosted[base.records[rec + 1]];
    if (label === 0 && network < 0) return ref;
    const flags = base.threats[base.records[rec + 2] * THREAT + THR.flags] | (network < 0 ? 0 : ThreatFlag.Datacenter);
    const routed = prefix !== NO_ROUTE;
    const threatKey = (label * 256 + flags) * 2 + (label !== 0 && staleBogon(tree, label, routed) ? 1 : 0);
    let threat = threatIds.get(threatKey);
    if (threat === undefined) {
      const t = label === 0 ? threatOf(flags) : labelledThreat(tree, label, flags, routed);
      threat = threats.add(threatRow(text, t, flags));
      threatIds.set(threatKey, threat);
    }
    const record = recordRow(records, base.records[rec], network < 0 ? base.records[rec + 1] : network, threat, scratch);
    return ((record << 8) | prefix) >>> 0;
  };
  const families = ([4, 6] as const).map((version) => mergeFamily(base, tree, version, labelled, retyped));
  const otherText = text.other.join('');
  const tables = Object.fromEntries(
    TABLE_NAMES.map((t): [TableName, { rows: Uint32Array; count: number }] => {
      if (t === 'records') return [t, records];
      if (t === 'threats') return [t, threats];
      if (t === 'networks') return [t, networks];
      return [t, { rows: base[t], count: counts.rows[t] }];
    }),
  ) as Record<TableName, { rows: Uint32Array; count: number }>;
  const meta: DatasetMeta = { ...base.meta, builtAt: builtAt.toISOString(), key, threat: tree.meta };
  return new CompiledDataset(
    families[0],
    families[1],
    {
      tables,
      ascii: Buffer.concat([baseBytes.subarray(at.ascii, at.ascii + counts.asciiBytes), Buffer.from(text.ascii.join(''), 'latin1')]),
      other: Buffer.concat([baseBytes.subarray(at.other, at.other + counts.otherBytes), Buffer.from(otherText, 'utf8')]),
      otherUnits: counts.otherUnits + otherText.length,
    },
    meta,
    { parts: base.partBytes, rows: counts.rows },
  );
}

/**
 * One family's ranges: the base's, cut where a feed's range starts or
 * ends, in one walk of both (sorted, neither overlapping itself); merged
 * where neighbours share a ref.
 */
function mergeFamily(
  base: Dataset,
  tree: ThreatTree,
  version: IpVersion,
  labelled: (ref: number, label: number) => number,
  retyped: Uint8Array,
): Family {
  const refs = version === 4 ? base.refs4 : base.refs6;
  const n = refs.length;
  const feeds = new Ranges();
  tree.forEachRange(version, (a, b, label) => label !== 0 && feeds.push(a, b, label));
  const m = feeds.length;
  // Each feed range cuts at most two base ranges.
  const width = version === 4 ? 1 : 4;
  const starts = new Uint32Array((n + 2 * m) * width);
  const out = new Uint32Array(n + 2 * m);
  let length = 0;
  const emit = (from: Uint32Array, at: number, ref: number) => {
    if (length > 0 && out[length - 1] === ref) return;
    out[length] = ref;
    if (width === 1) starts[length] = from[at + 3];
    else copy4(from, at, starts, length * 4);
    length++;
  };
  const p = new Uint32Array(4);
  const end = new Uint32Array(4);
  let t = 0;
  for (let i = 0; i < n; i++) {
    startOf(base, version, i, p);
    if (i + 1 < n) {
      startOf(base, version, i + 1, end);
      before(end);
    } else end.fill(0xffffffff, version === 4 ? 3 : 0);
    // Feed ranges that end before this base range are behind.
    while (t < m && compare(feeds.hi, t * 4, p, 0) < 0) t++;
    for (;;) {
      if (t < m && compare(feeds.lo, t * 4, p, 0) <= 0) {
        // Feed range t holds p: labelled from p to its end or the base range's.
        emit(p, 0, labelled(refs[i], feeds.value[t]));
        if (compare(feeds.hi, t * 4, end, 0) >= 0) break;
        copy4(feeds.hi, t * 4, p, 0);
        next(p, 0, p);
        t++;
      } else {
        emit(p, 0, retyped[refs[i] >>> 8] === 0 ? refs[i] : labelled(refs[i], 0));
        if (t >= m || compare(feeds.lo, t * 4, end, 0) > 0) break;
        copy4(feeds.lo, t * 4, p, 0);
      }
    }
  }
  return { starts: starts.subarray(0, length * width), refs: out.subarray(0, length), length };
}

/**
 * The rules that leave a network's type to the data: its name states none,
 * and no registry does (the hosting-ASN list too, which the full compile
 * weighs after the datacenter lists).
 */
const WEIGHED: ReadonlySet<string> = new Set(['places', 'default', 'list']);

/**
 * The base's network rows whose type the data decided (`WEIGHED`) and
 * whose IPv4 addresses the feeds list as datacenter space in the share
 * that makes them `hosting` (counted by ASN, as the full compile counts
 * them): by network row, the row typed so (-1: none).
 */
function hostedNetworks(base: Dataset, tree: ThreatTree, networks: Table, text: TextPool): Int32Array {
  const listed = datacenterLabels(tree);
  const listings: number[] = [];
  tree.forEachRange(4, (lo, hi, label) => void (listed(label) && listings.push(lo[3], hi[3])));
  const rows = base.networks.length / NETWORK;
  const hosted = new Int32Array(rows).fill(-1);
  const { starts4, refs4 } = base;
  const end = (i: number) => (i + 1 < refs4.length ? starts4[i + 1] - 1 : 0xffffffff);
  const networkOf = (ref: number) => base.records[(ref >>> 8) * RECORD + 1];
  // What the lists hold of each network (reading only the ranges they overlap).
  const datacenter = new Float64Array(rows);
  let first = 0;
  for (let k = 0; k < listings.length; k += 2) {
    while (end(first) < listings[k]) first++;
    for (let i = first; i < refs4.length && starts4[i] <= listings[k + 1]; i++) {
      if ((refs4[i] & 255) !== NO_ROUTE)
        datacenter[networkOf(refs4[i])] += Math.min(end(i), listings[k + 1]) - Math.max(starts4[i], listings[k]) + 1;
    }
  }
  // Networks of an ASN that some network whose name states no type shares, listed: their whole IPv4 space.
  const asnOf = (row: number) => base.json(base.networks, row * NETWORK + NET.asn);
  const candidates = new Set<string>();
  const typeStated = (row: number) => !WEIGHED.has(readTypedBy(base.networks[row * NETWORK + NET_TYPED_BY]).rule);
  for (let row = 0; row < rows; row++) if (datacenter[row] > 0 && !typeStated(row)) candidates.add(asnOf(row));
  if (candidates.size === 0) return hosted;
  const counted = new Uint8Array(rows);
  for (let row = 0; row < rows; row++) counted[row] = candidates.has(asnOf(row)) ? 1 : 0;
  const countedRecord = new Uint8Array(base.records.length / RECORD);
  for (let r = 0; r < countedRecord.length; r++) countedRecord[r] = counted[base.records[r * RECORD + 1]];
  const total = new Float64Array(rows);
  for (let i = 0; i < refs4.length; i++) {
    if ((refs4[i] & 255) !== NO_ROUTE && countedRecord[refs4[i] >>> 8] === 1) total[networkOf(refs4[i])] += end(i) - starts4[i] + 1;
  }
  const byAsn = new Map<string, { total: number; datacenter: number; rows: number[] }>();
  for (let row = 0; row < rows; row++) {
    if (counted[row] === 0) continue;
    const asn = asnOf(row);
    let n = byAsn.get(asn);
    if (n === undefined) byAsn.set(asn, (n = { total: 0, datacenter: 0, rows: [] }));
    n.total += total[row];
    n.datacenter += datacenter[row];
    n.rows.push(row);
  }
  for (const n of byAsn.values()) {
    if (!hostedBy(n.datacenter, n.total)) continue;
    for (const row of n.rows) {
      if (typeStated(row)) continue;
      const typed = base.networks.slice(row * NETWORK, (row + 1) * NETWORK);
      text.put('hosting', typed, NET.type);
      typed[NET_TYPED_BY] = typedByWord('datacenter', n.datacenter / n.total, readTypedBy(typed[NET_TYPED_BY]).places);
      hosted[row] = networks.add(typed);
    }
  }
  return hosted;
}

/** The first address of a base range, as four words. */
function startOf(ds: Dataset, version: IpVersion, i: number, out: Uint32Array): void {
  if (version === 4) {
    out[0] = out[1] = out[2] = 0;
    out[3] = ds.starts4[i];
  } else copy4(ds.starts6, i * 4, out, 0);
}

/** Copies an address's four words (word by word: a view made per copy cost the merge of the default data a second). */
function copy4(from: ArrayLike<number>, at: number, to: Uint32Array, toAt: number): void {
  to[toAt] = from[at];
  to[toAt + 1] = from[at + 1];
  to[toAt + 2] = from[at + 2];
  to[toAt + 3] = from[at + 3];
}

/** The address before (never the first of a family: a range starts there). */
function before(a: Uint32Array): void {
  for (let w = 3; w >= 0; w--) {
    if (a[w] !== 0) {
      a[w]--;
      return;
    }
    a[w] = 0xffffffff;
  }
}
