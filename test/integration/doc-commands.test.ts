/**
 * The shell commands of README.md and docs/*.md, read from their `sh`
 * blocks and run as written in a folder holding the files they name: a
 * project that depends on this clone as npm installs a local package (its
 * link in node_modules, its command in node_modules/.bin), with the PATH
 * the test runs with (nothing of iprecord's on it). `npx iprecord` is what
 * npx runs there: the first such command goes through npx as written, the
 * others straight to node_modules/.bin/iprecord (npx's own start, about
 * 0.7 s each, left out). `./iprecord-data` is built by the threat feeds'
 * own command from a local list and the fixture databases, so that the
 * exports of it take seconds. A command not run here is named with the
 * reason: the docs cannot gain a command that no test reads.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

/** Commands run elsewhere, or that need what a test machine lacks; each with why. */
const ELSEWHERE: [RegExp, string][] = [
  [
    /^npm (install|ci|test)\b/,
    'CI runs the README set-up block on its clean clone (.ci/run) and npm run test:setup checks it; npm test is the suite itself',
  ],
  [/^(npx )?iprecord update\b/, 'downloads from the Internet; test/integration/update*.test.ts run update against local HTTP servers'],
  [/^docker /, 'Docker is not installed here; test/package/docker.test.ts runs the Dockerfile as a script'],
  [/^\d+ \d+ \* \* \* /, 'a crontab line, not a command'],
  [/^# commands: /, 'the line a test finds its block by'],
  [
    /^(node|bun|deno run( --allow-\w+)+) example\.mjs$/,
    "docs/runtimes.md's example: test/engines/runtimes.ts runs it as written with Node 20, 22 and 24, Bun and Deno (CI)",
  ],
  [
    /^(npx iprecord export --format lite |npx workerd serve |cp node_modules\/iprecord\/dist\/bytes\.js \.$|python3 -m http\.server )/,
    "docs/runtimes.md's Workers and browsers: test/engines/edge.ts runs them as written, the worker in workerd and the page in Chromium (CI)",
  ],
];

/** The commands of every `sh` block of the README and docs, by file. */
function commands(): { file: string; command: string }[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
  const out: { file: string; command: string }[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
      for (const line of block[1].split('\n')) {
        const command = line.replace(/\s+#.*$/, '').trim();
        if (command !== '') out.push({ file, command });
      }
    }
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'iprecord-doc-commands-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The folder the commands run in: a project depending on this clone, and the files the commands name. */
function sandbox(): NodeJS.ProcessEnv {
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'docs-sandbox', private: true, dependencies: { iprecord: `file:${ROOT}` } }),
  );
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'iprecord'));
  symlinkSync(join('..', 'iprecord', 'dist', 'cli.js'), join(dir, 'node_modules', '.bin', 'iprecord'));
  writeFileSync(join(dir, 'tor.txt'), '185.220.101.1\n');
  writeFileSync(
    join(dir, 'feeds.json'),
    JSON.stringify({ feeds: [{ name: 'tor', source: 'tor.txt', format: 'list', categories: ['tor'] }], sources: SMALL_SOURCES }),
  );
  writeFileSync(join(dir, 'access.csv'), 'time,ip,path\n2026-11-26T10:00:00Z,8.8.8.8,/\n2026-11-26T10:00:01Z,185.220.101.1,/login\n');
  writeFileSync(
    join(dir, 'events.ndjson.gz'),
    gzipSync('{"request":{"client_ip":"8.8.8.8"}}\n{"request":{"client_ip":"2001:4860:4860::8888"}}\n'),
  );
  writeFileSync(join(dir, 'ips.txt.gz'), gzipSync('8.8.8.8\n1.1.1.1\n'));
  writeFileSync(join(dir, 'app.log'), '2026-11-26 10:00:00 INFO client=8.8.8.8 GET /\n2026-11-26 10:00:01 INFO client=1.1.1.1 GET /x\n');
  const nginx = join(dir, 'var/log/nginx');
  mkdirSync(nginx, { recursive: true });
  writeFileSync(
    join(nginx, 'access.log'),
    '8.8.8.8 - - [26/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 12 "-" "curl/8"\n[2001:4860:4860::8888]:443 - - [26/Nov/2026:10:00:01 +0000] "GET / HTTP/1.1" 200 12 "-" "curl/8"\n',
  );
  const env: NodeJS.ProcessEnv = { ...process.env, IPRECORD_QUIET: '1' };
  delete env.IPRECORD_DATA;
  return env;
}

