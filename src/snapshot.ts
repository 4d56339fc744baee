/**
 * One immutable set of opened files: the compiled dataset, and the threat
 * feeds' threat.bin laid over it when a dataset directory has one. What
 * `reload()` swaps as a whole.
 */

import { open as openFile, stat } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readFileRange } from './files/read.js';
import { ensureDataset } from './dataset/locate.js';
import { InvalidDatasetError } from './errors.js';
import type { IpVersion } from './ip/parse.js';
import type { ResolvedOptions, SharedFiles } from './options.js';
import { buildThreat, threatOf } from './record/threat.js';
import { resolveDataset, type Manifest } from './threat/build.js';
import { ThreatTree } from './threat/tree.js';
import { Dataset, type SourceInfo } from './dataset/format.js';
import { RecordObjects } from './dataset/objects.js';
import { memoryMapper, type Mapper } from './native.js';
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

/** What identifies a file's contents without reading them (a replaced file has a new inode; a rewritten one a new time). */
function stampOf(st: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
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

  private constructor(paths: Paths, threat: Loaded[], compiled: Loaded, previous: Snapshot | null) {
    this.files = new Map([...threat, compiled].map((l) => [l.path, l]));
    // A dataset the previous snapshot holds unchanged is not checked again, and keeps what it parsed.
    const same = previous !== null && previous.files.get(compiled.path) === compiled;
    this.dataset = same ? previous.dataset : new Dataset(compiled.buf, compiled.path);
    this.readAt = compiled.readAt;
    this.objects = same ? previous.objects : new RecordObjects(this.dataset);
    this.threat = threat.length === 0 ? null : new ThreatTree(threat[0].buf, threat[0].path);
    this.threatPath = threat.length === 0 ? paths.compiledThreat : threat[0].path;
    this.manifest = paths.manifest;
    this.clock = new ZoneClock();
    this.loadedAt = new Date();
  }

  /**
   * Opens the dataset and threat.bin, reading the files in parallel; a
   * file that `previous` read and that has not changed since is not read
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
    const loading = Promise.all([load(p.threat), load(p.compiled)]);
    // The main thread would wait for the reads: start up ICU meanwhile.
    warmTimeZones();
    const [threat, compiled] = await loading;
    return new Snapshot(p, threat, compiled[0], previous);
  }

  /** Opens the files synchronously. */
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
    return new Snapshot(p, load(p.threat), load(p.compiled)[0], null);
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
