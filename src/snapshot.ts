/**
 * One immutable set of opened files: the compiled dataset, and the threat
 * feeds' threat.bin laid over it when a dataset directory has one. What
 * `reload()` swaps as a whole.
 */

import { closeSync, read as readCallback, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { openRegular, readRange, readRegularText } from './files/read.js';
import { ensureDataset } from './dataset/locate.js';
import { InvalidDatasetError } from './errors.js';
import type { IpVersion } from './ip/parse.js';
import type { ResolvedOptions, SharedFiles } from './options.js';
import { buildThreat, threatOf } from './record/threat.js';
import type { Manifest } from './threat/build.js';
import { resolveDataset } from './dataset/store.js';
import { ThreatTree } from './threat/tree.js';
import { Dataset, type SourceInfo } from './dataset/format.js';
import { RecordObjects } from './dataset/objects.js';
import { memoryMapper, type Mapper } from './native.js';
import { identity, isSealed, writeSeal } from './dataset/seal.js';
import { verifyOffThread } from './dataset/verify-thread.js';
import { warmTimeZones, ZoneClock } from './time/zone.js';
import type { Threat } from './types.js';

/** A database the dataset in use was compiled from, for `info()`. */
export interface DatabaseInfo extends SourceInfo {
  /** When the dataset was read (a reload keeps the bytes of a file that did not change). */
  readonly readAt: string;
}

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

/** Bytes per read of `readWhole`. */
const READ_CHUNK = 8 << 20;

const readAsync = promisify(readCallback);

/**
 * Reads an open file of `size` bytes into one buffer with its chunks read
 * concurrently: the thread pool faults in the fresh buffer's pages on
 * every core, which reads the 134 MB of the default geo files about 25 %
 * faster than `readFile`.
 */
async function readWhole(fd: number, size: number): Promise<Buffer> {
  const buf = sharedBuffer(size);
  const reads: Promise<unknown>[] = [];
  const readRange = async (from: number, to: number): Promise<void> => {
    while (from < to) {
      const { bytesRead } = await readAsync(fd, buf, from, to - from, from);
      if (bytesRead === 0) throw new Error(`the file ended at byte ${from} of ${size} (it changed while it was read)`);
      from += bytesRead;
    }
  };
  for (let at = 0; at < size; at += READ_CHUNK) reads.push(readRange(at, Math.min(size, at + READ_CHUNK)));
  await Promise.all(reads);
  return buf;
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

/** A file opened for loading: its descriptor's identity (`dataset/seal.ts`), which also tells a reload whether it changed. */
interface Stamp {
  readonly id: string;
  readonly stat: BigIntStats;
}

/**
 * Runs `work` on a regular file opened by path (a FIFO or device is
 * refused at once), closing it after; errors name the file.
 * @throws InvalidDatasetError
 */
async function withFile<T>(path: string, work: (fd: number, stamp: Stamp) => Promise<T>): Promise<T> {
  const { fd, stat } = openOrThrow(path);
  try {
    return await work(fd, { id: identity(stat), stat });
  } catch (e) {
    if (e instanceof InvalidDatasetError) throw e;
    return wrapRead(path, e);
  } finally {
    closeSync(fd);
  }
}

/** `withFile`, synchronously. */
function withFileSync<T>(path: string, work: (fd: number, stamp: Stamp) => T): T {
  const { fd, stat } = openOrThrow(path);
  try {
    return work(fd, { id: identity(stat), stat });
  } catch (e) {
    if (e instanceof InvalidDatasetError) throw e;
    return wrapRead(path, e);
  } finally {
    closeSync(fd);
  }
}

function openOrThrow(path: string): ReturnType<typeof openRegular> {
  try {
    return openRegular(path);
  } catch (e) {
    return wrapRead(path, e);
  }
}

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
    const loadAll = (list: readonly string[], check: boolean) =>
      Promise.all(
        list.map((path) =>
          withFile(path, async (fd, stamp): Promise<[Loaded, Dataset | null]> => {
            const known = held(options, previous, path, stamp.id);
            if (known !== null) return [known, check ? (previous?.files.get(path) === known ? previous.dataset : new Dataset(known.buf, path)) : null];
            const readAt = new Date();
            const buf = mapper !== null ? mapper.map(fd) : await readWhole(fd, Number(stamp.stat.size));
            const loaded = { path, buf, stamp: stamp.id, readAt };
            if (!check) return [loaded, null];
            const ds = new Dataset(buf, path);
            if (!isSealed(path, stamp.stat)) {
              await verifyOffThread(ds, mapper !== null ? { fd } : { bytes: buf.buffer as SharedArrayBuffer });
              writeSeal(path, stamp.stat);
            }
            return [loaded, ds];
          }),
        ),
      );
    const loading = Promise.all([loadAll(p.threat, false), loadAll(p.compiled, true)]);
    // The main thread would wait for the reads: start up ICU meanwhile.
    warmTimeZones();
    const [threat, [[compiled, dataset]]] = await loading;
    return new Snapshot(
      p,
      threat.map(([l]) => l),
      compiled,
      dataset as Dataset,
      previous,
    );
  }

  /** Opens the files synchronously (and checks a dataset not sealed on this thread). */
  static openSync(options: ResolvedOptions): Snapshot {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const load = (path: string, check: boolean) =>
      withFileSync(path, (fd, stamp): [Loaded, Dataset | null] => {
        const known = held(options, null, path, stamp.id);
        const loaded = known ?? { path, buf: mapper !== null ? mapper.map(fd) : readRange(fd, sharedBuffer, 0, Number(stamp.stat.size)), stamp: stamp.id, readAt: new Date() };
        if (!check) return [loaded, null];
        const ds = new Dataset(loaded.buf, path);
        if (known === null && !isSealed(path, stamp.stat)) {
          ds.verify();
          writeSeal(path, stamp.stat);
        }
        return [loaded, ds];
      });
    const [compiled, dataset] = load(p.compiled[0], true);
    return new Snapshot(
      p,
      p.threat.map((path) => load(path, false)[0]),
      compiled,
      dataset as Dataset,
      null,
    );
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
  threatObject(version: IpVersion, words: ArrayLike<number>, extra: number): Threat {
    const tree = this.threat;
    if (tree === null) return threatOf(extra);
    const label = tree.find(version, words);
    if (label === 0) return threatOf(extra);
    const key = label * 256 + extra;
    let t = this.threats.get(key);
    if (t === undefined) {
      t = buildThreat({ counts: tree.counts(label), hits: tree.hits(label), flags: tree.flags(label) }, extra, tree.blocklists(label));
      this.threats.set(key, t);
    }
    return t;
  }

  /** The databases the dataset was compiled from, for `info()`. */
  databases(): DatabaseInfo[] {
    return this.dataset.meta.sources.map((s) => ({ ...s, readAt: this.readAt.toISOString() }));
  }
}
