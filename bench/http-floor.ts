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

/**
 * A `node:http` server answering each `GET /<ip>` with the record alone: `writeJson()` of the built engine at `dist`
 * into a buffer, copied into a body of its length (as `iprecord serve` sends it), nothing else (no keys, counts, log
 * or routing); saying `ready` on standard error once it listens. For `node --input-type=module -e`.
 */
export function recordAloneServer(dist: string, port: number): string {
  return `import { open } from ${JSON.stringify(dist)};
const engine = await open();
const scratch = Buffer.allocUnsafeSlow(16 * 1024);
(await import('node:http')).createServer((q, r) => {
  const at = q.url.indexOf('?');
  const n = engine.writeJson(q.url.slice(1, at < 0 ? undefined : at), scratch, 0);
  const body = Buffer.allocUnsafe(n);
  scratch.copy(body, 0, 0, n);
  r.setHeader('Content-Type', 'application/json');
  r.end(body);
}).listen(${port}, '127.0.0.1', () => console.error('ready'));`;
}
