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
 * way the full compile makes it (`intern.ts`). The base's tables and text
 * are kept as they are; threat rows, their text and records are added
 * after them. Neighbours that end up with one ref are
 * merged, as the full compile merges them, so both compiles give the same
 * partition and the same answers (`test/integration/dataset.test.ts`).
 */

import { Dataset, layout, NO_ROUTE, readCounts, RECORD, THR, THREAT, TABLE_NAMES, TABLES, type DatasetMeta, type TableName } from '../dataset/format.js';
import type { IpVersion } from '../ip/parse.js';
import { basicThreat, labelledThreat, staleBogon } from '../record/threat.js';
import type { ThreatTree } from './feeds/tree.js';
import { recordRow, Table, TextPool } from './intern.js';
import { compare, next, Ranges } from './partition.js';
import { CompiledDataset, type Family } from './write.js';

/**
 * The base dataset with `tree`'s feeds compiled in; `key` names what it
 * was compiled from (kept in its metadata).
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
  for (let at = 0; at < base.threats.length; at += THREAT) for (const form of [THR.object, THR.basic]) text.known(base.json(base.threats, at + form), base.threats[at + form]);
  const threatIds = new Map<number, number>();
  const scratch = new Uint32Array(3);
  /** The ref of a range of the base ref `ref` that the feeds label `label`. */
  const labelled = (ref: number, label: number): number => {
    const prefix = ref & 255;
    const rec = (ref >>> 8) * RECORD;
    const flags = base.threats[base.records[rec + 2] * THREAT + THR.flags];
    const routed = prefix !== NO_ROUTE;
    const threatKey = (label * 256 + flags) * 2 + (staleBogon(tree, label, routed) ? 1 : 0);
    let threat = threatIds.get(threatKey);
    if (threat === undefined) {
      const t = labelledThreat(tree, label, flags, routed);
      threat = threats.add([...text.add(JSON.stringify(t)), ...text.add(JSON.stringify(basicThreat(t))), flags]);
      threatIds.set(threatKey, threat);
    }
    const location = base.records[rec];
    const network = base.records[rec + 1];
    const record = recordRow(records, location, network, threat, scratch);
    return ((record << 8) | prefix) >>> 0;
  };
  const families = ([4, 6] as const).map((version) => mergeFamily(base, tree, version, labelled));
  const otherText = text.other.join('');
  const tables = Object.fromEntries(
    TABLE_NAMES.map((t): [TableName, { rows: Uint32Array; count: number }] => {
      if (t === 'records') return [t, records];
      if (t === 'threats') return [t, threats];
      return [t, { rows: new Uint32Array(baseBytes.buffer, baseBytes.byteOffset + at[t], counts.rows[t] * TABLES[t].length), count: counts.rows[t] }];
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
  );
}

/**
 * One family's ranges: the base's, cut where a feed's range starts or
 * ends, in one walk of both (sorted, neither overlapping itself); merged
 * where neighbours share a ref.
 */
function mergeFamily(base: Dataset, tree: ThreatTree, version: IpVersion, labelled: (ref: number, label: number) => number): Family {
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
    else starts.set(from.subarray(at, at + 4), length * 4);
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
        p.set(feeds.hi.subarray(t * 4, t * 4 + 4));
        next(p, 0, p);
        t++;
      } else {
        emit(p, 0, refs[i]);
        if (t >= m || compare(feeds.lo, t * 4, end, 0) > 0) break;
        p.set(feeds.lo.subarray(t * 4, t * 4 + 4));
      }
    }
  }
  return { starts: starts.subarray(0, length * width), refs: out.subarray(0, length), length };
}

/** The first address of a base range, as four words. */
function startOf(ds: Dataset, version: IpVersion, i: number, out: Uint32Array): void {
  if (version === 4) {
    out.fill(0, 0, 3);
    out[3] = ds.starts4[i];
  } else out.set(ds.starts6.subarray(i * 4, i * 4 + 4));
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
