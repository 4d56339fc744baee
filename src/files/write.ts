/** Writing files that readers may open at any moment. */

import { renameSync, rmSync, writeFileSync } from 'node:fs';

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
