/**
 * One immutable set of opened databases with their caches: what `reload()`
 * swaps as a whole. Parts of the record that depend only on the matched
 * database record (location with country facts; network owner with route)
 * are assembled once per record and cached.
 */

import { open as openFile, stat } from 'node:fs/promises';
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { classifyAsn } from './asn/classify.js';
import { ASN_DATABASE_TYPE } from './asn/compile.js';
import { readFileRange } from './build/read.js';
import { CountryTable, type CountryFacts } from './country/facts.js';
import { matchRegion, subdivisionByCode } from './country/regions.js';
import { defaultGeoPaths, ensureAsnMmdb } from './data.js';
import { InvalidDatasetError } from './errors.js';
import { flatGeo } from './geo/adapters/flat.js';
import { ipinfoAsn, ipinfoGeo } from './geo/adapters/ipinfo.js';
import { maxmindAnonymous, maxmindAsn, maxmindGeo, maxmindIsp } from './geo/adapters/maxmind.js';
import type { AnonymousFacts, AsnFacts, GeoFacts, Role, Schema } from './geo/facts.js';
import { detectSchema, ROLES } from './geo/schema.js';
import { formatCidr } from './ip/format.js';
import type { IpVersion } from './ip/parse.js';
import type { MmdbValue } from './mmdb/decoder.js';
import { MmdbFile, type Found } from './mmdb/reader.js';
import type { ResolvedOptions, SharedFiles } from './options.js';
import { buildThreat, threatOf, ThreatFlag } from './record/threat.js';
import { resolveDataset, type Manifest } from './threat/build.js';
import { ThreatTree } from './threat/tree.js';
import { Dataset } from './dataset/format.js';
import { FragmentTexts } from './dataset/render.js';
import { RecordObjects } from './dataset/objects.js';
import { memoryMapper, type Mapper } from './native.js';
import { warmTimeZones, ZoneClock } from './time/zone.js';
import { zoneOfLocation } from './time/country-zone.js';
import type { Asn, Carrier, Threat } from './types.js';

/** The location part of a record, per geo record. */
export interface GeoPart {
  readonly city: string | null;
  readonly region: string | null;
  readonly region_code: string | null;
  readonly region_type: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly postal: string | null;
  readonly country: CountryFacts | null;
  readonly zone: string | null;
  /** Its pieces of the record's JSON, made on first use (`record/pieces.ts`). */
  readonly pieces: GeoPieces;
}

/** A location's pieces of the record's JSON, as text and in UTF-8: its run of keys, its country's. */
export interface GeoPieces {
  text: string | null;
  bytes: Uint8Array | null;
  countryText: string | null;
  countryBytes: Uint8Array | null;
}

/** The network part of a record, per matched network. */
export interface AsnPart {
  readonly asn: Asn | null;
  readonly carrier: Carrier | null;
  readonly flags: number;
  /** `asn` (and `carrier`) as the record's JSON text after a comma. */
  readonly json: string;
}

/** What a network part takes from its ASN record (the same for every network of the record). */
export interface AsnRecord {
  readonly asn: string;
  readonly name: string | null;
  readonly domain: string | null;
  readonly type: Asn['type'];
  readonly carrier: Carrier | null;
  /** Threat flags the network's type asserts. */
  readonly flags: number;
  /** JSON text of the part before the route and after it, as text and in UTF-8. */
  readonly head: string;
  readonly tail: string;
  readonly headBytes: Uint8Array;
  readonly tailBytes: Uint8Array;
}

export interface DatabaseInfo {
  readonly role: Role;
  readonly path: string;
  readonly schema: Schema;
  readonly databaseType: string;
  readonly buildEpoch: string;
  readonly ipVersion: 4 | 6;
  readonly nodeCount: number;
  readonly bytes: number;
  /** When the file was read (a reload keeps the bytes of a file that did not change). */
  readonly readAt: string;
}

interface Source<T> {
  readonly file: MmdbFile;
  readonly info: DatabaseInfo;
  readonly cache: Map<number, T | null>;
}

type Adapter<T> = (v: MmdbValue) => T | null;

