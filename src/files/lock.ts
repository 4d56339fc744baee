/**
 * A lock on a dataset directory, so that two builds or updates into it
 * take turns: a file `.lock` made with O_EXCL, holding the owner's process
 * id. A lock whose process is gone is taken over; otherwise the caller
 * waits, up to `waitMs`, then is told which process holds it.
 */

import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidOptionsError } from '../errors.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a process with this id runs (one of another user counts as running). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `work` holding the lock of `dir`.
 * @throws InvalidOptionsError when another process still holds it after `waitMs`
 */
export async function withDirectoryLock<T>(dir: string, work: () => Promise<T>, waitMs = 600_000, onWait?: (pid: number) => void): Promise<T> {
  const path = join(dir, '.lock');
  const until = Date.now() + waitMs;
  let told = false;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSafe(path));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
        rmSync(path, { force: true });
        continue;
      }
      if (Date.now() >= until) throw new InvalidOptionsError(`Another build or update of ${dir} is running (process ${pid || 'unknown'}, lock file ${path}).`);
      if (!told) onWait?.(pid);
      told = true;
      await sleep(100);
      continue;
    }
    writeSync(fd, String(process.pid));
    closeSync(fd);
    break;
  }
  try {
    return await work();
  } finally {
    rmSync(path, { force: true });
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}
