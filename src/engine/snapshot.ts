/**
 * One immutable set of opened files: the compiled dataset (with the threat
 * feeds compiled in, when there are any). What `reload()` swaps as a whole.
 */

import { join } from 'node:path';
import { bytes, bytesSync, withFile, type Loaded, type OpenedFile } from '../dataset/load.js';
import { ensureDataset } from '../dataset/locate.js';
import type { ResolvedOptions, SharedFiles } from './options.js';
import { previousBuild, readManifest, resolveDataset, THREAT_FILE, type Manifest } from '../dataset/store.js';
import { Dataset } from '../dataset/format.js';
import type { DatabaseInfo } from '../dataset/layout.js';
import { RecordObjects } from '../record/objects.js';
import { memoryMapper, type Mapper } from '../platform/native.js';
import { isSealed, removeSeal, writeSeal } from '../dataset/seal.js';
import { setAside } from '../dataset/integrity.js';
import { verifyOffThread } from '../dataset/verify-thread.js';
import { ZoneClock } from '../time/zone.js';

/** The code of the process warning of an engine that was to map its files and reads them (`mapperFor`). */
export const NO_MMAP = 'IPRECORD_NO_MMAP';
/** Whether this process gave that warning (once a process: every engine of it reads alike). */
let toldNoMap = false;

/**
 * The memory mapper when the options ask for maps and the addon is there,
 * else null (files are read). Maps asked for and not made are said once a
 * process, as a process warning (`NO_MMAP`; not with IPRECORD_QUIET=1):
 * each process then holds the whole file (the default data's 270 MB)
 * instead of sharing the kernel's pages.
 */
function mapperFor(options: ResolvedOptions): Mapper | null {
  if (options.memory !== 'mmap') return null;
  const m = memoryMapper();
  if ('map' in m) return m;
  if (!toldNoMap && process.env.IPRECORD_QUIET !== '1') {
    toldNoMap = true;
    process.emitWarning(`${m.reason}: each process holds the whole dataset (memory: 'read' says that choice and is quiet)`, {
      code: NO_MMAP,
    });
  }
  return null;
}

/** How this process holds database files: the mode in use and, when maps were asked for but cannot be made, why. */
export function memoryState(options: ResolvedOptions): { readonly mode: 'mmap' | 'read'; readonly reason?: string } {
  if (options.memory === 'read') return { mode: 'read' };
  const m = memoryMapper();
  return 'map' in m ? { mode: 'mmap' } : { mode: 'read', reason: m.reason };
}

interface Paths {
  /** The manifest of the dataset build in use (read once, so that every file comes from the same build). */
  readonly manifest: Manifest | null;
  /** The compiled dataset file. */
  readonly compiled: string;
  /** threat.bin of the feeds compiled into the dataset, or null. */
  readonly threat: string | null;
  /** Whether `compiled` is compiled from databases (`ensureDataset`): a damaged one can be compiled again. */
  readonly cache: boolean;
  /** The dataset directory's build it comes from, or null. */
  readonly build: string | null;
}

/**
 * The files to open: the dataset file given; else a dataset directory's
 * build's dataset, with its feeds compiled in, unless databases are given;
 * else the one compiled from the databases given or the default data with
 * the threat feeds given (`threat`, else the directory's), compiled now
 * when there is none up to date (the databases alone once, the feeds
 * merged in seconds: `compile/run.ts`).
 */
function resolvePaths(options: ResolvedOptions, buildDir?: string): Paths {
  const build = buildDir ?? (options.data === null ? null : resolveDataset(options.data, options.watch));
  const manifest = readManifest(build);
  if (options.dataset !== null) return { manifest, compiled: options.dataset, threat: null, cache: false, build: null };
  const own = options.geo === null && options.asn === null && options.anonymous.length === 0 && options.threat === null;
  if (build !== null && own && manifest?.dataset !== undefined)
    return { manifest, compiled: join(build, manifest.dataset), threat: join(build, manifest.threat), cache: false, build };
  const threat = options.threat ?? (build === null ? null : join(build, THREAT_FILE));
  const compiled = ensureDataset({
    geo: options.geo,
    asn: options.asn,
    anonymous: options.anonymous,
    ...(threat === null ? {} : { threat }),
  });
  return { manifest, compiled, threat, cache: true, build: null };
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
  return { path, buf: Buffer.from(s.bytes), stamp, readAt: new Date(s.readAt), mapped: false };
}

/** A file just read (or mapped). */
const loaded = (f: OpenedFile, buf: Buffer, mapper: Mapper | null): Loaded => ({
  path: f.path,
  buf,
  stamp: f.stamp,
  readAt: new Date(),
  mapped: mapper !== null,
});

