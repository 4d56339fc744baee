/**
 * Whether the files an engine answers from are still the bytes it read.
 * A file replaced by a rename leaves the old bytes mapped and whole; one
 * written in place (`dd conv=notrunc`, an editor saving over it, a copy
 * onto it) changes the pages a memory map answers from at once. Such a
 * write changes the file's size or change time, which no one can set:
 * `changedInPlace` tells it from a stat, without reading the file.
 */

import { renameSync, statSync } from 'node:fs';
import type { Loaded } from './load.js';
import { identity, removeSeal } from './seal.js';

/** Device and inode of an identity (`seal.ts`): which file, whatever its bytes. */
const fileOf = (stamp: string): string => stamp.split(':', 2).join(':');

/** The first of these files that was written in place since it was read (the same file, another size or time), or null. */
export function changedInPlace(files: Iterable<Loaded>): string | null {
  for (const f of files) {
    let now: string;
    try {
      now = identity(statSync(f.path, { bigint: true }));
    } catch {
      // Removed or unreadable: the bytes held are the old file's, whole.
      continue;
    }
    if (now !== f.stamp && fileOf(now) === fileOf(f.stamp)) return f.path;
  }
  return null;
}

/**
 * Moves a damaged dataset aside (`<file>.damaged`, its seal removed), so
 * that the next open compiles it again from its databases; false where it
 * cannot be moved.
 */
export function setAside(path: string): boolean {
  try {
    renameSync(path, `${path}.damaged`);
    removeSeal(path);
    return true;
  } catch {
    return false;
  }
}
