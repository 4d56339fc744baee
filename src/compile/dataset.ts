/**
 * Compiles opened sources into one dataset file (`dataset/format.ts`):
 * every network of every geo and ASN database and the special-purpose
 * registry overlaid into one partition per family, each range's static
 * record resolved once per distinct source record (region, zone, country
 * facts, network type, threat flags) and rendered as JSON fragments,
 * each fragment and record stored once. Build time only.
 */

import { crc32 } from 'node:zlib';
import { DATASET_FORMAT_VERSION, DATASET_MAGIC, HEADER, INDEX_SHIFT, INDEX_WORDS, NO_ROUTE, NO_ZONE, TABLE_NAMES, TABLES, type DatasetMeta, type TableName } from '../dataset/format.js';
import { classify, SpecialKind, type SpecialTable } from '../ip/special.js';
import type { IpVersion } from '../ip/parse.js';
import { countryPieces, locationPieces } from './fragments.js';
import { basicThreat, buildThreat, threatOf, ThreatFlag } from '../record/threat.js';
import type { ThreatTree } from '../threat/tree.js';
import type { GeoPart, Snapshot } from '../snapshot.js';
import { NONE, overlay, Ranges, type Overlay } from './partition.js';

export interface CompiledDataset {
  readonly buffer: Buffer;
  readonly ranges: { readonly v4: number; readonly v6: number };
  readonly records: number;
  readonly fragments: number;
}

/** Records are numbered in 24 bits of a range's ref. */
const MAX_RECORDS = 1 << 24;
/** A record's key: (location * NETWORKS + network) * THREATS + threat, below 2^53 (a text past THREATS threats). */
const LOCATIONS = 2 ** 21;
const NETWORKS = 2 ** 20;
const THREATS = 2 ** 12;

/** Rows of one table, each stored once. */
class Table {
  rows: Uint32Array;
  count = 0;
  private readonly ids = new Map<string | number, number>();
  constructor(private readonly width: number) {
    this.rows = new Uint32Array(width * 1024);
  }

  /** The id of the row with this key, or -1. */
  find(key: string | number): number {
    return this.ids.get(key) ?? -1;
  }

  /** Adds a row under a new key; its id. */
  add(key: string | number, ...values: number[]): number {
    const id = this.count++;
    if (this.rows.length < this.count * this.width) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows.set(values, id * this.width);
    this.ids.set(key, id);
    return id;
  }
}

/** Texts numbered in the order first met, each once. */
class Texts {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.list.push(text) - 1;
      this.ids.set(text, id);
    }
    return id;
  }
}

/** Fragments, rows and zones, each stored once. */
class Interner {
  readonly fragments = new Texts();
  readonly zones = new Texts();
  readonly tables = Object.fromEntries(TABLE_NAMES.map((t) => [t, new Table(TABLES[t].length)])) as Record<TableName, Table>;

  fragment(text: string): number {
    return this.fragments.id(text);
  }

  zone(name: string | null): number {
    return name === null ? NO_ZONE : this.zones.id(name);
  }

  /** A location's row (its country's row made when new); null: no location. */
  location(part: GeoPart | null): number {
    const country = part?.country ?? null;
    const code = country?.country_code ?? '';
    const { countries, locations } = this.tables;
    let c = countries.find(code);
    if (c < 0) c = countries.add(code, ...countryPieces(country).map((t) => this.fragment(t)));
    const [place, point] = locationPieces(part).map((t) => this.fragment(t));
    const zone = this.zone(part?.zone ?? null);
    const key = `${c},${place},${point},${zone}`;
    const id = locations.find(key);
    return id >= 0 ? id : locations.add(key, c, place, point, zone);
  }

  network(head: string, tail: string): number {
    const [h, t] = [this.fragment(head), this.fragment(tail)];
    const id = this.tables.networks.find(`${h},${t}`);
    return id >= 0 ? id : this.tables.networks.add(`${h},${t}`, h, t);
  }

  /** The threat row of a threat feeds' label (0: none) with the flags single sources assert (ASN type, registry, Anonymous-IP). */
  threat(tree: ThreatTree | null, label: number, flags: number): number {
    const key = label * 256 + flags;
    const id = this.tables.threats.find(key);
    if (id >= 0) return id;
    const t = tree === null || label === 0 ? threatOf(flags) : buildThreat({ counts: tree.counts(label), hits: tree.hits(label) }, flags, tree.blocklists(label));
    return this.tables.threats.add(key, this.fragment(JSON.stringify(t)), this.fragment(JSON.stringify(basicThreat(t))), flags);
  }

