/**
 * Opening the files of a snapshot: a regular file by path (a FIFO or a
 * device is refused at once), what identifies its bytes (`dataset/seal.ts`),
 * and its bytes mapped or read into shared memory. Errors name the file.
 */

import { closeSync, read as readCallback, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';
import { InvalidDatasetError } from '../contract/errors.js';
import { openRegular, readRange } from '../files/read.js';
import type { Mapper } from '../platform/native.js';
import { identity } from './seal.js';

/** A file of a snapshot, as held. */
export interface Loaded {
  readonly path: string;
  readonly buf: Buffer;
  /** What identified the file when it was read (`identity`): a reload reuses the bytes while it matches. */
  readonly stamp: string;
  readonly readAt: Date;
  /** Whether `buf` is the file's pages (a memory map), not a copy. */
  readonly mapped?: boolean;
}

/** A file opened to be loaded. */
export interface OpenedFile {
  readonly path: string;
  readonly fd: number;
  readonly stat: BigIntStats;
  /** `identity(stat)`. */
  readonly stamp: string;
}

/**
 * Runs `work` on a regular file opened by path, closing it after (after
 * the promise settles when `work` returns one).
 * @throws InvalidDatasetError naming the file
 */
export function withFile<T>(path: string, work: (file: OpenedFile) => T): T {
  let file: OpenedFile;
  try {
    const { fd, stat } = openRegular(path);
    file = { path, fd, stat, stamp: identity(stat) };
  } catch (e) {
    return wrapRead(path, e);
  }
  let result: T;
  try {
    result = work(file);
  } catch (e) {
    closeSync(file.fd);
    return wrapRead(path, e);
  }
  if (!(result instanceof Promise)) {
    closeSync(file.fd);
    return result;
  }
  return result.then(
    (v: unknown) => {
      closeSync(file.fd);
      return v;
    },
    (e: unknown) => {
      closeSync(file.fd);
      return wrapRead(path, e);
    },
  ) as T;
}

/** The file's bytes, mapped (with `mapper`) or read into shared memory. */
export function bytesSync(file: OpenedFile, mapper: Mapper | null): Buffer {
  return mapper !== null ? mapper.map(file.fd) : readRange(file.fd, sharedBuffer, 0, Number(file.stat.size));
}

/** `bytesSync`, reading in parallel (`readWhole`). */
export async function bytes(file: OpenedFile, mapper: Mapper | null): Promise<Buffer> {
  return mapper !== null ? mapper.map(file.fd) : readWhole(file.fd, Number(file.stat.size));
}

/** An error naming the file (an InvalidDatasetError as it is). */
export function wrapRead(path: string, cause: unknown): never {
  if (cause instanceof InvalidDatasetError) throw cause;
  throw new InvalidDatasetError(`Cannot read database ${path}: ${(cause as Error).message}`, { cause });
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
export async function readWhole(fd: number, size: number): Promise<Buffer> {
  const buf = sharedBuffer(size);
  const reads: Promise<unknown>[] = [];
  const readPart = async (from: number, to: number): Promise<void> => {
    while (from < to) {
      const { bytesRead } = await readAsync(fd, buf, from, to - from, from);
      if (bytesRead === 0) throw new Error(`the file ended at byte ${from} of ${size} (it changed while it was read)`);
      from += bytesRead;
    }
  };
  for (let at = 0; at < size; at += READ_CHUNK) reads.push(readPart(at, Math.min(size, at + READ_CHUNK)));
  await Promise.all(reads);
  return buf;
}

/**
 * A buffer over fresh shared memory: what an engine reads can be handed to
 * worker threads (`share()`) without a copy.
 */
export function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}
