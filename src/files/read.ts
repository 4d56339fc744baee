/** Reading files that another process may replace or change meanwhile. */

import { closeSync, constants, fstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * Bytes `from` to `to` of a file (to its end without `to`), read into a
 * buffer of that size from `alloc`.
 * @throws Error when the file ends before `to` (it changed while it was read)
 */
export function readFileRange(path: string, alloc: (size: number) => Buffer, from = 0, to?: number): Buffer {
  const { fd, stat } = openRegular(path);
  try {
    return readRange(fd, alloc, from, to ?? Number(stat.size));
  } finally {
    closeSync(fd);
  }
}

/** Bytes `from` to `to` of an open file, into a buffer from `alloc`. @throws Error when the file ends before `to` */
export function readRange(fd: number, alloc: (size: number) => Buffer, from: number, to: number): Buffer {
  const buf = alloc(to - from);
  for (let at = 0; at < buf.length;) {
    const n = readSync(fd, buf, at, buf.length - at, from + at);
    if (n === 0) throw new Error(`the file ended at byte ${from + at}, before byte ${to} (it changed while it was read)`);
    at += n;
  }
  return buf;
}

/** Opening without blocking: a FIFO would wait for a writer (O_NONBLOCK is 0 where there is none). */
const READ_NOW = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** @throws Error (code EISDIR, ENOTREG) naming `path` when its `stat` is not of a regular file */
export function mustBeRegular(path: string, stat: { isDirectory(): boolean; isFile(): boolean }): void {
  if (stat.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' });
  if (!stat.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTREG' });
}

/**
 * Opens a regular file for reading, at once whatever the path names: a
 * FIFO, a device, a socket or a directory is refused before any read
 * (a FIFO would block a reader forever).
 * @throws Error (code `EISDIR` for a directory, `ENOTREG` for what else is not a regular file: `mustBeRegular`; else the system's)
 */
export function openRegular(path: string): { fd: number; stat: BigIntStats } {
  const fd = openSync(path, READ_NOW);
  try {
    const stat = fstatSync(fd, { bigint: true });
    mustBeRegular(path, stat);
    return { fd, stat };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * A regular file's bytes, refused before any read when it holds more than
 * `maxBytes` (a file linked to a device or grown by mistake costs nothing).
 * @throws Error as `openRegular`; code `ETOOBIG` for a file over the cap
 */
export function readRegular(path: string, maxBytes = Number.MAX_SAFE_INTEGER): Buffer {
  const { fd, stat } = openRegular(path);
  try {
    if (stat.size > BigInt(maxBytes))
      throw Object.assign(new Error(`${path} holds ${stat.size} bytes, more than the ${maxBytes} it may`), { code: 'ETOOBIG' });
    return readRange(fd, (n) => Buffer.alloc(n), 0, Number(stat.size));
  } finally {
    closeSync(fd);
  }
}

/** A small regular file's text (a pointer, a manifest, a configuration). @throws Error as `readRegular` */
export function readRegularText(path: string, maxBytes?: number): string {
  return readRegular(path, maxBytes).toString('utf8');
}

/**
 * A text without the byte order mark that some editors and Windows tools
 * write first (`JSON.parse` rejects it): configuration files, downloaded
 * feeds, the input of `iprecord enrich`.
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The length of UTF-8's byte order mark (EF BB BF) at the start of `b`: 3, or 0 when it does not start with one. */
export function utf8BomLength(b: Uint8Array): number {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'it does not exist',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTREG: 'it is not a regular file (a device, a FIFO or a socket)',
};

/**
 * Why a file cannot be read, as a user would say it: what the path is,
 * not which system call found out (`it does not exist`, not `ENOENT: no
 * such file or directory, open '...'`); the system's message for the rest.
 */
export function unreadableReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return (code !== undefined && REASONS[code]) || (e as Error).message;
}

/**
 * The lines of a regular file (opened now: a file that cannot be read
 * throws here, not at the first line), read `chunk` bytes (1 MiB) at a time, as UTF-8; a
 * line longer than `maxLine` characters is cut there and the rest of it
 * skipped, so that memory stays within a few MiB whatever the file holds.
 * The file is closed when the lines are read or the loop stops.
 * @throws Error as `openRegular`
 */
export function regularLines(path: string, maxLine = 1 << 16, chunk = 1 << 20): Iterable<string> {
  const { fd } = openRegular(path);
  let used = false;
  return {
    *[Symbol.iterator]() {
      if (used) throw new Error(`the lines of ${path} are read once`);
      used = true;
      try {
        const buf = Buffer.allocUnsafe(chunk);
        const decoder = new StringDecoder('utf8');
        let line = '';
        let cut = false;
        for (;;) {
          const n = readSync(fd, buf, 0, buf.length, null);
          const text = n === 0 ? decoder.end() : decoder.write(buf.subarray(0, n));
          let from = 0;
          for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
            if (!cut) line += text.slice(from, Math.min(nl, from + maxLine - line.length));
            yield line;
            line = '';
            cut = false;
            from = nl + 1;
          }
          if (!cut) {
            line += text.slice(from, from + maxLine - line.length);
            cut = line.length >= maxLine;
          }
          if (n === 0) break;
        }
        if (line !== '') yield line;
      } finally {
        closeSync(fd);
      }
    },
  };
}
