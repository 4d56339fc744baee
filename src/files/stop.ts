/**
 * What a command leaves behind when a signal stops it (SIGINT, SIGTERM,
 * SIGHUP): nothing. Work that makes something to be removed if it does not
 * finish (a lock, a build directory, temporary files) registers its
 * removal with `untilDone` while it runs; a command that stops on signals
 * (`stopOnSignals`: the CLI's build, update and export) runs them, newest
 * first, then exits with 128 plus the signal's number. In a process that
 * does not (a server, a library user's), registering costs nothing.
 */

import { readFileSync } from 'node:fs';

const cleanups = new Set<() => void>();
const NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
let installed = false;

/** Registers `cleanup` until the returned function is called (the work finished, or cleaned up itself). */
export function untilDone(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
  };
}

/** From now on, SIGINT, SIGTERM and SIGHUP run the registered removals and exit (128 + the signal's number). */
export function stopOnSignals(): void {
  if (installed) return;
  installed = true;
  for (const [signal, n] of Object.entries(NUMBERS)) {
    process.once(signal as NodeJS.Signals, () => {
      for (const cleanup of [...cleanups].reverse()) {
        try {
          cleanup();
        } catch {
          // What cannot be removed stays; the others are still removed.
        }
      }
      process.exit(128 + n);
    });
  }
}

/**
 * Ends a child process at once (SIGKILL) and waits, a second at most,
 * until it has stopped running (a zombie in /proc, or gone), so that what
 * it writes has stopped before a removal registered before it runs. Where
 * there is no /proc it does not wait.
 */
export function killAndWait(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const until = Date.now() + 1000; Date.now() < until; Atomics.wait(pause, 0, 0, 5)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return;
    } catch {
      return;
    }
  }
}
