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
    for (let at = 0; at < buf.length; ) {
      const n = readSync(fd, buf, at, buf.length - at, from + at);
      if (n === 0) throw new Error(`the file ended at byte ${from + at}, before byte ${end} (it changed while it was read)`);
      at += n;
    }
    return buf;
  } finally {
    closeSync(fd);
  }
}