describe('the commands of the README and docs', () => {
  it('each runs as written (or is named with where it is run), exit 0, with output', async () => {
    const env = sandbox();
    const all = commands();
    expect(all.length).toBeGreaterThan(15);
    const skipped: string[] = [];
    const ran: string[] = [];
    const printed = new Map<string, string>();
    // ./iprecord-data first: what the data commands read.
    const order = [...all].sort(
      (a, b) => Number(!a.command.includes('--out ./iprecord-data')) - Number(!b.command.includes('--out ./iprecord-data')),
    );
    let server: { port: number; stop: () => Promise<void> } | null = null;
    // Whether a command went through npx already.
    let throughNpx = false;
    try {
      for (const { file, command } of order) {
        const reason = ELSEWHERE.find(([re]) => re.test(command))?.[1];
        if (reason !== undefined) {
          skipped.push(`${file}: ${command} (${reason})`);
          continue;
        }
        // The README's own commands run in the repository; the absolute log path is the sandbox's.
        const cwd = command.startsWith('node dist/') ? ROOT : dir;
        let line = command.replace(' /var/log/', ' var/log/');
        if (line.startsWith('npx iprecord serve ')) {
          await server?.stop();
          server = await serve(
            line.replace('npx iprecord ', 'node_modules/.bin/iprecord ').replace('--port 8080', '--port 0').replace(/ &$/, ''),
            env,
          );
          continue;
        }
        if (line.includes('npx iprecord ')) {
          if (throughNpx) line = line.replaceAll('npx iprecord ', 'node_modules/.bin/iprecord ');
          throughNpx = true;
        }
        if (line.startsWith('curl ')) {
          expect(server, `${file}: ${command} needs the server of the command before it`).not.toBeNull();
          line = line.replace('127.0.0.1:8080', `127.0.0.1:${server?.port}`).replace(/^curl /, 'curl -sf ');
        }
        const r = spawnSync('sh', ['-c', line], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
        expect(r.status, `${file}: ${command}\n${r.stderr}`).toBe(0);
        // Output: what it printed, or the file it wrote (`> file`, `--out file`).
        const written = /> (\S+)$/.exec(line)?.[1] ?? /--out (\S+)/.exec(line)?.[1];
        // Parquet: a file per family (records.ipv4.parquet, records.ipv6.parquet).
        if (written !== undefined)
          expect(
            [written, written.replace(/\.parquet$/, '.ipv4.parquet')].some((w) => existsSync(join(cwd, w))),
            `${file}: ${command} wrote no ${written}`,
          ).toBe(true);
        else expect(r.stdout.length, `${file}: ${command} printed nothing`).toBeGreaterThan(0);
        ran.push(`${file}: ${command}`);
        printed.set(command, r.stdout);
      }
    } finally {
      await server?.stop();
    }
    // What ran answered from the files it named: the list compiled into ./iprecord-data, the log's addresses.
    expect(JSON.parse(printed.get('npx iprecord --data ./iprecord-data 185.220.101.1') ?? '{}')).toMatchObject({
      ip: '185.220.101.1',
      threat: { is_tor: true },
    });
    expect(printed.get("curl 'http://127.0.0.1:8080/8.8.8.8?api-key=change-me-0001&fields=ip,city'")).toMatch(
      /^\{"ip":"8\.8\.8\.8","city":/,
    );
    expect(throughNpx).toBe(true);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toMatch(/^2026-11-26T10:00:00Z,8\.8\.8\.8,\/,US,/m);
    expect(existsSync(join(dir, 'records.mmdb'))).toBe(true);
    console.log(`ran ${ran.length} commands of the docs; not here:\n  ${skipped.join('\n  ')}`);
  }, 300_000);
});

/** Starts a `serve` command; resolves once it listens, with its port and how to stop it. */
function serve(line: string, env: NodeJS.ProcessEnv): Promise<{ port: number; stop: () => Promise<void> }> {
  const child = spawn('sh', ['-c', `exec ${line}`], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const at = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (at !== null)
        resolve({
          port: Number(at[1]),
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
    });
    child.once('exit', (code) => reject(new Error(`${line} exited ${code}: ${err}`)));
  });
}
