/**
 * Compiles opened sources into one dataset file (`dataset/format.ts`):
 * every network of every geo and ASN database and the special-purpose
 * registry overlaid into one partition per family, each range's static
 * record resolved once per distinct source record (region, zone, country
 * facts, network type, threat flags), each value, row and record stored
 * once as `contract/template.ts` and `dataset/layout.ts` say. Build time only.
 */

import { NO_ROUTE, type DatasetMeta } from '../dataset/format.js';
import { classify, SpecialKind, type SpecialTable } from '../ip/special.js';
import type { IpVersion } from '../ip/parse.js';
import { IdMap } from './id-map.js';
import { Interner } from './intern.js';
import { CompiledDataset, internedSections, type Family } from './write.js';

export { CompiledDataset } from './write.js';
import { ThreatFlag } from '../contract/template.js';
import type { ThreatTree } from './feeds/tree.js';
import type { NetworkOwner, Sources } from './sources.js';
import { datacenterLabels, PlaceSpread } from './asn/evidence.js';
import { NONE, overlay, Ranges, type Overlay } from './partition.js';
import { zoneTable } from './zones/table.js';

/** A source record not met yet (ids are NONE or 0 and up). */
const UNSEEN = -2;

/** Told what the compiler does: a step, and the share of the work done before it (0 to 1). */
export type Progress = (step: string, done: number) => void;

/** Where each family's work starts and how much of the whole it is (measured on the default data). */
const SHARE = { 4: [0.12, 0.37], 6: [0.49, 0.42] } as const;

/** Rows of what each geo or ASN database record resolved to, by its place in the lists below. */
interface Resolved {
  /** Location rows. */
  readonly locations: number[];
  /** The place of each location (`PlaceSpread.place`). */
  readonly places: number[];
  /** Network owners; their rows (-1 until their type is weighed against the IPv4 spread), and the threat flags of their type. */
  readonly networks: { owner: NetworkOwner; row: number; flags: number }[];
  readonly spread: PlaceSpread;
}

/**
 * Compiles the sources (geo and ASN databases in order of priority,
 * Anonymous-IP databases), the threat feeds' threat.bin when given, and the
 * special-purpose registry into a dataset file; `key` names what it was
 * compiled from (kept in its metadata).
 */
export function compileDataset(
  snap: Sources,
  threat: ThreatTree | null,
  special: SpecialTable,
  key: string,
  builtAt = new Date(),
  progress: Progress = () => {},
): CompiledDataset {
  const intern = new Interner();
  const resolved: Resolved = { locations: [], places: [], networks: [], spread: new PlaceSpread() };
  const families = ([4, 6] as const).map((version) =>
    compileFamily(snap, threat, special, version, intern, resolved, (step, f) =>
      progress(`IPv${version}: ${step}`, SHARE[version][0] + f * SHARE[version][1]),
    ),
  );
  progress('writing', 0.91);
  const meta: DatasetMeta = {
    zones: intern.zones.list,
    timeZones: zoneTable(intern.zones.list),
    builtAt: builtAt.toISOString(),
    key,
    sources: snap.databases(),
    ...(threat === null ? {} : { threat: threat.meta }),
  };
  return new CompiledDataset(families[0], families[1], internedSections(intern), meta);
}

function compileFamily(
  snap: Sources,
  threat: ThreatTree | null,
  special: SpecialTable,
  version: IpVersion,
  intern: Interner,
  resolved: Resolved,
  progress: Progress,
): Family {
  progress('locations', 0);
  const last = version === 4 ? [0, 0, 0, 0xffffffff] : [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];
  const geoLayers = geoLayersOf(snap, version, intern, resolved);
  progress(`network owners (${resolved.locations.length.toLocaleString('en')} locations so far)`, 0.47);
  const { layers: asnLayers, ordinals, prefixes } = asnLayersOf(snap, version, resolved);
  const anonymousLayers = anonymousLayersOf(snap, version);
  // The threat feeds' labels.
  const threatLayer = new Ranges();
  threat?.forEachRange(version, (lo, hi, label) => label !== 0 && threatLayer.push(lo, hi, label));
  const layers = [...geoLayers, ...asnLayers, ...anonymousLayers, threatLayer, specialRanges(special, version, last)];
  progress(`overlay of ${layers.reduce((n, l) => n + l.length, 0).toLocaleString('en')} ranges`, 0.53);
  const parts = overlay(layers, last);
  // IPv4 is compiled first: its spread types the networks of both families.
  if (version === 4) spreadOf(parts, geoLayers.length, asnLayers.length, parts.values[layers.length - 2], threat, resolved, ordinals);
  return refsOf(
    version,
    parts,
    { geo: geoLayers.length, asn: asnLayers.length, anonymous: anonymousLayers.length },
    threat,
    intern,
    resolved,
    ordinals,
    prefixes,
  );
}

