/**
 * iprecord in every JavaScript runtime it supports: Node 22 and 24 beside
 * this process's Node, Bun and Deno, from the versions the npm registry
 * serves (`test/runtimes/package.json`, installed by `.ci/run` with `npm ci
 * --prefix test/runtimes`): `node --import tsx test/engines/runtimes.ts`.
 * A runtime not installed is skipped with the command that installs it;
 * IPRECORD_REQUIRE_RUNTIMES=1 (CI) makes that a failure.
 *
 * Each runtime runs `test/runtimes/smoke.mjs` over the built package and
 * the default data: the README's first lookup, open(), lookup(), select(),
 * lookupJson(), writeJson(), reload() over 3 000 random addresses of both
 * families and `fixtures/logs/address-forms.txt`, every answer equal to
 * this process's (less the clock); the file mapped (`info().memory`), its
 * resident memory after open and after 100 000 lookups; and the dataset's
 * seal left as it was (no runtime checks the whole file again because
 * another opened it: the seal compares what every runtime reads alike).
 * Then `iprecord serve` in that runtime answers the service's API (a
 * record, a field, the threat object, a bulk POST, a refused key) as this
 * process's engine does, and stops on SIGTERM. Last, docs/runtimes.md's
 * worked example, as written there, in a project that installed iprecord:
 * each of its commands in each runtime prints what Node prints, and what
 * the page says. Prints a line a runtime; exits 1 on a difference.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { open } from '../../src/index.js';
import { ROOT, seed, xorshift32 } from '../helpers/env.js';
import { runtimeAddresses } from '../helpers/recipes.js';
import { until } from '../helpers/wait.js';

const INSTALLED = join(ROOT, 'test', 'runtimes', 'node_modules');
const INSTALL = 'npm ci --prefix test/runtimes';
/** Each runtime: the command that runs a script (before the script's path). */
const RUNTIMES: { name: string; command: string[] }[] = [
  { name: 'Node 22', command: [join(INSTALLED, 'node22', 'bin', 'node')] },
  { name: 'Node 24', command: [join(INSTALLED, 'node24', 'bin', 'node')] },
  { name: 'Bun', command: [join(INSTALLED, '.bin', 'bun')] },
  { name: 'Deno', command: [join(INSTALLED, '.bin', 'deno'), 'run', '-A'] },
];
const DIST = join(ROOT, 'dist');
const KEY = 'runtimes-key-0001';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-runtimes-'));
let failed = false;
const fail = (what: string) => {
  failed = true;
  console.log(`runtimes: FAIL ${what}`);
};

/** A server's answer as an engine's: less `count`, which the server counts. */
const uncounted = (r: unknown): unknown => {
  if (r === null || typeof r !== 'object' || !('count' in r)) return r;
  const { count: _, ...rest } = r as Record<string, unknown>;
  return rest;
};

/** A record as compared across runtimes: the clock of its time zone is read at each call. */
const clockless = (r: unknown): unknown => {
  if (r === null || typeof r !== 'object' || !('time_zone' in r)) return r;
  const record = r as { time_zone: Record<string, unknown> | null };
  if (record.time_zone === null) return r;
  const { current_time: _, ...zone } = record.time_zone;
  return { ...record, time_zone: zone };
};

