/**
 * One immutable set of opened files: the compiled dataset, and the threat
 * feeds' threat.bin laid over it when a dataset directory has one. What
 * `reload()` swaps as a whole.
 */

import { join } from 'node:path';
import { readRegularText } from './files/read.js';
import { bytes, bytesSync, withFile, type Loaded, type OpenedFile } from './dataset/load.js';
import { ensureDataset } from './dataset/locate.js';
import { InvalidDatasetError } from './errors.js';
import type { IpVersion } from './ip/parse.js';
import type { ResolvedOptions, SharedFiles } from './options.js';
import { labelledThreat, staleBogon, threatOf } from './record/threat.js';
import type { Manifest } from './threat/build.js';
import { resolveDataset } from './dataset/store.js';
import { ThreatTree } from './threat/tree.js';
import { Dataset, type SourceInfo } from './dataset/format.js';
import { RecordObjects } from './dataset/objects.js';
import { memoryMapper, type Mapper } from './native.js';
import { isSealed, writeSeal } from './dataset/seal.js';
import { verifyOffThread } from './dataset/verify-thread.js';
import { ZoneClock } from './time/zone.js';
import type { Threat } from './types.js';

/** A database the dataset in use was compiled from, for `info()`. */
export interface DatabaseInfo extends SourceInfo {
  /** When the dataset was read (a reload keeps the bytes of a file that did not change). */
  readonly readAt: string;
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

interface Paths {
  /** threat.bin to lay over the dataset, or none. */
  readonly threat: readonly string[];
  /** The manifest of the dataset build in use (read once, so that every file comes from the same build). */
  readonly manifest: Manifest | null;
  /** The compiled dataset file. */
  readonly compiled: readonly string[];
  /** threat.bin of the feeds compiled into the dataset, or null. */
  readonly compiledThreat: string | null;
}

/**
 * The files to open: the dataset file given; else a dataset directory's
 * build's dataset, with its feeds compiled in, unless databases are given;
 * else the one compiled from the databases given or the default data
 * (compiled now when there is none), with the directory's threat.bin laid
 * over it.
 */
function resolvePaths(options: ResolvedOptions): Paths {
  const build = options.data === null ? null : resolveDataset(options.data);
  const manifest = readManifest(build);
  const own = options.geo === null && options.asn === null && options.anonymous.length === 0 && options.threat === null;
  if (options.dataset === null && build !== null && own && manifest?.dataset !== undefined) {
    return { threat: [], manifest, compiled: [join(build, manifest.dataset)], compiledThreat: join(build, manifest.threat) };
  }
  const threat = options.threat ?? (build === null ? null : join(build, 'threat.bin'));
  const compiled = options.dataset ?? ensureDataset({ geo: options.geo, asn: options.asn, anonymous: options.anonymous });
  return { threat: threat === null ? [] : [threat], manifest, compiled: [compiled], compiledThreat: null };
}

/** The manifest of a dataset directory's build, or null when there is none. @throws InvalidDatasetError when it is unreadable */
function readManifest(dataset: string | null): Manifest | null {
  if (dataset === null) return null;
  const path = join(dataset, 'manifest.json');
  let text: string;
  try {
    text = readRegularText(path);
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

/**
 * Bytes already held for a file that has not changed since (`stamp`): the
 * previous snapshot's (a reload), else another engine's in shared memory
 * (`options.shared`); null when it must be opened.
 */
function held(options: ResolvedOptions, previous: Snapshot | null, { path, stamp }: OpenedFile): Loaded | null {
  const known = previous?.files.get(path);
  if (known !== undefined && known.stamp === stamp) return known;
  const s = options.shared.get(path);
  if (s === undefined || s.bytes === null || s.stamp !== stamp) return null;
  return { path, buf: Buffer.from(s.bytes), stamp, readAt: new Date(s.readAt) };
}

/** A file just read. */
const loaded = (f: OpenedFile, buf: Buffer): Loaded => ({ path: f.path, buf, stamp: f.stamp, readAt: new Date() });

export class Snapshot {
  /** The compiled dataset that answers every lookup. */
  readonly dataset: Dataset;
  /** Its records as objects and as text. */
  readonly objects: RecordObjects;
  /** The compiled threat feeds laid over the dataset, when a dataset directory or threat.bin gives them. */
  readonly threat: ThreatTree | null;
  /** threat.bin of the feeds laid over the dataset or compiled into it, or null. */
  readonly threatPath: string | null;
  readonly manifest: Manifest | null;
  /** Threat objects of labelled addresses, by label and single-source flags. */
  private readonly threats = new Map<number, Threat>();
  readonly clock: ZoneClock;
  readonly loadedAt: Date;
  private readonly readAt: Date;
  /** Every file read, by path (for the next reload). */
  readonly files: ReadonlyMap<string, Loaded>;

  private constructor(paths: Paths, threat: Loaded[], compiled: Loaded, dataset: Dataset, previous: Snapshot | null) {
    this.files = new Map([...threat, compiled].map((l) => [l.path, l]));
    this.dataset = dataset;
    this.readAt = compiled.readAt;
    // A dataset the previous snapshot holds unchanged keeps what it parsed.
    this.objects = previous !== null && previous.dataset === dataset ? previous.objects : new RecordObjects(dataset);
    this.threat = threat.length === 0 ? null : new ThreatTree(threat[0].buf, threat[0].path);
    this.threatPath = threat.length === 0 ? paths.compiledThreat : threat[0].path;
    this.manifest = paths.manifest;
    this.clock = new ZoneClock();
    this.loadedAt = new Date();
  }

  /**
   * Opens the dataset and threat.bin, reading the files in parallel; a
   * file that `previous` read and that has not changed since is not read
   * again (a reload after a new threat.bin reads only that). A dataset
   * not opened before is checked whole (`Dataset.verify()`) on a worker
   * thread unless its seal says it passed unchanged (`dataset/seal.ts`):
   * no answer comes from a file that fails.
   */
  static async open(options: ResolvedOptions, previous: Snapshot | null = null): Promise<Snapshot> {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const threat = Promise.all(p.threat.map((path) => withFile(path, async (f) => held(options, previous, f) ?? loaded(f, await bytes(f, mapper)))));
    const compiled = withFile(p.compiled[0], async (f): Promise<[Loaded, Dataset]> => {
      // Bytes held already were checked by the engine that opened them: this one's last snapshot, or the one sharing them.
      const known = held(options, previous, f);
      if (known !== null) return [known, previous?.files.get(f.path) === known ? previous.dataset : new Dataset(known.buf, f.path)];
      const l = loaded(f, await bytes(f, mapper));
      const ds = new Dataset(l.buf, f.path);
      if (!isSealed(f.path, f.stat)) {
        await verifyOffThread(ds, mapper !== null ? { fd: f.fd } : { bytes: l.buf.buffer as SharedArrayBuffer });
        writeSeal(f.path, f.stat);
      }
      return [l, ds];
    });
    const [[file, dataset], threatFiles] = await Promise.all([compiled, threat]);
    return new Snapshot(p, threatFiles, file, dataset, previous);
  }

  /** Opens the files synchronously (and checks a dataset not sealed on this thread). */
  static openSync(options: ResolvedOptions): Snapshot {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const threat = p.threat.map((path) => withFile(path, (f) => held(options, null, f) ?? loaded(f, bytesSync(f, mapper))));
    const [file, dataset] = withFile(p.compiled[0], (f): [Loaded, Dataset] => {
      const known = held(options, null, f);
      const l = known ?? loaded(f, bytesSync(f, mapper));
      const ds = new Dataset(l.buf, f.path);
      if (known === null && !isSealed(f.path, f.stat)) {
        ds.verify();
        writeSeal(f.path, f.stat);
      }
      return [l, ds];
    });
    return new Snapshot(p, threat, file, dataset, null);
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

  /**
   * The threat object of an address: the threat feeds' label plus flags of
   * single sources (ASN classification, IANA, Anonymous-IP), shared per
   * combination.
   */
  threatObject(version: IpVersion, words: ArrayLike<number>, extra: number, routed: boolean): Threat {
    const tree = this.threat;
    if (tree === null) return threatOf(extra);
    const label = tree.find(version, words);
    if (label === 0) return threatOf(extra);
    const key = (label * 256 + extra) * 2 + (staleBogon(tree, label, routed) ? 1 : 0);
    let t = this.threats.get(key);
    if (t === undefined) {
      t = labelledThreat(tree, label, extra, routed);
      this.threats.set(key, t);
    }
    return t;
  }

  /** The databases the dataset was compiled from, for `info()`. */
  databases(): DatabaseInfo[] {
    return this.dataset.meta.sources.map((s) => ({ ...s, readAt: this.readAt.toISOString() }));
  }
}
