/**
 * `iprecord/bytes` where it is meant to run: Cloudflare's `workerd` (from
 * the npm registry, `test/runtimes/package.json`) and headless Chromium
 * (Debian's `chromium`), on loopback: `npm run build && node --import tsx
 * test/engines/edge.ts`. Each block of docs/runtimes.md's Workers and
 * browsers section runs as written, in a project with iprecord in its
 * node_modules (ports made free ones): the lite export of the default
 * data, the worker under `workerd serve`, the page served by `python3 -m
 * http.server`. Then 3 000 addresses (random of both families, private
 * ones, the forms logs hold) are answered by the worker over HTTP and by a
 * page in Chromium, and compared with what Node answers from the same
 * bytes. A runtime not installed is skipped with how to install it;
 * IPRECORD_REQUIRE_RUNTIMES=1 (CI) makes that a failure. Prints a line a
 * runtime; exits 1 on a difference.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ROOT, seed, xorshift32 } from '../helpers/env.js';
import { docBlock, runtimeAddresses } from '../helpers/recipes.js';
import { until } from '../helpers/wait.js';
import type * as BytesEntry from '../../src/bytes.js';

const WORKERD = join(ROOT, 'test', 'runtimes', 'node_modules', '.bin', 'workerd');
const CHROMIUM = '/usr/bin/chromium';
const DOC = 'runtimes.md';
const dir = mkdtempSync(join(tmpdir(), 'iprecord-edge-'));
const project = join(dir, 'project');
let failed = false;
const fail = (what: string) => {
  failed = true;
  console.log(`edge: FAIL ${what}`);
};
const skip = (what: string) => {
  if (process.env.IPRECORD_REQUIRE_RUNTIMES === '1') fail(`${what} is not installed`);
  else console.log(`edge: skip ${what}: not installed`);
};

/** A port free on loopback now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** A doc's command line as this machine runs it: `npx iprecord` is the built CLI, `npx workerd` the installed one. */
function command(line: string): [string, string[]] {
  const [program, ...args] = line.trim().split(/\s+/);
  if (program === 'npx' && args[0] === 'iprecord') return [process.execPath, [join(ROOT, 'dist', 'cli.js'), ...args.slice(1)]];
  if (program === 'npx' && args[0] === 'workerd') return [WORKERD, args.slice(1)];
  return [program, args];
}

/** Runs a doc's commands; with `server`, the last starts a server (its arguments as `server` makes them), left running: its process. */
function runCommands(block: string, server?: (args: string[]) => string[]): ChildProcess | null {
  const lines = block.trim().split('\n');
  for (const line of server === undefined ? lines : lines.slice(0, -1)) {
    const [program, args] = command(line);
    const r = spawnSync(program, args, { cwd: project, encoding: 'utf8', env: { ...process.env, IPRECORD_QUIET: '1' } });
    if (r.status !== 0) throw new Error(`docs/${DOC}: ${line}: exit ${r.status}: ${r.stderr.slice(-500)}`);
  }
  if (server === undefined) return null;
  const [program, args] = command(lines[lines.length - 1]);
  return spawn(program, server(args), { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, IPRECORD_QUIET: '1' } });
}

/** An answer as compared: the worker's and the page's engines count their own lookups. */
const uncounted = (r: unknown): unknown => {
  if (r === null || typeof r !== 'object' || !('count' in r)) return r;
  const { count: _, ...rest } = r as Record<string, unknown>;
  return rest;
};

/** Which answers differ from Node's; prints the first. */
function compare(runtime: string, ips: readonly string[], got: readonly unknown[], want: readonly unknown[]): number {
  const differing = ips.flatMap((_ip, i) => (isDeepStrictEqual(uncounted(got[i]), uncounted(want[i])) ? [] : [i]));
  if (differing.length > 0)
    console.log(
      `edge: ${runtime}: the first different, ${ips[differing[0]]}: ${JSON.stringify(got[differing[0]])} against ${JSON.stringify(want[differing[0]])}`,
    );
  return differing.length;
}

/** Stops a server the test started. */
function stop(p: ChildProcess | null): void {
  if (p !== null && p.exitCode === null) p.kill('SIGKILL');
}

