/**
 * A cluster primary for test/integration/cluster-send.test.ts: forks four
 * workers (this file again), kills them once they are up, and, before
 * this process has read that their channels closed (a synchronous wait
 * until each is dead, so that `isConnected()` still says true), sends each
 * a message: through `tell()` (src/server/cluster.ts), or with `raw` as
 * its argument through `worker.send()` alone. Prints how many
 * `isConnected()` still called connected, then `primary still up` half a
 * second later, and exits 0, unless a send's error stops it first.
 *
 * `raw` shows the hazard by hand (`node --import tsx
 * test/helpers/gone-worker.ts raw`): 29 of 30 runs stopped with EPIPE
 * (2026-12-03). Not every such send fails at once: one queued behind
 * another write fails later, silently, so a run of one worker stopped in
 * about 60 % of runs; the test uses `tell()` only.
 */

import cluster, { type Worker } from 'node:cluster';
import { existsSync, readFileSync } from 'node:fs';
import { tell } from '../../src/server/cluster.js';

const WORKERS = 4;

/** A process's state letter in /proc (`Z`: dead, not yet reaped), or null once it is gone. */
function stateOf(pid: number | undefined): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

if (cluster.isPrimary) {
  const raw = process.argv[2] === 'raw';
  const up: Worker[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const w = cluster.fork();
    w.once('message', () => {
      up.push(w);
      if (up.length < WORKERS) return;
      for (const u of up) u.process.kill('SIGKILL');
      // Held until every worker is dead (a zombie: its end of the channel closed) without reading events, so that this
      // process has not read the closes yet; where there is no /proc, a third of a second.
      const hold = new Int32Array(new SharedArrayBuffer(4));
      if (!existsSync('/proc/self/stat')) Atomics.wait(hold, 0, 0, 300);
      else while (up.some((u) => !['Z', 'X', null].includes(stateOf(u.process.pid)))) Atomics.wait(hold, 0, 0, 5);
      console.log(`connected as far as the primary knows: ${up.filter((u) => u.isConnected()).length} of ${WORKERS}`);
      for (const u of up) {
        if (raw) u.send({ iprecord: 'stop' });
        else tell(u, { iprecord: 'stop' });
      }
      setTimeout(() => {
        console.log('primary still up');
        process.exit(0);
      }, 500);
    });
  }
} else {
  process.send?.('up');
  setInterval(() => undefined, 1000);
}