const GEO_ADAPTERS: Partial<Record<Schema, Adapter<GeoFacts>>> = { flat: flatGeo, 'maxmind-city': maxmindGeo, 'ipinfo-lite': ipinfoGeo };
const ASN_ADAPTERS: Partial<Record<Schema, Adapter<AsnFacts>>> = { 'maxmind-asn': maxmindAsn, 'maxmind-isp': maxmindIsp, 'ipinfo-lite': ipinfoAsn };
const ANON_ADAPTERS: Partial<Record<Schema, Adapter<AnonymousFacts>>> = { 'maxmind-anonymous': maxmindAnonymous };

interface Loaded {
  readonly path: string;
  readonly buf: Buffer;
  /** Device, inode, size and modification time when read: a reload reuses the bytes while they match. */
  readonly stamp: string;
  readonly readAt: Date;
}

/** The memory mapper when the options ask for maps and the addon is there, else null (files are read). */
function mapperFor(options: ResolvedOptions): Mapper | null {
  if (options.memory !== 'mmap') return null;
  const m = memoryMapper();
  return 'map' in m ? m : null;
}

/** How this process holds database files: the mode in use and, when maps were asked for but cannot be made, why. */
export function memoryState(options: ResolvedOptions): { readonly mode: 'mmap' | 'read'; readonly reason?: string } {
  if (options.memory === 'read') return { mode: 'read' };
  const m = memoryMapper();
  return 'map' in m ? { mode: 'mmap' } : { mode: 'read', reason: m.reason };
}

