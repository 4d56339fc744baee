/** Writing files that readers may open at any moment. */

import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { alive } from './lock.js';

/** Writes a file so that readers see the old or the new one, never half of one: a temporary file, then a rename. */
export function writeAtomic(path: string, data: Buffer | string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Removes what a writer of `target` killed outright (SIGKILL, a power cut)
 * left beside it: `<target>.<pid>.tmp` (and `.tmp.data`) files whose
 * process no longer runs. A running writer's own are kept.
 */
export function removeLeftTemps(target: string): void {
  const dir = dirname(target);
  const prefix = `${basename(target)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)\.tmp(?:\.data)?$/.exec(name.slice(prefix.length))?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !alive(Number(pid))) rmSync(join(dir, name), { force: true });
  }
}
