/**
 * A dataset file's seal: `<file>.verified`, written beside it once the
 * whole file passed `verify()`, naming the file as it was then (device,
 * inode, size, and the modification and change times to the nanosecond).
 * Opening a file whose seal still names it skips the check, in any
 * runtime: Deno reads the modification time to the millisecond and the
 * change time to the second, so a time read at a coarser unit is compared
 * at that unit (`sameTime`), and a seal written by Node holds in Deno and
 * the other way round (a cold open
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
  let sealed: string[];
  try {
    sealed = readRegularText(sealPath(path)).trim().split(':');
  } catch {
    return false;
  }
  const now = identity(st).split(':');
  if (sealed.length !== 5 || !sealed.every((n) => /^\d+$/.test(n)) || sealed.slice(0, 3).join(':') !== now.slice(0, 3).join(':'))
    return false;
  return sameTime(BigInt(sealed[3]), st.mtimeNs, 1_000_000n) && sameTime(BigInt(sealed[4]), st.ctimeNs, 1_000_000_000n);
}

/**
 * Two readings of one time: equal to the nanosecond, or, where either was
 * read only to `unit` (a whole number of it: Deno's millisecond
 * modification time, its second change time), equal to that unit.
 */
export function sameTime(a: bigint, b: bigint, unit: bigint): boolean {
  if (a === b) return true;
  return (a % unit === 0n || b % unit === 0n) && a / unit === b / unit;
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