/** What identifies a file's contents without reading them (a replaced file has a new inode; a rewritten one a new time). */
function stampOf(st: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** Bytes at the end of a compiled ASN file that hold its metadata. */
const METADATA_TAIL = 4096;

/**
 * Whether a compiled ASN file was built from `source`: its metadata (at the
 * end of the file) names it. Reads only the tail; the file is read whole
 * once, when the snapshot opens it.
 */
function asnBuiltFrom(path: string, source: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, METADATA_TAIL);
    const tail = Buffer.alloc(length);
    readSync(fd, tail, 0, length, size - length);
    return tail.includes(ASN_DATABASE_TYPE) && tail.includes(source);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

interface Paths {
  readonly geo: readonly string[];
  readonly asn: readonly string[];
  readonly anonymous: readonly string[];
  /** threat.bin, or none. */
  readonly threat: readonly string[];
  /** The dataset build in use (resolved once, so threat.bin and manifest.json come from the same build). */
  readonly dataset: string | null;
  /** A compiled dataset file, or none. */
  readonly compiled: readonly string[];
}

function resolvePaths(options: ResolvedOptions): Paths {
  const dataset = options.data === null ? null : resolveDataset(options.data);
  const threat = options.threat ?? (dataset === null ? null : join(dataset, 'threat.bin'));
  // A compiled dataset holds what the databases would give; threat feeds are laid over it.
  if (options.dataset !== null) return { dataset, geo: [], asn: [], anonymous: [], threat: threat === null ? [] : [threat], compiled: [options.dataset] };
  return {
    dataset,
    geo: options.geo ?? defaultGeoPaths(),
    asn: options.asn ?? [ensureAsnMmdb(asnBuiltFrom)],
    anonymous: options.anonymous,
    threat: threat === null ? [] : [threat],
    compiled: [],
  };
}

/** The manifest of a dataset directory, or null when there is none. @throws InvalidDatasetError when it is unreadable */
function readManifest(dataset: string | null): Manifest | null {
  if (dataset === null) return null;
  const path = join(dataset, 'manifest.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InvalidDatasetError(`Cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return JSON.parse(text) as Manifest;
  } catch (e) {
    throw new InvalidDatasetError(`${path} is not valid JSON.`, { cause: e });
  }
}

/** Bytes per read of `readWhole`. */
const READ_CHUNK = 8 << 20;

/**
 * Reads a file into one buffer with its chunks read concurrently: the
 * thread pool faults in the fresh buffer's pages on every core, which
 * reads the 134 MB of the default geo files about 25 % faster than
 * `readFile`.
 */
async function readWhole(path: string): Promise<Buffer> {
  const fh = await openFile(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const buf = sharedBuffer(size);
    const reads: Promise<unknown>[] = [];
    const readRange = async (from: number, to: number): Promise<void> => {
      while (from < to) {
        const { bytesRead } = await fh.read(buf, from, to - from, from);
        if (bytesRead === 0) throw new Error(`the file ended at byte ${from} of ${size} (it changed while it was read)`);
        from += bytesRead;
      }
    };
    for (let at = 0; at < size; at += READ_CHUNK) reads.push(readRange(at, Math.min(size, at + READ_CHUNK)));
    await Promise.all(reads);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * A buffer over fresh shared memory: what an engine reads can be handed to
 * worker threads (`share()`) without a copy.
 */
function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}

/**
 * Bytes already held for a file that has not changed since (`stamp`): the
 * previous snapshot's (a reload), else another engine's in shared memory
 * (`options.shared`); null when it must be opened.
 */
function held(options: ResolvedOptions, previous: Snapshot | null, path: string, stamp: string): Loaded | null {
  const known = previous?.files.get(path);
  if (known !== undefined && known.stamp === stamp) return known;
  const s = options.shared.get(path);
  if (s === undefined || s.bytes === null || s.stamp !== stamp) return null;
  return { path, buf: Buffer.from(s.bytes), stamp, readAt: new Date(s.readAt) };
}

function wrapRead(path: string, cause: unknown): never {
  throw new InvalidDatasetError(`Cannot read database ${path}: ${(cause as Error).message}`, { cause });
}

function asnRecord(facts: AsnFacts | null): AsnRecord | null {
  if (facts === null || facts.asn === null) return null;
  const asn = `AS${facts.asn}`;
  const type = classifyAsn(facts.name);
  const carrier = facts.carrier === null ? null : Object.freeze({ ...facts.carrier });
  // The text of JSON.stringify(asn) around its route (key order: asn, name, domain, route, type).
  const head = `,"asn":{"asn":${JSON.stringify(asn)},"name":${JSON.stringify(facts.name)},"domain":${JSON.stringify(facts.domain)},"route":`;
  const tail = `,"type":${JSON.stringify(type)}}` + (carrier === null ? '' : ',"carrier":' + JSON.stringify(carrier));
  const flags = type === 'hosting' ? ThreatFlag.Datacenter : 0;
  return { asn, name: facts.name, domain: facts.domain, type, carrier, flags, head, tail, headBytes: Buffer.from(head), tailBytes: Buffer.from(tail) };
}

function anonymousFlagsOf(facts: AnonymousFacts | null): number {
  return facts === null ? 0 : (facts.tor ? ThreatFlag.Tor : 0) | (facts.vpn ? ThreatFlag.Vpn : 0) | (facts.proxy ? ThreatFlag.Proxy : 0) | (facts.hosting ? ThreatFlag.Datacenter : 0);
}

function networkPart(r: AsnRecord, route: string): AsnPart {
  const asn: Asn = Object.freeze({ asn: r.asn, name: r.name, domain: r.domain, route, type: r.type });
  return Object.freeze({ asn, carrier: r.carrier, flags: r.flags, json: r.head + '"' + route + '"' + r.tail });
}

export class Snapshot {
  readonly geo: readonly Source<GeoPart>[];
  readonly asn: readonly Source<AsnPart>[];
  readonly anonymous: readonly Source<number>[];
  /** The compiled threat feeds, when a dataset or threat.bin is loaded. */
  readonly threat: ThreatTree | null;
  /** A compiled dataset that answers every lookup, when one was given. */
  readonly compiled: Dataset | null;
  /** Its fragments as strings, for records as text. */
  readonly compiledTexts: FragmentTexts | null;
  /** Its parts parsed, for records as objects. */
  readonly compiledObjects: RecordObjects | null;
  readonly threatPath: string | null;
  readonly manifest: Manifest | null;
  /** Threat objects of labelled addresses, by label and single-source flags. */
  private readonly threats = new Map<number, Threat>();
  readonly countries: CountryTable;
  readonly clock: ZoneClock;
  readonly loadedAt: Date;
  private readonly cacheSize: number;
  private readonly geoAdapt: readonly Adapter<GeoFacts>[];
  private readonly asnAdapt: readonly Adapter<AsnFacts>[];
  private readonly anonAdapt: readonly Adapter<AnonymousFacts>[];
  /** Per ASN database, what network parts take from each record, by data offset. */
  private readonly asnRecords: readonly Map<number, AsnRecord | null>[];
  private readonly found: Found = { offset: -1, prefix: 0 };
  /** The network the last `asnRecordOf` matched: its prefix length, its ASN database, its leaf in that tree. */
  routePrefix = 0;
  routeSource = 0;
  routeLeaf = 0;
  /** Every file read, by path (for the next reload). */
  readonly files: ReadonlyMap<string, Loaded>;

  private constructor(options: ResolvedOptions, dataset: string | null, geo: Loaded[], asn: Loaded[], anon: Loaded[], threat: Loaded[], compiled: Loaded[]) {
    this.files = new Map([...geo, ...asn, ...anon, ...threat, ...compiled].map((l) => [l.path, l]));
    this.compiled = compiled.length === 0 ? null : new Dataset(compiled[0].buf, compiled[0].path);
    this.compiledTexts = this.compiled === null ? null : new FragmentTexts(this.compiled);
    this.compiledObjects = this.compiled === null ? null : new RecordObjects(this.compiled, this.compiledTexts as FragmentTexts);
    this.threat = threat.length === 0 ? null : new ThreatTree(threat[0].buf, threat[0].path);
    this.threatPath = threat.length === 0 ? null : threat[0].path;
    this.manifest = readManifest(dataset);
    this.cacheSize = options.recordCacheSize;
    this.countries = new CountryTable(options.flagBaseUrl);
    this.clock = new ZoneClock();
    this.loadedAt = new Date();
    const make = <T, F>(role: Role, list: Loaded[], adapters: Partial<Record<Schema, Adapter<F>>>, out: Adapter<F>[]): Source<T>[] =>
      list.map(({ path, buf, readAt }) => {
        const file = new MmdbFile(buf, path);
        const schema = detectSchema(file, path);
        const adapter = adapters[schema];
        if (!adapter || !ROLES[schema].includes(role)) {
          throw new InvalidDatasetError(`${path}: a ${schema} database cannot serve as a ${role} database.`);
        }
        out.push(adapter);
        const m = file.metadata;
        const info: DatabaseInfo = {
          role,
          path,
          schema,
          databaseType: m.databaseType,
          buildEpoch: m.buildEpoch.toISOString(),
          ipVersion: m.ipVersion,
          nodeCount: m.nodeCount,
          bytes: file.size,
          readAt: readAt.toISOString(),
        };
        return { file, info, cache: new Map<number, T | null>() };
      });
    const geoAdapt: Adapter<GeoFacts>[] = [];
    const asnAdapt: Adapter<AsnFacts>[] = [];
    const anonAdapt: Adapter<AnonymousFacts>[] = [];
    this.geo = make<GeoPart, GeoFacts>('geo', geo, GEO_ADAPTERS, geoAdapt);
    this.asn = make<AsnPart, AsnFacts>('asn', asn, ASN_ADAPTERS, asnAdapt);
    this.asnRecords = this.asn.map(() => new Map());
    this.anonymous = make<number, AnonymousFacts>('anonymous', anon, ANON_ADAPTERS, anonAdapt);
    this.geoAdapt = geoAdapt;
    this.asnAdapt = asnAdapt;
    this.anonAdapt = anonAdapt;
  }

  /**
   * Opens every database of the options, reading the files in parallel;
   * a file that `previous` read and that has not changed since is not read
   * again (a reload after a new threat.bin reads only that).
   */
  static async open(options: ResolvedOptions, previous: Snapshot | null = null): Promise<Snapshot> {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const load = (list: readonly string[]) =>
      Promise.all(
        list.map(async (path): Promise<Loaded> => {
          try {
            const stamp = stampOf(await stat(path));
            const known = held(options, previous, path, stamp);
            if (known !== null) return known;
            const readAt = new Date();
            return { path, buf: mapper !== null ? mapper.map(path) : await readWhole(path), stamp, readAt };
          } catch (e) {
            return wrapRead(path, e);
          }
        }),
      );
    const loading = Promise.all([load(p.geo), load(p.asn), load(p.anonymous), load(p.threat), load(p.compiled)]);
    // The main thread would wait for the reads: start up ICU meanwhile.
    warmTimeZones();
    const [geo, asn, anon, threat, compiled] = await loading;
    return new Snapshot(options, p.dataset, geo, asn, anon, threat, compiled);
  }

  /** Opens every database synchronously. */
  static openSync(options: ResolvedOptions): Snapshot {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const load = (list: readonly string[]) =>
      list.map((path): Loaded => {
        try {
          const stamp = stampOf(statSync(path));
          return held(options, null, path, stamp) ?? { path, buf: mapper !== null ? mapper.map(path) : readFileRange(path, sharedBuffer), stamp, readAt: new Date() };
        } catch (e) {
          return wrapRead(path, e);
        }
      });
    return new Snapshot(options, p.dataset, load(p.geo), load(p.asn), load(p.anonymous), load(p.threat), load(p.compiled));
  }

  /** Every file of this snapshot, its bytes shared when they are in shared memory (see `Engine.share()`). */
  share(): SharedFiles {
    const files = [...this.files.values()].map(({ path, buf, stamp, readAt }) => ({
      path,
      stamp,
      readAt: readAt.toISOString(),
      bytes: buf.buffer instanceof SharedArrayBuffer && buf.byteOffset === 0 && buf.length === buf.buffer.byteLength ? buf.buffer : null,
    }));
    return { files };
  }

  /** The location part for an address, or null when no geo database has it. */
  geoPart(version: IpVersion, words: ArrayLike<number>): GeoPart | null {
    const found = this.found;
    for (let i = 0; i < this.geo.length; i++) {
      const src = this.geo[i];
      src.file.find(version, words, found);
      const offset = found.offset;
      if (offset < 0) continue;
      let part = src.cache.get(offset);
      if (part === undefined) {
        part = this.buildGeo(this.geoAdapt[i](src.file.decode(offset)));
        this.remember(src.cache, offset, part);
      }
      if (part !== null) return part;
    }
    return null;
  }

  /**
   * The ASN record for an address, or null when no ASN database has it;
   * the matched network in `routePrefix`, `routeSource` and `routeLeaf`
   * (for `networkPartOf`; writers of the record's bytes write the route
   * themselves).
   */
  asnRecordOf(version: IpVersion, words: ArrayLike<number>): AsnRecord | null {
    const found = this.found;
    for (let i = 0; i < this.asn.length; i++) {
      const leaf = this.asn[i].file.find(version, words, found);
      if (found.offset < 0) continue;
      const record = this.asnRecordAt(i, found.offset);
      if (record !== null) {
        this.routePrefix = found.prefix;
        this.routeSource = i;
        this.routeLeaf = leaf;
        return record;
      }
    }
    return null;
  }

  /**
   * The network part (`asn` with its route) of the network `asnRecordOf`
   * matched for an address (its record, database, leaf and prefix), made
   * once per network: no walk.
   */
  networkPartOf(version: IpVersion, words: ArrayLike<number>, record: AsnRecord, source: number, leaf: number, prefix: number): AsnPart {
    const cache = this.asn[source].cache;
    // Keyed by network (not data offset): the route differs per network, and an IPv4 network's
    // route differs from the IPv6 text of the same network (IPv4 lives at ::/96 of an IPv6 tree).
    const key = leaf * 2 + (version === 6 ? 1 : 0);
    let part = cache.get(key);
    if (part == null) {
      part = networkPart(record, formatCidr(version, words, prefix));
      this.remember(cache, key, part);
    }
    return part;
  }

  /** The location part of geo database `i`'s record at `offset` (for the compiler: no cache). */
  geoAt(i: number, offset: number): GeoPart | null {
    return this.buildGeo(this.geoAdapt[i](this.geo[i].file.decode(offset)));
  }

  /** What network parts of ASN database `i` take from its record at `offset` (for the compiler: no cache). */
  asnAt(i: number, offset: number): AsnRecord | null {
    return asnRecord(this.asnAdapt[i](this.asn[i].file.decode(offset)));
  }

  /** The threat flags Anonymous-IP database `i`'s record at `offset` asserts (for the compiler: no cache). */
  anonymousAt(i: number, offset: number): number {
    return anonymousFlagsOf(this.anonAdapt[i](this.anonymous[i].file.decode(offset)));
  }

  private asnRecordAt(i: number, offset: number): AsnRecord | null {
    const records = this.asnRecords[i];
    let record = records.get(offset);
    if (record === undefined) {
      record = asnRecord(this.asnAdapt[i](this.asn[i].file.decode(offset)));
      this.remember(records, offset, record);
    }
    return record;
  }

  /** Threat flags the anonymity databases assert for an address. */
  anonymousFlags(version: IpVersion, words: ArrayLike<number>): number {
    let flags = 0;
    const found = this.found;
    for (let i = 0; i < this.anonymous.length; i++) {
      const src = this.anonymous[i];
      src.file.find(version, words, found);
      if (found.offset < 0) continue;
      let f = src.cache.get(found.offset);
      if (f === undefined) {
        f = anonymousFlagsOf(this.anonAdapt[i](src.file.decode(found.offset)));
        this.remember(src.cache, found.offset, f);
      }
      flags |= f ?? 0;
    }
    return flags;
  }

  /**
   * The threat object of an address: the threat feeds' label plus flags of
   * single sources (ASN classification, IANA, Anonymous-IP), shared per
   * combination.
   */
  threatObject(version: IpVersion, words: ArrayLike<number>, extra: number): Threat {
    const tree = this.threat;
    if (tree === null) return threatOf(extra);
    const label = tree.find(version, words);
    if (label === 0) return threatOf(extra);
    const key = label * 256 + extra;
    let t = this.threats.get(key);
    if (t === undefined) {
      t = buildThreat({ counts: tree.counts(label), hits: tree.hits(label) }, extra, tree.blocklists(label));
      this.threats.set(key, t);
    }
    return t;
  }

  private remember<T>(cache: Map<number, T>, key: number, value: T): void {
    if (this.cacheSize === 0) return;
    if (cache.size >= this.cacheSize) cache.clear();
    cache.set(key, value);
  }

  private buildGeo(facts: GeoFacts | null): GeoPart | null {
    if (facts === null) return null;
    const cc = facts.countryCode;
    const country = cc === null ? null : this.countries.get(cc);
    let regionCode: string | null = null;
    let regionType: string | null = null;
    if (cc !== null) {
      const sub = facts.regionCode !== null ? subdivisionByCode(cc, facts.regionCode) : facts.region !== null ? matchRegion(cc, facts.region) : null;
      regionCode = facts.regionCode ?? sub?.code ?? null;
      regionType = sub?.type ?? null;
    }
    return Object.freeze({
      city: facts.city,
      region: facts.region,
      region_code: regionCode,
      region_type: regionType,
      latitude: facts.latitude,
      longitude: facts.longitude,
      postal: facts.postal,
      country,
      zone: this.zoneOf(facts, cc),
      pieces: { text: null, bytes: null, countryText: null, countryBytes: null },
    });
  }

  /** Time zone: the database's, else the one at the coordinates, kept within the country (`time/country-zone.ts`). */
  private zoneOf(facts: GeoFacts, cc: string | null): string | null {
    return zoneOfLocation(facts.timeZone, facts.latitude, facts.longitude, cc, (z) => this.clock.isValid(z));
  }

  /** Databases in use, for `info()`. */
  databases(): DatabaseInfo[] {
    return [...this.geo, ...this.asn, ...this.anonymous].map((s) => s.info);
  }
}
