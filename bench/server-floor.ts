/**
 * `GET /<ip>` of `iprecord serve` against HTTP's own floor: a `node:http`
 * server answering a constant body of a record's size; and between them a
 * `node:http` server answering with the record alone (`writeJson()` a
 * request, nothing else: what the record costs a server). All run the whole
 * time, each in its own process; autocannon (16 connections) loads them
 * in turn, in slices of a few seconds, alternating which goes first, so
 * that all meet the machine's phases alike (bench/server.ts measures its
 * servers one after another, a minute apart). Prints the median of the
 * slices' ratios of requests per second and of CPU a request (the constant
 * body's over iprecord's, and over the record alone's), and each server's
 * CPU a request.
 * iprecord runs with its default access log to standard output (a pipe
 * this process reads, counting the lines against the requests answered),
 * or with `--access-log off`.
 *
 *     npm run build && node --import tsx bench/server-floor.ts [--slices 12] [--seconds 3] [--access-log off]
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { addressMix } from './mix.js';
import { pathToFileURL } from 'node:url';
import { constantBodyServer, cpuMs, recordAloneServer } from './http-floor.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const SLICES = arg('slices', 12);
const SECONDS = arg('seconds', 3);
const KEY = 'bench-business-key';
const LOG = !process.argv.includes('off');

const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-floor-'));
writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys: [{ key: KEY, plan: 'business' }] }));
const ips = addressMix().filter((ip) => !ip.startsWith('::ffff:'));

/** A server's process, started and listening. */
function start(args: string[], port: number, log = false): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', log ? 'pipe' : 'ignore', 'pipe'] });
  if (log)
    child.stdout!.on('data', (c: Buffer) => {
      for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) logged++;
    });
  return new Promise((resolve, reject) => {
    let said = '';
    child.stderr!.on('data', (c: Buffer) => {
      said += c.toString();
      if (/listening|^ready$/m.test(said)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the server on port ${port} exited (${code}): ${said}`)));
  });
}

let next = 0;
/** Lines of iprecord's access log read, and requests it answered. */
let logged = 0;
let answered = 0;
/** Requests per second and CPU µs a request of one server over `seconds`. */
async function load(port: number, query: string, child: ChildProcess, seconds: number): Promise<{ rps: number; cpu: number }> {
  const before = cpuMs(child.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 16,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/${ips[next++ % ips.length]}${query}` }) }],
  });
  if (r.non2xx + r.errors > 0) throw new Error(`port ${port}: ${r.non2xx} answers not 2xx, ${r.errors} errors`);
  if (child === ours) answered += r.requests.total;
  return { rps: r.requests.total / seconds, cpu: ((cpuMs(child.pid) - before) * 1000) / r.requests.total };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ours = await start(
  ['dist/cli.js', 'serve', '--port', '4321', '--keys', join(dir, 'keys.json'), ...(LOG ? [] : ['--access-log', 'off']), '--quiet'],
  4321,
  LOG,
);
// The size of a record's body, as the server answers it.
const size = (await (await fetch(`http://127.0.0.1:4321/8.8.8.8?api-key=${KEY}`)).arrayBuffer()).byteLength;
const floor = await start(['-e', constantBodyServer(size, 4322)], 4322);
const alone = await start(['--input-type=module', '-e', recordAloneServer(pathToFileURL('dist/index.js').href, 4323)], 4323);
try {
  const servers = [
    {
      name: `iprecord serve, access log ${LOG ? 'to standard output (a pipe)' : 'off'}`,
      port: 4321,
      query: `?api-key=${KEY}`,
      child: ours,
    },
    { name: `node:http, a constant ${size}-byte body`, port: 4322, query: '', child: floor },
    { name: 'node:http, the record alone (writeJson() a request)', port: 4323, query: '', child: alone },
  ];
  for (const s of servers) await load(s.port, s.query, s.child, 1);
  const got = servers.map(() => ({ rps: [] as number[], cpu: [] as number[] }));
  for (let slice = 0; slice < SLICES; slice++) {
    for (const k of slice % 2 === 0 ? [0, 1, 2] : [2, 1, 0]) {
      const s = servers[k];
      const r = await load(s.port, s.query, s.child, SECONDS);
      got[k].rps.push(r.rps);
      got[k].cpu.push(r.cpu);
    }
  }
  const ratios = got[0].rps.map((r, i) => r / got[1].rps[i]);
  servers.forEach((s, k) =>
    console.log(`${s.name}: ${Math.round(median(got[k].rps))} requests/s, ${median(got[k].cpu).toFixed(1)} µs of CPU a request`),
  );
  console.log(
    `iprecord / the constant body: ${median(ratios).toFixed(2)}x (median of ${SLICES} slices of ${SECONDS} s: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
  );
  console.log(
    `CPU a request above the constant body: ${median(got[0].cpu.map((c, i) => c - got[1].cpu[i])).toFixed(1)} µs (median of the slices)`,
  );
  // By CPU a request (what a busy server's cores buy): the constant body's over iprecord's, slice by slice.
  const byCpu = got[1].cpu.map((c, i) => c / got[0].cpu[i]);
  console.log(
    `by CPU a request, the constant body's / iprecord's: ${median(byCpu).toFixed(2)}x (${byCpu.map((r) => r.toFixed(2)).join(', ')})`,
  );
  const alonePerCpu = got[1].cpu.map((c, i) => c / got[2].cpu[i]);
  console.log(
    `by CPU a request, the constant body's / the record alone's: ${median(alonePerCpu).toFixed(2)}x (${alonePerCpu.map((r) => r.toFixed(2)).join(', ')})`,
  );
  console.log(`${cpus()[0].model}, ${cpus().length} cores, node ${process.version}`);
} finally {
  const exit = new Promise((resolve) => ours.once('exit', resolve));
  ours.kill('SIGTERM');
  floor.kill('SIGTERM');
  alone.kill('SIGTERM');
  await exit;
  // Autocannon counts the answers it read; the one fetch above adds a line.
  if (LOG) console.log(`access log: ${logged} lines for ${answered + 1} requests answered (${logged - answered - 1} apart)`);
  rmSync(dir, { recursive: true, force: true });
}
