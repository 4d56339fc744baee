/**
 * `npm run bench:server`: requests per second of `iprecord serve` against
 * the hand-written baseline (bench/server-baseline.ts: node:http, maxmind,
 * JSON.stringify), both as separate processes on 127.0.0.1, loaded in turn
 * by autocannon (and by wrk when it is installed) in the same run:
 *
 * - `GET /<ip>`: full records, addresses of the benchmark mix in turn
 *   (iprecord with a Business key in the query, as callers of the service send it);
 * - `POST /bulk`: 100 addresses per request (a paid key).
 *
 * iprecord runs as one process and as `--workers 2` (the baseline is one
 * process; the load generator shares the machine's cores), and, when
 * redis-server is installed, as one process keeping its counts in Redis
 * (`--counts redis://`) beside the one keeping them in a file: requests
 * per second and CPU per request of each (and of Redis). A node:http
 * server answering a constant body of a record's size gives the floor of
 * HTTP itself: iprecord's CPU a request above it, less what writing the
 * record takes in-process (`writeJson`), is what its handling costs.
 *
 * Options: --rounds n (default 3), --duration s (per measurement, default 5),
 * --connections n (default 16), --min-ratio x (exit 1 when the median
 * GET ratio is below x).
 */

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { open } from '../src/index.js';
import { compileAsnCsv } from '../src/build.js';
import { defaultAsnSources } from '../src/dataset/defaults.js';
import { addressMix, SEED } from './mix.js';
import { constantBodyServer, cpuMs } from './http-floor.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 3);
const DURATION = arg('duration', 5);
const CONNECTIONS = arg('connections', 16);
const MIN_RATIO = arg('min-ratio', 0);
const BIZ = 'bench-business-key';
const PAID = 'bench-paid-key-01';
/** A key with a quota it never reaches: answered from leases taken from Redis (src/server/shared-counts.ts). */
const QUOTED = 'bench-quota-key-01';

interface Target {
  name: string;
  port: number;
  child: ChildProcess;
  /** Query string added to every path. */
  query: string;
}

/** Set when the benchmark stops its servers. */
let stopping = false;

function start(name: string, port: number, args: string[], ready: RegExp, query: string): Promise<Target> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const check = (chunk: Buffer) => {
      seen += chunk.toString();
      if (ready.test(seen)) resolve({ name, port, child, query });
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code, signal) => {
      reject(new Error(`${name} exited (${code}): ${seen}`));
      // After start-up, a server that stops before the end says so (with what it wrote last).
      if (!stopping) console.warn(`${name} exited (${code ?? signal}): ${seen.slice(-2000)}`);
    });
  });
}