let worker: ChildProcess | null = null;
let page: ChildProcess | null = null;
try {
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'iprecord'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', dependencies: { iprecord: '*' } }));
  // The lite export, as the doc writes it.
  const started = Date.now();
  runCommands(docBlock(DOC, 'commands: lite'));
  const lite = readFileSync(join(project, 'edge.iprd'));
  console.log(
    `edge: the lite dataset of the default data: ${lite.length} bytes, ${gzipSync(lite).length} gzipped (node:zlib, level 6), in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const { openBytes } = (await import(pathToFileURL(join(ROOT, 'dist', 'bytes.js')).href)) as typeof BytesEntry;
  const engine = openBytes(new Uint8Array(lite.buffer, lite.byteOffset, lite.length), { name: 'edge.iprd' });
  const ips = runtimeAddresses(xorshift32(seed()));
  const want = ips.map((ip) => engine.tryLookup(ip));
  writeFileSync(join(project, 'addresses.json'), JSON.stringify(ips));

  if (!existsSync(WORKERD)) skip('workerd (npm ci --prefix test/runtimes)');
  else {
    writeFileSync(join(project, 'worker.js'), docBlock(DOC, 'example: worker'));
    writeFileSync(join(project, 'config.capnp'), docBlock(DOC, 'example: workerd'));
    const port = await freePort();
    worker = runCommands(docBlock(DOC, 'commands: workerd'), (a) => [...a, '--socket-addr', `http=127.0.0.1:${port}`]);
    let err = '';
    worker?.stderr?.on('data', (d) => (err += d));
    worker?.stdout?.resume();
    const base = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${base}/?ip=8.8.8.8`).catch(() => null))?.ok === true, `workerd answering (${err.slice(-300)})`);
    const got: unknown[] = [];
    let statusWrong = 0;
    for (const ip of ips) {
      const r = await fetch(`${base}/?ip=${encodeURIComponent(ip)}`);
      const body = (await r.json()) as { status?: number };
      if (r.status !== (body.status ?? 200)) statusWrong++;
      got.push(body);
    }
    const version = spawnSync(WORKERD, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const differ = compare(version, ips, got, want);
    console.log(
      `edge: ${version}: ${ips.length} addresses over HTTP, ${differ} answers different from Node's, ${statusWrong} statuses wrong`,
    );
    if (differ + statusWrong > 0) fail(`${version}: answers differ from Node's`);
  }

  if (!existsSync(CHROMIUM)) skip("Chromium (Debian's chromium)");
  else {
    writeFileSync(join(project, 'index.html'), docBlock(DOC, 'example: page'));
    // Beside the doc's page, one that answers every address into the page, for the comparison.
    writeFileSync(
      join(project, 'answers.html'),
      `<!doctype html><meta charset="utf-8"><pre id="answers"></pre><script type="module">
        import { openBytes } from './bytes.js';
        const [bytes, ips] = await Promise.all([fetch('./edge.iprd').then((r) => r.arrayBuffer()), fetch('./addresses.json').then((r) => r.json())]);
        const engine = openBytes(new Uint8Array(bytes));
        document.querySelector('#answers').textContent = JSON.stringify({ agent: navigator.userAgent, answers: ips.map((ip) => engine.tryLookup(ip)) });
      </script>`,
    );
    const port = await freePort();
    page = runCommands(docBlock(DOC, 'commands: page'), (a) => [...a.map((x) => (x === '8000' ? String(port) : x)), '--bind', '127.0.0.1']);
    page?.stdout?.resume();
    page?.stderr?.resume();
    const base = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${base}/`).catch(() => null))?.ok === true, 'the page served');
    const dom = (path: string) => {
      const r = spawnSync(
        CHROMIUM,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-dev-shm-usage',
          '--disable-background-networking',
          '--no-first-run',
          `--user-data-dir=${join(dir, 'chromium')}`,
          '--virtual-time-budget=60000',
          '--dump-dom',
          `${base}/${path}`,
        ],
        { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 300_000 },
      );
      if (r.status !== 0) throw new Error(`chromium: exit ${r.status}: ${r.stderr.slice(-500)}`);
      return r.stdout;
    };
    const said = /the page shows `([^`]+)`/.exec(readFileSync(join(ROOT, 'docs', DOC), 'utf8'))?.[1];
    const shown = /<output id="answer">([^<]*)<\/output>/.exec(dom(''))?.[1];
    if (shown !== said) fail(`docs/${DOC}'s page shows ${JSON.stringify(shown)}, the doc says ${JSON.stringify(said)}`);
    const text = /<pre id="answers">([^<]*)<\/pre>/.exec(dom('answers.html'))?.[1] ?? '';
    const unescapeHtml = (s: string) =>
      s
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    if (text === '') fail('the answers page answered nothing');
    else {
      const { agent, answers } = JSON.parse(unescapeHtml(text)) as { agent: string; answers: unknown[] };
      const browser = /HeadlessChrome\/[\d.]+/.exec(agent)?.[0] ?? agent;
      const differ = compare(browser, ips, answers, want);
      console.log(
        `edge: ${browser}: the doc's page shows ${JSON.stringify(shown)}; ${ips.length} addresses, ${differ} answers different from Node's`,
      );
      if (differ > 0) fail(`${browser}: answers differ from Node's`);
    }
  }
  engine.close();
  if (statSync(join(project, 'edge.iprd')).size !== lite.length) fail('the lite dataset changed while read');
} finally {
  stop(worker);
  stop(page);
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exit(1);
