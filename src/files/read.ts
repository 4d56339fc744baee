/** Reading files that another process may replace or change meanwhile. */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Bytes `from` to `to` of a file (to its end without `to`), read into a
 * buffer of that size from `alloc`.
 * @throws Error when the file ends before `to` (it changed while it was read)
 */
export function readFileRange(path: string, alloc: (size: number) => Buffer, from = 0, to?: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const end = to ?? fstatSync(fd).size;
    const buf = alloc(end - from);
    for (let at = 0; at < buf.length;) {
      const n = readSync(fd, buf, at, buf.length - at, from + at);
      if (n === 0) throw new Error(`the file ended at byte ${from + at}, before byte ${end} (it changed while it was read)`);
      at += n;
    }
    return buf;
  } finally {
    closeSync(fd);
  }
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