/** The resident size of a server, or NaN (with a warning) when it is no longer running. */
function residentMiB(t: Target): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${t.child.pid}/status`, 'utf8');
  } catch {
    console.warn(`${t.name} is no longer running (exit ${t.child.exitCode ?? t.child.signalCode})`);
    return NaN;
  }
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m === null ? NaN : Math.round(Number(m[1]) / 1024);
}

async function cannon(
  t: Target,
  paths: string[],
  bodies: string[] | null,
  seconds: number,
): Promise<{ rps: number; p99: number; bad: number }> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${t.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      bodies === null
        ? { method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] + t.query }) }
        : {
            method: 'POST',
            setupRequest: (req) => ({
              ...req,
              path: '/bulk' + t.query,
              body: bodies[i++ % bodies.length],
              headers: { 'content-type': 'application/json' },
            }),
          },
    ],
  });
  return { rps: result.requests.average, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts };
}

function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    // wrk prints its version and exits 1.
    return (e as { status?: number }).status === 1;
  }
}

function wrk(t: Target, script: string, seconds: number): number {
  const out = execFileSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, `http://127.0.0.1:${t.port}`], {
    encoding: 'utf8',
    env: { ...process.env, QUERY: t.query },
  });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (/Non-2xx|Socket errors/.test(out))
    console.warn(
      `wrk ${t.name}: ${out
        .split('\n')
        .filter((l) => /Non-2xx|Socket errors/.test(l))
        .join('; ')}`,
    );
  return m === null ? NaN : Number(m[1]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-server-'));
  const engine = await open();
  const dbs = engine.info().databases;
  // What the record's bytes cost in-process, over the addresses the servers answer (median of 5 passes).
  const mixIps = addressMix()
    .filter((ip) => !ip.startsWith('::ffff:'))
    .slice(0, 100_000);
  const passes: number[] = [];
  const target = Buffer.allocUnsafe(16 * 1024);
  const options = { count: '12' };
  let bodyBytes = 0;
  for (let pass = 0; pass < 5; pass++) {
    const t = performance.now();
    for (const ip of mixIps) {
      try {
        bodyBytes = engine.writeJson(ip, target, 0, options);
      } catch {
        // an address without a record: its error is the answer
      }
    }
    passes.push(((performance.now() - t) * 1000) / mixIps.length);
  }
  const jsonBytesUs = median(passes);
  const geo = dbs.filter((d) => d.role === 'geo').map((d) => d.path);
  engine.close();
  // The baseline reads the same ASN ranges as an MMDB, which maxmind npm can open.
  const asn = join(dir, 'asn.mmdb');
  const { files, source } = defaultAsnSources();
  writeFileSync(asn, compileAsnCsv(files, source).buffer);
  // Addresses as callers write them (no IPv4-mapped IPv6).
  const ips = addressMix().filter((ip) => !ip.startsWith('::ffff:'));
  const paths = ips.map((ip) => '/' + ip);
  const bodies: string[] = [];
  for (let k = 0; k + 100 <= ips.length && bodies.length < 500; k += 100) bodies.push(JSON.stringify(ips.slice(k, k + 100)));
  writeFileSync(
    join(dir, 'keys.json'),
    JSON.stringify({
      keys: [
        { key: BIZ, plan: 'business' },
        { key: PAID, plan: 'paid' },
        { key: QUOTED, plan: 'paid', quota: 1e12 },
      ],
    }),
  );
  const script = join(dir, 'paths.lua');
  writeFileSync(
    script,
    `local paths = {${paths
      .slice(0, 20_000)
      .map((p) => JSON.stringify(p))
      .join(',')}}\nlocal q = os.getenv("QUERY") or ""\nlocal n = 0\n` +
      `request = function()\n  n = n % #paths + 1\n  return wrk.format("GET", paths[n] .. q)\nend\n`,
  );

  const base = await start(
    'baseline (node:http + maxmind + JSON.stringify)',
    4301,
    ['--import', 'tsx', 'bench/server-baseline.ts', '4301', geo[0], geo[1], asn],
    /^ready$/m,
    '',
  );
  const ours = await start(
    'iprecord serve',
    4302,
    ['dist/cli.js', 'serve', '--port', '4302', '--keys', join(dir, 'keys.json'), '--access-log', 'off'],
    /listening/,
    `?api-key=${BIZ}`,
  );
  const two = await start(
    'iprecord serve --workers 2',
    4303,
    ['dist/cli.js', 'serve', '--port', '4303', '--workers', '2', '--keys', join(dir, 'keys.json'), '--access-log', 'off'],
    /listening[\s\S]*listening/,
    `?api-key=${BIZ}`,
  );
  // Counts in Redis, when it is installed: a redis-server of this run.
  let redis: ChildProcess | null = null;
  const hasRedis = (() => {
    try {
      execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  // HTTP's own floor: a constant body of a record's size.
  const flat = await start(
    "node:http, a constant body of a record's size",
    4305,
    ['-e', constantBodyServer(bodyBytes, 4305)],
    /^ready$/m,
    '',
  );
  const targets = [base, ours, two];
  if (hasRedis) {
    redis = spawn('redis-server', ['--port', '4310', '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    targets.push(
      await start(
        'iprecord serve --counts redis://',
        4304,
        [
          'dist/cli.js',
          'serve',
          '--port',
          '4304',
          '--keys',
          join(dir, 'keys.json'),
          '--counts',
          'redis://127.0.0.1:4310/0',
          '--access-log',
          'off',
        ],
        /listening/,
        `?api-key=${BIZ}`,
      ),
      // The same counts in Redis, every request (GET and bulk) of a key with a quota: answered from its leases.
      await start(
        'iprecord serve --counts redis://, a key with a quota',
        4306,
        [
          'dist/cli.js',
          'serve',
          '--port',
          '4306',
          '--keys',
          join(dir, 'keys.json'),
          '--counts',
          'redis://127.0.0.1:4310/0',
          '--access-log',
          'off',
        ],
        /listening/,
        `?api-key=${QUOTED}`,
      ),
    );
  }
  const redisAt = hasRedis ? 3 : -1;
  targets.push(flat);
  const flatAt = targets.length - 1;
  const keyed = (t: Target) => (t === base || t.query.includes(QUOTED) ? t : { ...t, query: `?api-key=${PAID}` });
  const useWrk = hasWrk();
  try {
    // Warm-up: caches filled and code optimised in both servers.
    for (const t of targets) {
      await cannon(t, paths, null, 3);
      if (t !== flat) await cannon(keyed(t), paths, bodies, 2);
    }
    const get: number[][] = targets.map(() => []);
    const bulk: number[][] = targets.map(() => []);
    const wrkGet: number[][] = targets.map(() => []);
    const p99: number[][] = targets.map(() => []);
    /** CPU microseconds per GET request of each server (single processes), and of Redis for the Redis target. */
    const cpu: number[][] = targets.map(() => []);
    const redisCpu: number[] = [];
    let bad = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, t] of targets.entries()) {
        const before = [cpuMs(t.child.pid), cpuMs(redis?.pid)];
        const g = await cannon(t, paths, null, DURATION);
        const requests = g.rps * DURATION;
        cpu[k].push(((cpuMs(t.child.pid) - before[0]) * 1000) / requests);
        if (k === redisAt) redisCpu.push(((cpuMs(redis?.pid) - before[1]) * 1000) / requests);
        get[k].push(g.rps);
        p99[k].push(g.p99);
        const b = t === flat ? { rps: NaN, bad: 0 } : await cannon(keyed(t), paths, bodies, DURATION);
        bulk[k].push(b.rps);
        bad += g.bad + b.bad;
        if (useWrk && t !== flat) wrkGet[k].push(wrk(t, script, DURATION));
      }
      const row = (xs: number[][]) => xs.map((x) => Math.round(x[round])).join(' / ');
      console.log(
        `round ${round + 1} (baseline / iprecord / 2 workers${hasRedis ? ' / Redis counts / Redis, a quota key' : ''} / constant body): GET ${row(get)} rps, bulk ${row(bulk)}` +
          (useWrk ? `, wrk GET ${row(wrkGet)}` : ''),
      );
    }
    console.table(
      targets.map((t, k) => ({
        server: t.name,
        'GET /<ip> req/s (autocannon)': Math.round(median(get[k])),
        'GET p99 ms': median(p99[k]),
        ...(useWrk ? { 'GET /<ip> req/s (wrk)': Math.round(median(wrkGet[k])) } : {}),
        'POST /bulk req/s': Math.round(median(bulk[k])),
        'addresses/s in bulk': Math.round(median(bulk[k]) * 100),
        'GET CPU µs/request': k === 2 ? '-' : Math.round(median(cpu[k]) * 10) / 10,
        'resident MiB after (primary)': residentMiB(t),
      })),
    );
    const ratios = get[1].map((r, k) => r / get[0][k]);
    const ratio = median(ratios);
    const vs = (xs: number[][], k: number) => median(xs[k].map((r, i) => r / xs[0][i])).toFixed(2);
    console.log(
      `GET /<ip>: iprecord/baseline = ${ratio.toFixed(2)}x (autocannon, median of ${ROUNDS} rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}); 2 workers ${vs(get, 2)}x`,
    );
    if (useWrk) console.log(`GET /<ip>: iprecord/baseline = ${vs(wrkGet, 1)}x (wrk); 2 workers ${vs(wrkGet, 2)}x`);
    console.log(`POST /bulk: iprecord/baseline = ${vs(bulk, 1)}x; 2 workers ${vs(bulk, 2)}x`);
    if (redisAt > 0) {
      const vsFile = (xs: number[][]) => median(xs[redisAt].map((r, i) => r / xs[1][i])).toFixed(2);
      console.log(
        `counts in Redis / in a file (one process): GET ${vsFile(get)}x requests/s, bulk ${vsFile(bulk)}x; CPU ${Math.round(median(cpu[redisAt]))} µs/request against ${Math.round(median(cpu[1]))}, Redis's own ${median(redisCpu).toFixed(2)} µs/request`,
      );
    }
    const floor = get[1].map((r, i) => r / get[flatAt][i]);
    console.log(
      `GET /<ip>: iprecord / a constant body of a record's size = ${median(floor).toFixed(2)}x (median of ${ROUNDS} rounds: ${floor.map((r) => r.toFixed(2)).join(', ')})`,
    );
    const above = median(cpu[1].map((c, i) => c - cpu[flatAt][i]));
    console.log(
      `GET /<ip> CPU a request: iprecord ${median(cpu[1]).toFixed(1)} µs, a constant ${bodyBytes}-byte body ${median(cpu[flatAt]).toFixed(1)} µs: ${above.toFixed(1)} µs above it, of which the record's bytes (writeJson in-process) ${jsonBytesUs.toFixed(1)} µs; the handling ${(above - jsonBytesUs).toFixed(1)} µs`,
    );
    console.log(
      `${CONNECTIONS} connections, ${DURATION} s per measurement, ${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, address seed ${SEED}`,
    );
    if (bad > 0) console.warn(`${bad} responses were errors or not 2xx`);
    if (MIN_RATIO > 0 && ratio < MIN_RATIO) {
      console.error(`ratio ${ratio.toFixed(2)} is below --min-ratio ${MIN_RATIO}`);
      process.exitCode = 1;
    }
  } finally {
    stopping = true;
    // The servers write their files as they stop: the directory goes once they have.
    await Promise.all(
      targets.map(
        (t) =>
          new Promise((resolve) => {
            if (t.child.exitCode !== null || t.child.signalCode !== null) return resolve(null);
            t.child.once('exit', resolve);
            t.child.kill('SIGTERM');
          }),
      ),
    );
    redis?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

await main();