/** A port free on loopback now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** docs/runtimes.md's example file and commands, run in a project with iprecord in its node_modules. */
function example(): void {
  const doc = readFileSync(join(ROOT, 'docs', 'runtimes.md'), 'utf8');
  const block = (marker: string) => {
    const m = new RegExp('```\\w*\\n(?://|#) ' + marker + '\\n([\\s\\S]*?)```').exec(doc);
    if (m === null) throw new Error(`docs/runtimes.md has no block ${marker}`);
    return m[1];
  };
  const project = join(dir, 'project');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'iprecord'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', dependencies: { iprecord: '*' } }));
  writeFileSync(join(project, 'example.mjs'), block('example: runtimes'));
  const said = /Each prints `([^`]+)`/.exec(doc)?.[1];
  const programs: Record<string, string[]> = {
    node: [process.execPath, ...RUNTIMES.filter((r) => r.name.startsWith('Node')).map((r) => r.command[0])],
    bun: [RUNTIMES.find((r) => r.name === 'Bun')!.command[0]],
    deno: [RUNTIMES.find((r) => r.name === 'Deno')!.command[0]],
  };
  const lines = block('commands: runtimes').trim().split('\n');
  let ran = 0;
  for (const line of lines) {
    const [program, ...args] = line.split(' ');
    for (const binary of programs[program] ?? [program]) {
      if (!existsSync(binary)) continue;
      const r = spawnSync(binary, args, { cwd: project, encoding: 'utf8', env: { ...process.env, IPRECORD_QUIET: '1' } });
      ran++;
      if (r.status !== 0 || r.stdout.trim() !== said)
        fail(
          `docs/runtimes.md: ${line} with ${binary}: exit ${r.status}, printed ${JSON.stringify(r.stdout.trim())} (the page says ${said}): ${r.stderr.slice(-500)}`,
        );
    }
  }
  console.log(`runtimes: docs/runtimes.md's example: ${lines.length} commands run ${ran} times, each printed ${JSON.stringify(said)}`);
}

