/** What the server benchmarks share: a process's CPU time, and HTTP's own floor (a constant body) as a script for `node -e`. */

import { readFileSync } from 'node:fs';

/** CPU time of a process so far (user and system), in milliseconds; NaN when it is gone. */
export function cpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of the line (11 and 12 after the name), in ticks of 10 ms.
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/** A `node:http` server answering a constant JSON body of `bytes` bytes on `port`, saying `ready` on standard error once it listens. */
export function constantBodyServer(bytes: number, port: number): string {
  return `const body = Buffer.alloc(${bytes}, 97); require('node:http').createServer((q, r) => { r.setHeader('Content-Type', 'application/json'); r.end(body); }).listen(${port}, '127.0.0.1', () => console.error('ready'));`;
}
