/**
 * A dataset file's seal: `<file>.verified`, written beside it once the
 * whole file passed `verify()`, naming the file as it was then (device,
 * inode, size, and the modification and change times to the nanosecond).
 * Opening a file whose seal still names it skips the check (a cold open
 * of the default data to its first record in about 53 ms instead of
 * 0.88 s); any write to
 * the file, a copy or a replacement changes what the seal names, and the
 * next open checks the whole file again. What no write makes (a bit
 * changed by the storage itself) is found by `verify()` and `iprecord
 * info`, which always read every byte.
 */

import { rmSync, type BigIntStats } from 'node:fs';
import { readRegularText } from '../files/read.js';
import { writeAtomic } from '../files/write.js';

const sealPath = (path: string) => `${path}.verified`;

/** What identifies a file's bytes without reading them: a write changes the change time, which no one can set. */
export function identity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** Whether the seal beside `path` names the file `st` describes. */
export function isSealed(path: string, st: BigIntStats): boolean {
  try {
    return readRegularText(sealPath(path)).trim() === identity(st);
  } catch {
    return false;
  }
}

/** Writes the seal of a file that passed `verify()`; false when its directory cannot be written (every open then checks the file). */
export function writeSeal(path: string, st: BigIntStats): boolean {
  try {
    writeAtomic(sealPath(path), identity(st) + '\n');
    return true;
  } catch {
    return false;
  }
}

/** Removes a file's seal: its next open checks it whole. */
export function removeSeal(path: string): void {
  rmSync(sealPath(path), { force: true });
}