try {
  const engine = await open();
  const sealPath = `${engine.info().dataset.path}.verified`;
  const next = xorshift32(seed());
  const ips = runtimeAddresses(next);
  const addresses = join(dir, 'addresses.txt');
  writeFileSync(addresses, ips.join('\n') + '\n');
  const answer = <T>(f: () => T): T | { error: string } => {
    try {
      return f();
    } catch (e) {
      return { error: (e as { code?: string }).code ?? (e as Error).message };
    }
  };
  const pick = engine.select(['country_code', 'region_code', 'asn.asn', 'asn.route', 'threat.is_tor', 'threat.scores.trust_score']);
  const want = ips.map((ip) => clockless(answer(() => engine.lookup(ip))));
  const wantSelected = ips.map((ip) => answer(() => pick(ip)));
  const keys = join(dir, 'keys.json');
  writeFileSync(keys, JSON.stringify({ keys: [{ key: KEY, plan: 'business' }] }));

  for (const rt of RUNTIMES) {
    if (!existsSync(rt.command[0])) {
      const why = `${rt.name}: not installed (${INSTALL})`;
      if (process.env.IPRECORD_REQUIRE_RUNTIMES === '1') fail(why);
      else console.log(`runtimes: skip ${why}`);
      continue;
    }
    const sealBefore = existsSync(sealPath) ? statSync(sealPath, { bigint: true }) : null;
    const run = spawnSync(rt.command[0], [...rt.command.slice(1), join(ROOT, 'test', 'runtimes', 'smoke.mjs'), DIST, addresses], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, IPRECORD_QUIET: '1' },
    });
    const line = run.stdout.trim().split('\n').pop() ?? '';
    if (run.status !== 0 || !line.startsWith('{')) {
      fail(`${rt.name}: smoke.mjs exited ${run.status}: ${run.stderr.slice(-2000)}`);
      continue;
    }
    const got = JSON.parse(line) as {
      runtime: string;
      firstMs: number;
      first: unknown;
      memory: { mode: string; reason?: string };
      rssOpen: { rss: number; anon: number; file: number };
      rssAfter: { rss: number; anon: number; file: number };
      answered: number;
      records: unknown[];
      selected: unknown[];
      writeDiffers: number;
    };
    const differing = got.records.map(clockless).flatMap((r, i) => (isDeepStrictEqual(r, want[i]) ? [] : [i]));
    const differ = differing.length;
    if (differ > 0)
      console.log(
        `runtimes: ${got.runtime}: the first different, ${ips[differing[0]]}: ${JSON.stringify(clockless(got.records[differing[0]]))} against ${JSON.stringify(want[differing[0]])}`,
      );
    const selectDiffer = got.selected.filter((r, i) => !isDeepStrictEqual(r, wantSelected[i])).length;
    const sealAfter = existsSync(sealPath) ? statSync(sealPath, { bigint: true }) : null;
    const resealed =
      sealBefore === null || sealAfter === null || sealBefore.ino !== sealAfter.ino || sealBefore.mtimeNs !== sealAfter.mtimeNs;
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `runtimes: ${got.runtime}: ${ips.length} addresses, ${differ} records and ${selectDiffer} selections different, writeJson ${got.writeDiffers} different; ` +
        `first lookup ${got.firstMs.toFixed(0)} ms, memory ${got.memory.mode}${got.memory.reason === undefined ? '' : ` (${got.memory.reason})`}, ` +
        `resident after open ${mib(got.rssOpen.rss)} (${mib(got.rssOpen.anon)} anonymous), after 100 000 lookups ${mib(got.rssAfter.rss)} (${mib(got.rssAfter.anon)} anonymous, ${mib(got.rssAfter.file)} of the mapped file); ` +
        `seal ${resealed ? 'written again' : 'kept'}`,
    );
    if (differ + selectDiffer + got.writeDiffers > 0) fail(`${rt.name}: answers differ from Node ${process.versions.node}'s`);
    if (!isDeepStrictEqual(clockless(got.first), want[0])) fail(`${rt.name}: the README's first lookup differs`);
    if (got.answered < 50_000) fail(`${rt.name}: ${got.answered} of 100 000 walked addresses answered`);
    if (got.memory.mode !== 'mmap' && process.env.IPRECORD_REQUIRE_MMAP === '1') fail(`${rt.name}: the dataset is not mapped`);
    if (resealed && sealBefore !== null) fail(`${rt.name}: the dataset was checked whole again (its seal was written again)`);

    // The server, in that runtime.
    const port = await freePort();
    const server = spawn(
      rt.command[0],
      [...rt.command.slice(1), join(DIST, 'cli.js'), 'serve', '--host', '127.0.0.1', '--port', String(port), '--keys', keys],
      { env: { ...process.env, IPRECORD_QUIET: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    server.stderr.on('data', (d) => (err += d));
    server.stdout.resume();
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    try {
      await until(async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok === true, `${rt.name}: iprecord serve answering`);
      const get = async (path: string, init?: RequestInit) => {
        const r = await fetch(`${base}${path}`, init);
        return { status: r.status, body: await r.text() };
      };
      const checks: [string, { status: number; body: string }, number, unknown][] = [
        ['GET /8.8.8.8', await get(`/8.8.8.8?api-key=${KEY}`), 200, uncounted(clockless(engine.lookup('8.8.8.8')))],
        ['GET /2001:4860:4860::8888/country_name', await get(`/2001:4860:4860::8888/country_name?api-key=${KEY}`), 200, null],
        ['GET /1.1.1.1/threat', await get(`/1.1.1.1/threat?api-key=${KEY}`), 200, engine.threat('1.1.1.1')],
        [
          'POST /bulk',
          await get(`/bulk?api-key=${KEY}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(['8.8.8.8', '10.0.0.1']),
          }),
          200,
          // A bad address as the service answers it in a bulk answer: its message alone.
          engine.bulk(['8.8.8.8', '10.0.0.1']).map((r) => ('message' in r ? { message: r.message } : uncounted(clockless(r)))),
        ],
        ['GET /8.8.8.8 with a wrong key', await get('/8.8.8.8?api-key=not-a-key-0001'), 401, null],
      ];
      const wrong: string[] = [];
      for (const [what, r, status, body] of checks) {
        const parsed = answer(() => JSON.parse(r.body));
        // A string field is text/plain (docs/server.md); the others JSON.
        const same = what.endsWith('country_name')
          ? r.body === engine.field('2001:4860:4860::8888', 'country_name')
          : body === null ||
            isDeepStrictEqual(Array.isArray(parsed) ? parsed.map((p) => uncounted(clockless(p))) : uncounted(clockless(parsed)), body);
        if (r.status !== status || !same) wrong.push(`${what}: ${r.status} ${r.body.slice(0, 200)}`);
      }
      server.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
      console.log(
        `runtimes: ${got.runtime}: iprecord serve: ${checks.length - wrong.length} of ${checks.length} answers as this engine's, SIGTERM: exit ${code}`,
      );
      for (const w of wrong) fail(`${rt.name}: serve: ${w}`);
      if (code !== 0) fail(`${rt.name}: serve did not stop cleanly on SIGTERM (${code}): ${err.slice(-500)}`);
    } finally {
      server.kill('SIGKILL');
    }
  }
  engine.close();
  example();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exit(1);