  /** @throws Error past MAX_RECORDS */
  record(location: number, network: number, threat: number): number {
    if (location >= LOCATIONS || network >= NETWORKS) throw new Error('too many distinct locations or networks for one dataset');
    const key = threat < THREATS ? (location * NETWORKS + network) * THREATS + threat : `${location},${network},${threat}`;
    const records = this.tables.records;
    const id = records.find(key);
    if (id >= 0) return id;
    if (records.count >= MAX_RECORDS) throw new Error('too many distinct records for one dataset');
    return records.add(key, location, network, threat);
  }
}

/** Rows of what each geo or ASN database record resolved to, by its place in the lists below. */
interface Resolved {
  /** Location rows. */
  readonly locations: number[];
  /** Network rows, and the threat flags of their type. */
  readonly networks: { row: number; flags: number }[];
}

/** A family's ranges and refs (record << 8 | route prefix), merged where neighbours share a ref. */
interface Family {
  readonly starts: Uint32Array;
  readonly refs: Uint32Array;
  readonly length: number;
}

/**
 * Compiles what a snapshot has open (geo and ASN databases in order of
 * priority, Anonymous-IP databases, the threat feeds' threat.bin) and the
 * special-purpose registry into a dataset file.
 */
export function compileDataset(snap: Snapshot, special: SpecialTable, builtAt = new Date()): CompiledDataset {
  const intern = new Interner();
  const resolved: Resolved = { locations: [], networks: [] };
  const families = ([4, 6] as const).map((version) => compileFamily(snap, special, version, intern, resolved));
  const meta: DatasetMeta = {
    zones: intern.zones.list,
    builtAt: builtAt.toISOString(),
    sources: snap.databases().map((d) => ({ role: d.role, path: d.path, databaseType: d.databaseType, buildEpoch: d.buildEpoch })),
  };
  return {
    buffer: write(families[0], families[1], intern, meta),
    ranges: { v4: families[0].length, v6: families[1].length },
    records: intern.tables.records.count,
    fragments: intern.fragments.list.length,
  };
}

function compileFamily(snap: Snapshot, special: SpecialTable, version: IpVersion, intern: Interner, resolved: Resolved): Family {
  const bits = version === 4 ? 32 : 128;
  const last = version === 4 ? [0, 0, 0, 0xffffffff] : [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];
  // Geo layers: a location id per range.
  const geoIds = snap.geo.map(() => new Map<number, number>());
  const geoLayers = snap.geo.map((src, i) => {
    const layer = new Ranges();
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      let id = geoIds[i].get(offset);
      if (id === undefined) {
        const part = snap.geoAt(i, offset);
        id = part === null ? NONE : resolved.locations.push(intern.location(part)) - 1;
        geoIds[i].set(offset, id);
      }
      if (id !== NONE) layer.pushNetwork(words, prefix, bits, id);
    });
    return layer;
  });
  // ASN layers: a network ordinal per range (each network is its own range: its route), with its record and prefix.
  const networkIds = snap.asn.map(() => new Map<number, number>());
  const ordinals: number[] = [];
  const prefixes: number[] = [];
  const asnLayers = snap.asn.map((src, i) => {
    const layer = new Ranges();
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      let id = networkIds[i].get(offset);
      if (id === undefined) {
        const r = snap.asnAt(i, offset);
        id = r === null ? NONE : resolved.networks.push({ row: intern.network(r.head, r.tail), flags: r.flags }) - 1;
        networkIds[i].set(offset, id);
      }
      if (id === NONE) return;
      layer.pushNetwork(words, prefix, bits, ordinals.length);
      ordinals.push(id);
      prefixes.push(prefix);
    });
    return layer;
  });
  // Anonymous-IP layers: the threat flags each asserts (every database counts, not only the first).
  const anonymousLayers = snap.anonymous.map((src, i) => {
    const layer = new Ranges();
    const flags = new Map<number, number>();
    src.file.forEachNetwork(version, (words, prefix, offset) => {
      let f = flags.get(offset);
      if (f === undefined) flags.set(offset, (f = snap.anonymousAt(i, offset)));
      if (f !== 0) layer.pushNetwork(words, prefix, bits, f);
    });
    return layer;
  });
  // The threat feeds' labels.
  const threatLayer = new Ranges();
  snap.threat?.forEachRange(version, (lo, hi, label) => label !== 0 && threatLayer.push(lo, hi, label));
  const layers = [...geoLayers, ...asnLayers, ...anonymousLayers, threatLayer, specialRanges(special, version, last)];
  const parts = overlay(layers, last);
  return refsOf(parts, { geo: geoLayers.length, asn: asnLayers.length, anonymous: anonymousLayers.length }, snap.threat, intern, resolved, ordinals, prefixes);
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

function toBig(w: ArrayLike<number>): bigint {
  return (BigInt(w[0]) << 96n) | (BigInt(w[1]) << 64n) | (BigInt(w[2]) << 32n) | BigInt(w[3]);
}

