/**
 * A lock on a dataset directory, so that two builds or updates into it
 * take turns: a file `.lock`, linked into place whole (a link fails where
 * one is), holding who made it: a random token, the process id, the boot
 * id and the process's start time.
 *
 * A lock is stale when its maker cannot be running: the machine booted
 * since, no process has its id, the process with its id started at
 * another time (the id was reused), or the id is this process's own and
 * the token is not one this process made (a container restarted: its
 * first process always gets the same id). A lock in the format before
 * tokens (a bare process id) is stale when the process with that id
 * started after the lock was written, the machine booted since, or that
 * process is not Node's (the id names another process). A stale lock is taken over by
 * one process only: the one that creates `.lock.takeover-<token>` with
 * O_EXCL removes it; the others wait for the lock as for any other.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidOptionsError } from '../contract/errors.js';
import { untilDone } from './stop.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A takeover file older than this was left by a process that died while
 * taking over (a takeover takes milliseconds). Its age is read on the file
 * system's clock (its modification time against that of a file this
 * process wrote just before), never against the process's own clock,
 * which may stand elsewhere (set wrong, moved by libfaketime, a file
 * server's clock apart): with a clock years ahead, every live takeover
 * looked stale, was removed by the processes waiting on it, and two
 * processes took the lock over at once.
 */
const TAKEOVER_STALE_MS = 10_000;

/** Who made a lock. */
interface Owner {
  readonly token: string;
  readonly pid: number;
  /** The kernel's boot id (Linux), or ''. */
  readonly boot: string;
  /** The process's start, in clock ticks since boot (Linux), or ''. */
  readonly start: string;
  /** Read from a lock in the format before tokens: a bare process id. */
  readonly bare?: boolean;
}

/** Tokens of the locks this process holds. */
const held = new Set<string>();

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The boot id of the running kernel, or '' where there is none to read. */
const bootId = (): string => readText('/proc/sys/kernel/random/boot_id') ?? '';

/** When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or '' where it cannot be read. */
function startOf(pid: number): string {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return '';
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? '';
}

/** When the machine booted, in ms since the epoch (`btime` of /proc/stat), or null where it cannot be read. */
function bootedAtMs(): number | null {
  const btime = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '');
  return btime === null ? null : Number(btime[1]) * 1000;
}

/** Clock ticks a second of /proc/<pid>/stat: USER_HZ, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * Whether the process with this id began after `writtenMs`, or the machine
 * booted after it: a lock written then cannot be its. False where Linux's
 * /proc cannot tell. `btime` is whole seconds, hence the 2 s of margin.
 */
function startedAfter(pid: number, writtenMs: number): boolean {
  const booted = bootedAtMs();
  if (booted === null) return false;
  if (booted > writtenMs + 2000) return true;
  const start = startOf(pid);
  if (!/^\d+$/.test(start)) return false;
  return booted + (Number(start) / TICKS_PER_SECOND) * 1000 > writtenMs + 2000;
}

/** Whether the process's command line names Node or iprecord (true where /proc cannot tell): only such a process made a lock of the old format. */
function runsNode(pid: number): boolean {
  const cmdline = readText(`/proc/${pid}/cmdline`);
  if (cmdline === null || cmdline === '') return true;
  return cmdline
    .split('\0')
    .slice(0, 2)
    .some((arg) => /node|iprecord/i.test(arg));
}

/** Whether a process with this id runs (one of another user counts as running). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock's owner as written (a bare process id: the format before tokens), or null when unreadable. */
function parseOwner(text: string): Owner | null {
  if (/^\d+$/.test(text)) return { token: '', pid: Number(text), boot: '', start: '', bare: true };
  try {
    const o = JSON.parse(text) as Owner;
    return typeof o.token === 'string' && Number.isInteger(o.pid) ? o : null;
  } catch {
    return null;
  }
}

/** Whether the maker of a lock cannot be running; `writtenMs` is the lock file's modification time. */
function isStale(owner: Owner, writtenMs: number): boolean {
  if (owner.pid === process.pid) return !held.has(owner.token);
  if (owner.boot !== '' && owner.boot !== bootId()) return true;
  if (owner.pid <= 0 || !alive(owner.pid)) return true;
  if (owner.bare === true) return startedAfter(owner.pid, writtenMs) || !runsNode(owner.pid);
  const start = startOf(owner.pid);
  return owner.start !== '' && start !== '' && start !== owner.start;
}

/**
 * Removes a stale lock whose text was `text`, if this process wins the
 * takeover of it; whether the lock may be tried again at once. `now` is a
 * file this process has just written (the file system's clock).
 */
function takeOver(path: string, text: string, owner: Owner, now: string): boolean {
  const marker = `${path}.takeover-${owner.token || owner.pid}`;
  let fd: number;
  try {
    fd = openSync(marker, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // Another process takes it over; unless it died doing so.
    try {
      if (statSync(now).mtimeMs - statSync(marker).mtimeMs > TAKEOVER_STALE_MS) rmSync(marker, { force: true });
    } catch {
      // gone meanwhile
    }
    return false;
  }
  closeSync(fd);
  try {
    // Still the stale lock judged (no other process removes a lock with this token: the marker is this one's).
    if (readText(path) === text) rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(marker, { force: true });
  }
}

/** A file's modification time in ms, or now where it is gone (then the lock is read again). */
function writtenAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

/**
 * Runs `work` holding the lock of `dir`.
 * @throws InvalidOptionsError when another process still holds it after `waitMs`
 */
export async function withDirectoryLock<T>(
  dir: string,
  work: () => Promise<T>,
  waitMs = 600_000,
  onWait?: (pid: number) => void,
): Promise<T> {
  const path = join(dir, '.lock');
  const until = Date.now() + waitMs;
  const owner: Owner = { token: randomBytes(12).toString('hex'), pid: process.pid, boot: bootId(), start: startOf(process.pid) };
  let told = false;
  await acquire();
  // Only this lock: never one that another process made after a takeover.
  const release = () => {
    if (readText(path) === JSON.stringify(owner)) rmSync(path, { force: true });
  };
  const done = untilDone(release);
  try {
    return await work();
  } finally {
    done();
    held.delete(owner.token);
    release();
  }

  async function acquire(): Promise<void> {
    for (;;) {
      // The lock appears whole: written to a file of this process's, then linked as `.lock` (which fails when there is one).
      const mine = `${path}.${owner.token}`;
      try {
        writeFileSync(mine, JSON.stringify(owner));
        held.add(owner.token);
        linkSync(mine, path);
        return;
      } catch (e) {
        held.delete(owner.token);
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const text = readText(path);
        if (text === null) continue; // released meanwhile
        const other = parseOwner(text);
        if (other === null || isStale(other, writtenAt(path))) {
          // An unreadable lock (a write cut short) is as stale as a dead owner's.
          if (takeOver(path, text, other ?? { token: 'unreadable', pid: 0, boot: '', start: '' }, mine)) continue;
        } else if (!told) {
          onWait?.(other.pid);
          told = true;
        }
        if (Date.now() >= until)
          throw new InvalidOptionsError(
            `Another build or update of ${dir} is running (process ${other?.pid ?? 'unknown'}, lock file ${path}).`,
          );
        await sleep(100);
      } finally {
        rmSync(mine, { force: true });
      }
    }
  }
}