/** Geo layers: a location id per range (each location interned once, its place kept for the spread). */
function geoLayersOf(snap: Sources, version: IpVersion, intern: Interner, resolved: Resolved): Ranges[] {
  const bits = version === 4 ? 32 : 128;
  return snap.geo.map((src) => {
    const ids = new IdMap();
    const layer = new Ranges();
    // Half the networks of the default data have the record of the one before.
    let lastOffset = -1;
    let id = NONE;
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      if (offset !== lastOffset) {
        lastOffset = offset;
        id = ids.get(offset, UNSEEN);
        if (id === UNSEEN) {
          const part = src.at(offset);
          id = part === null ? NONE : resolved.locations.push(intern.location(part)) - 1;
          if (id !== NONE) resolved.places[id] = resolved.spread.place(part);
          ids.set(offset, id);
        }
      }
      if (id !== NONE) layer.pushNetwork(words, prefix, bits, id);
    });
    return layer;
  });
}

/** ASN layers: a network ordinal per range (each network is its own range: its route), with its record and prefix. */
function asnLayersOf(snap: Sources, version: IpVersion, resolved: Resolved): { layers: Ranges[]; ordinals: number[]; prefixes: number[] } {
  const bits = version === 4 ? 32 : 128;
  const ordinals: number[] = [];
  const prefixes: number[] = [];
  const layers = snap.asn.map((src) => {
    const ids = new IdMap();
    const layer = new Ranges();
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      let id = ids.get(offset, UNSEEN);
      if (id === UNSEEN) {
        const r = src.at(offset);
        id = r === null ? NONE : resolved.networks.push({ owner: r, row: -1, flags: r.flags }) - 1;
        ids.set(offset, id);
      }
      if (id === NONE) return;
      layer.pushNetwork(words, prefix, bits, ordinals.length);
      ordinals.push(id);
      prefixes.push(prefix);
    });
    return layer;
  });
  return { layers, ordinals, prefixes };
}

/** Anonymous-IP layers: the threat flags each asserts (every database counts, not only the first). */
function anonymousLayersOf(snap: Sources, version: IpVersion): Ranges[] {
  const bits = version === 4 ? 32 : 128;
  return snap.anonymous.map((src) => {
    const layer = new Ranges();
    const flags = new Map<number, number>();
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      let f = flags.get(offset);
      if (f === undefined) flags.set(offset, (f = src.at(offset) ?? 0));
      if (f !== 0) layer.pushNetwork(words, prefix, bits, f);
    });
    return layer;
  });
}

/** Each network's IPv4 addresses by place, and how many the feeds' `labels` list as datacenter space, into `resolved.spread`. */
function spreadOf(
  parts: Overlay,
  geoCount: number,
  asnCount: number,
  labels: Int32Array,
  tree: ThreatTree | null,
  resolved: Resolved,
  ordinals: readonly number[],
): void {
  const { values, starts } = parts;
  const listed = tree === null ? () => false : datacenterLabels(tree);
  for (let r = 0; r < parts.length; r++) {
    let ordinal = NONE;
    for (let a = 0; a < asnCount && ordinal === NONE; a++) ordinal = values[geoCount + a][r];
    if (ordinal === NONE) continue;
    let geo = NONE;
    for (let g = 0; g < geoCount && geo === NONE; g++) geo = values[g][r];
    const count = (r + 1 < parts.length ? starts[(r + 1) * 4 + 3] : 2 ** 32) - starts[r * 4 + 3];
    const datacenter = labels[r] !== NONE && listed(labels[r]) ? count : 0;
    resolved.spread.add(resolved.networks[ordinals[ordinal]].owner.asn, geo === NONE ? 0 : resolved.places[geo], count, datacenter);
  }
}