function toWords(x: bigint): number[] {
  return [0, 1, 2, 3].map((i) => Number((x >> BigInt(96 - 32 * i)) & 0xffffffffn));
}

/** Each range's record and route prefix; neighbours with the same ref merged. */
function refsOf(
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
  const starts = new Uint32Array(parts.length * 4);
  const refs = new Uint32Array(parts.length);
  const noLocation = intern.location(null);
  const noNetwork = { row: intern.network(',"asn":null', ''), flags: 0 };
  const noThreat = intern.threat(null, 0, 0);
  let length = 0;
  for (let r = 0; r < parts.length; r++) {
    let geo = NONE;
    for (let g = 0; g < geoCount && geo === NONE; g++) geo = values[g][r];
    let ordinal = NONE;
    for (let a = 0; a < asnCount && ordinal === NONE; a++) ordinal = values[geoCount + a][r];
    const net = ordinal === NONE ? noNetwork : resolved.networks[ordinals[ordinal]];
    let flags = net.flags | (special[r] === SpecialKind.Unallocated ? ThreatFlag.Bogon : 0);
    for (let a = 0; a < counts.anonymous; a++) if (values[anonymousFrom + a][r] !== NONE) flags |= values[anonymousFrom + a][r];
    const label = labels[r] === NONE ? 0 : labels[r];
    const threat = label === 0 && flags === 0 ? noThreat : intern.threat(tree, label, flags);
    const record = intern.record(geo === NONE ? noLocation : resolved.locations[geo], net.row, threat);
    const ref = ((record << 8) | (ordinal === NONE ? NO_ROUTE : prefixes[ordinal])) >>> 0;
    if (length > 0 && refs[length - 1] === ref) continue;
    refs[length] = ref;
    for (let w = 0; w < 4; w++) starts[length * 4 + w] = parts.starts[r * 4 + w];
    length++;
  }
  return { starts: starts.subarray(0, length * 4), refs: refs.subarray(0, length), length };
}

/** The dataset file's bytes. */
function write(v4: Family, v6: Family, intern: Interner, meta: DatasetMeta): Buffer {
  const fragmentBytes = intern.fragments.list.map((f) => Buffer.from(f, 'utf8'));
  const fragmentSize = fragmentBytes.reduce((n, b) => n + b.length, 0);
  const fragmentPadded = (fragmentSize + 3) & ~3;
  const metaText = JSON.stringify(meta);
  const metaSize = (Buffer.byteLength(metaText) + 3) & ~3;
  const tables = TABLE_NAMES.map((t) => intern.tables[t].rows.subarray(0, intern.tables[t].count * TABLES[t].length));
  const words = INDEX_WORDS * 2 + v4.length * 2 + v6.length * 5 + tables.reduce((n, t) => n + t.length, 0) + intern.fragments.list.length + 1;
  const buf = Buffer.alloc(HEADER + words * 4 + fragmentPadded + metaSize);
  buf.fill(0x20, HEADER + words * 4 + fragmentPadded);
  buf.write(DATASET_MAGIC, 0, 'latin1');
  const counts = [v4.length, v6.length, ...TABLE_NAMES.map((t) => intern.tables[t].count), intern.fragments.list.length, fragmentPadded, metaSize];
  [DATASET_FORMAT_VERSION, ...counts].forEach((v, i) => buf.writeUInt32LE(v, 8 + i * 4));
  const out = new Uint32Array(buf.buffer, buf.byteOffset + HEADER, words);
  let at = 0;
  const put = (a: ArrayLike<number>) => {
    out.set(a, at);
    at += a.length;
  };
  put(index(v4, (i) => v4.starts[i * 4 + 3]));
  put(Uint32Array.from({ length: v4.length }, (_, i) => v4.starts[i * 4 + 3]));
  put(v4.refs);
  put(index(v6, (i) => v6.starts[i * 4]));
  put(v6.starts);
  put(v6.refs);
  for (const t of tables) put(t);
  const offsets = new Uint32Array(intern.fragments.list.length + 1);
  fragmentBytes.forEach((b, i) => (offsets[i + 1] = offsets[i] + b.length));
  put(offsets);
  let byte = HEADER + words * 4;
  for (const b of fragmentBytes) byte += b.copy(buf, byte);
  buf.write(metaText, HEADER + words * 4 + fragmentPadded, 'utf8');
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 52);
  return buf;
}

/** For each block of an address's first 20 bits, the first range whose start (its first word: `top`) is in it or after it. */
function index(family: Family, top: (range: number) => number): Uint32Array {
  const idx = new Uint32Array(INDEX_WORDS);
  let r = 0;
  for (let block = 0; block < INDEX_WORDS - 1; block++) {
    while (r < family.length && top(r) >>> INDEX_SHIFT < block) r++;
    idx[block] = r;
  }
  idx[INDEX_WORDS - 1] = family.length;
  return idx;
}