export class Snapshot {
  /** The compiled dataset that answers every lookup. */
  readonly dataset: Dataset;
  /** Its records as objects and as text. */
  readonly objects: RecordObjects;
  /** threat.bin of the feeds compiled into the dataset, or null. */
  readonly threatPath: string | null;
  readonly manifest: Manifest | null;
  readonly clock: ZoneClock;
  readonly loadedAt: Date;
  private readonly readAt: Date;
  /** Every file read, by path (for the next reload). */
  readonly files: ReadonlyMap<string, Loaded>;
  /** Whether the dataset's bytes are its file's pages (a write to the file changes them), not a copy. */
  readonly mapped: boolean;
  /** Whether the dataset is compiled from databases (compiled again when damaged). */
  readonly cache: boolean;
  /** The dataset directory's build whose dataset this is, or null (`previousBuild` finds the one before). */
  readonly build: string | null;

  private constructor(paths: Paths, compiled: Loaded, dataset: Dataset, previous: Snapshot | null) {
    this.files = new Map([[compiled.path, compiled]]);
    this.mapped = compiled.mapped === true;
    this.cache = paths.cache;
    this.build = paths.build;
    this.dataset = dataset;
    this.readAt = compiled.readAt;
    // A dataset the previous snapshot holds unchanged keeps what it parsed.
    this.objects = previous !== null && previous.dataset === dataset ? previous.objects : new RecordObjects(dataset);
    this.threatPath = dataset.meta.threat === undefined ? null : paths.threat;
    this.manifest = paths.manifest;
    this.clock = new ZoneClock(dataset.meta.timeZones);
    this.loadedAt = new Date();
  }

  /**
   * Opens the dataset; a file that `previous` read and that has not
   * changed since is not read again. A dataset not opened before is
   * checked whole (`Dataset.verify()`) on a worker thread unless its seal
   * says it passed unchanged (`dataset/seal.ts`): no answer comes from a
   * file that fails. `build`: this build of the dataset directory rather
   * than the one `current` names.
   */
  static async open(options: ResolvedOptions, previous: Snapshot | null = null, build?: string): Promise<Snapshot> {
    const p = resolvePaths(options, build);
    const mapper = mapperFor(options);
    const [file, dataset] = await withFile(p.compiled, async (f): Promise<[Loaded, Dataset]> => {
      // Bytes held already were checked by the engine that opened them: this one's last snapshot, or the one sharing them.
      const known = held(options, previous, f);
      if (known !== null) return [known, previous?.files.get(f.path) === known ? previous.dataset : new Dataset(known.buf, f.path)];
      const l = loaded(f, await bytes(f, mapper), mapper);
      const ds = new Dataset(l.buf, f.path);
      if (!isSealed(f.path, f.stat)) {
        await verifyOffThread(ds, mapper !== null ? { fd: f.fd } : { bytes: l.buf.buffer as SharedArrayBuffer });
        writeSeal(f.path, f.stat);
      }
      return [l, ds];
    });
    return new Snapshot(p, file, dataset, previous);
  }

  /** Opens the dataset synchronously (and checks one not sealed on this thread). */
  static openSync(options: ResolvedOptions): Snapshot {
    const p = resolvePaths(options);
    const mapper = mapperFor(options);
    const [file, dataset] = withFile(p.compiled, (f): [Loaded, Dataset] => {
      const known = held(options, null, f);
      const l = known ?? loaded(f, bytesSync(f, mapper), mapper);
      const ds = new Dataset(l.buf, f.path);
      if (known === null && !isSealed(f.path, f.stat)) {
        ds.verify();
        writeSeal(f.path, f.stat);
      }
      return [l, ds];
    });
    return new Snapshot(p, file, dataset, null);
  }

  /**
   * Checks the dataset's bytes whole again, as opening a file not sealed
   * does, on a worker thread: a mapped file through its descriptor (unless
   * the path names another file by now), bytes in shared memory as they
   * are, others on this thread.
   * @throws InvalidDatasetError naming the defect
   */
  async verifyAgain(): Promise<void> {
    const l = this.files.get(this.dataset.name);
    if (l?.mapped === true) await withFile(l.path, (f) => (f.stamp === l.stamp ? verifyOffThread(this.dataset, { fd: f.fd }) : undefined));
    else if (l !== undefined && l.buf.buffer instanceof SharedArrayBuffer) await verifyOffThread(this.dataset, { bytes: l.buf.buffer });
    else this.dataset.verify();
  }

  /**
   * Good data in place of this snapshot, whose dataset file `path` failed
   * its check: compiled again from its databases (the file set aside as
   * `<file>.damaged`), or the dataset directory's build before this one;
   * null when there is none or it fails too. The damaged file loses its
   * seal either way: its next open checks it whole.
   */
  async goodCopy(options: ResolvedOptions, path: string): Promise<Snapshot | null> {
    removeSeal(path);
    try {
      if (this.cache) return setAside(path) ? await Snapshot.open(options, null) : null;
      const before = this.build !== null && options.data !== null ? previousBuild(options.data, this.build) : null;
      return before === null ? null : await Snapshot.open(options, null, before);
    } catch {
      return null;
    }
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

  /** The databases the dataset was compiled from, for `info()`. */
  databases(): DatabaseInfo[] {
    return this.dataset.meta.sources.map((s) => ({ ...s, readAt: this.readAt.toISOString() }));
  }
}