/** The registry's kinds as ranges: cut at every entry's edges (and IPv6's 2000::/3), each piece classified at its start. */
function specialRanges(table: SpecialTable, version: IpVersion, last: readonly number[]): Ranges {
  const cuts = new Set<bigint>([0n]);
  const entries = version === 4 ? table.v4 : table.v6;
  for (const e of entries) {
    const lo = toBig(e.words);
    const size = 1n << BigInt(128 - e.prefix);
    cuts.add(lo);
    cuts.add(lo + size);
  }
  if (version === 6) for (const c of [0x2000n << 112n, 0x4000n << 112n]) cuts.add(c);
  const end = toBig(last);
  const points = [...cuts].filter((c) => c <= end).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const layer = new Ranges();
  points.forEach((from, i) => {
    const to = i + 1 < points.length ? points[i + 1] - 1n : end;
    const kind = classify(table, version, toWords(from));
    if (kind !== SpecialKind.None) layer.push(toWords(from), toWords(to), kind);
  });
  return layer;
}

/** A network's row, its owner typed by the spread (and the datacenter lists where `feeds`) when first met. */
function typedNetwork(
  net: Resolved['networks'][number],
  spread: PlaceSpread,
  feeds: boolean,
  intern: Interner,
): { row: number; flags: number } {
  if (net.row < 0) {
    const owner = spread.typed(net.owner, feeds);
    net.row = intern.network(owner);
    net.flags = owner.flags;
  }
  return net;
}

function toBig(w: ArrayLike<number>): bigint {
  return (BigInt(w[0]) << 96n) | (BigInt(w[1]) << 64n) | (BigInt(w[2]) << 32n) | BigInt(w[3]);
}

function toWords(x: bigint): number[] {
  return [0, 1, 2, 3].map((i) => Number((x >> BigInt(96 - 32 * i)) & 0xffffffffn));
}

/** Each range's record and route prefix; neighbours with the same ref merged. */
function refsOf(
  version: IpVersion,
  parts: Overlay,
  counts: { geo: number; asn: number; anonymous: number },
  tree: ThreatTree | null,
  intern: Interner,
  resolved: Resolved,
  ordinals: readonly number[],
  prefixes: readonly number[],
): Family {
  const { values } = parts;
  const geoCount = counts.geo;
  const asnCount = counts.asn;
  const anonymousFrom = geoCount + asnCount;
  const labels = values[anonymousFrom + counts.anonymous];
  const special = values[anonymousFrom + counts.anonymous + 1];
  const width = version === 4 ? 1 : 4;
  const starts = new Uint32Array(parts.length * width);
  const refs = new Uint32Array(parts.length);
  const noLocation = intern.location(null);
  const noNetwork = { row: intern.network(null), flags: 0 };
  const noThreat = intern.threat(null, 0, 0, false);
  let length = 0;
  for (let r = 0; r < parts.length; r++) {
    let geo = NONE;
    for (let g = 0; g < geoCount && geo === NONE; g++) geo = values[g][r];
    let ordinal = NONE;
    for (let a = 0; a < asnCount && ordinal === NONE; a++) ordinal = values[geoCount + a][r];
    const net = ordinal === NONE ? noNetwork : typedNetwork(resolved.networks[ordinals[ordinal]], resolved.spread, tree !== null, intern);
    let flags = net.flags | (special[r] === SpecialKind.Unallocated ? ThreatFlag.Bogon : 0);
    for (let a = 0; a < counts.anonymous; a++) if (values[anonymousFrom + a][r] !== NONE) flags |= values[anonymousFrom + a][r];
    const label = labels[r] === NONE ? 0 : labels[r];
    const threat = label === 0 && flags === 0 ? noThreat : intern.threat(tree, label, flags, ordinal !== NONE);
    const record = intern.record(geo === NONE ? noLocation : resolved.locations[geo], net.row, threat);
    const ref = ((record << 8) | (ordinal === NONE ? NO_ROUTE : prefixes[ordinal])) >>> 0;
    if (length > 0 && refs[length - 1] === ref) continue;
    refs[length] = ref;
    for (let w = 0; w < width; w++) starts[length * width + w] = parts.starts[r * 4 + 4 - width + w];
    length++;
  }
  return { starts: starts.subarray(0, length * width), refs: refs.subarray(0, length), length };
}
