/**
 * `npm run bench:server-memory`: memory of `iprecord serve --workers n` for
 * 1 and 4 workers, with database files mapped and read: resident (RSS) and
 * proportional (PSS, from /proc/<pid>/smaps_rollup: shared pages divided
 * among the processes that map them) summed over the primary and its
 * workers, split into files (code, mapped data) and each process's private
 * memory, after each worker has answered 2 000 full records; and the time
 * from starting the command to the first record answered.
 */

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus } from 'node:os';
import { addressMix } from './mix.js';

const PORT = 4340;

function rollup(pid: number): { rss: number; pss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb('Rss'), pss: kb('Pss'), anon: kb('Pss_Anon'), file: kb('Pss_File') };
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** One GET on a new connection (so that the cluster spreads requests over its workers); its status. */
function get(path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: PORT, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

async function measure(workers: number, memory: 'mmap' | 'read', ips: string[]): Promise<Record<string, string | number>> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['dist/cli.js', 'serve', '--port', String(PORT), '--workers', String(workers), '--memory', memory, '--access-log', 'off'],
    { stdio: 'ignore' },
  );
  // Time to the first full record answered.
  while ((await get('/8.8.8.8')) !== 200) await new Promise((r) => setTimeout(r, 5));
  const firstMs = performance.now() - started;
  // Every worker up (each listens once started), then 2 000 records per worker.
  while (children(child.pid!).length < (workers > 1 ? workers : 0)) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 2000 * workers; i += 50)
    await Promise.all(ips.slice(i % ips.length, (i % ips.length) + 50).map((ip) => get('/' + ip)));
  const pids = [child.pid!, ...children(child.pid!)];
  let rss = 0;
  let pss = 0;
  let file = 0;
  const anon: number[] = [];
  for (const pid of pids) {
    const r = rollup(pid);
    rss += r.rss;
    pss += r.pss;
    file += r.file;
    anon.push(r.anon);
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const mib = (b: number) => Math.round(b / 2 ** 20);
  // Private memory (PSS of anonymous pages) of the primary and of a worker (the mean), and the files' share (code, mapped data).
  const workerAnon = workers > 1 ? anon.slice(1).reduce((a, b) => a + b, 0) / workers : anon[0];
  return {
    workers,
    memory,
    processes: pids.length,
    'RSS MiB': mib(rss),
    'PSS MiB': mib(pss),
    'files PSS MiB': mib(file),
    'primary private MiB': workers > 1 ? mib(anon[0]) : '',
    'worker private MiB': mib(workerAnon),
    'first record ms': Math.round(firstMs),
  };
}

const ips = addressMix().filter((ip) => !ip.startsWith('::ffff:'));
const rows = [];
for (const memory of ['mmap', 'read'] as const) for (const workers of [1, 4]) rows.push(await measure(workers, memory, ips));
console.table(rows);
for (const memory of ['mmap', 'read']) {
  const [one, four] = rows.filter((r) => r.memory === memory);
  console.log(
    `${memory}: 4 workers / 1 = ${((four['PSS MiB'] as number) / (one['PSS MiB'] as number)).toFixed(2)}x PSS, ${((four['RSS MiB'] as number) / (one['RSS MiB'] as number)).toFixed(2)}x RSS`,
  );
}
console.log(`${cpus()[0].model}, ${cpus().length} cores, node ${process.version}`);
