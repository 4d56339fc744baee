/**
 * The built package as users get it: the ESM and CommonJS entry points
 * export the same API as the sources, the exports map puts types first,
 * the `iprecord` bin runs, and the published files stay within budget.
 * Needs `dist/` (built by `npm ci` / `npm install` through `prepare`).
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as source from '../../src/index.js';
import { ROOT } from '../helpers/env.js';

const DIST = join(ROOT, 'dist');
if (!existsSync(join(DIST, 'index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm ci builds it).');

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  bin: Record<string, string>;
  files: string[];
};
const node = (args: string[], input?: string) => execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', input });

/**
 * Budget for the unpacked package (dist, README, licence, install script).
 * About 540 kB is the library with its country and subdivision tables (one
 * copy: the CommonJS entries load the ESM build); the rest is the server,
 * the CLI, the worker threads, types, the README and the addon's source.
 * For now the engine carries both ways of answering (over the databases,
 * and over a compiled dataset); the first goes once the second is the
 * default. 956 kB with the feeds' widest-entry check (about 6 kB); 969 kB
 * with the MMDB metadata read by the project's own decoder (mmdb-lib, 104 kB
 * installed, is no longer a dependency), zoneinfo and registry files read
 * with size bounds, and Redis counts that follow the keys in use; 983 kB
 * with the front door split (`iprecord/build` and `iprecord/export` are
 * entries of their own: their type files, 30 kB each as .d.ts and .d.cts);
 * 1 000 kB with quotas answered from leases taken from Redis (the lease
 * script, its client side and the two options' types: about 12 kB);
 * 1 010 kB with `iprecord diff` (its walk of two datasets and its command:
 * about 10 kB, loaded only by that command); 1 020 kB with what each build
 * changed written by `build` and `update` and answered by `info()` (5 kB);
 * 1 035 kB with each build's `seen.bin` (when each list first and last held
 * each range: its writer and carry-forward, about 6 kB) and more region
 * names and network-type words (about 4 kB); 1 045 kB with `explain()` and
 * `iprecord explain` (the seen.bin reader, the explanation's types in both
 * type files, the command's help: about 11 kB); 1 055 kB with how `asn.type`
 * and the zone were decided, in explain() (the rules' names and words, their
 * types in both type files: about 7 kB); 1 062 kB with a second location
 * database's country in explain() and `diff` of two location databases
 * (about 4 kB); 1 064 kB with IPv6 text written canonically kept as it is
 * (its comparison with the RFC 5952 text, in each bundle: about 1 kB);
 * 1 066 kB with the sources in rooms (src/engine/, evidence/, contract/,
 * platform/: the bundles' chunks cut anew, 1 065 158 bytes); 1 076 kB
 * with the sources at Prettier's width of 140 (the type declarations keep
 * the sources' line breaks: 1 074 201 bytes built afresh); 1 080 kB
 * with the reasons of the files over 300 lines, which the bundles' and
 * declarations' module comments carry (1 076 609 bytes); 1 100 kB with
 * the CLI a file a verb, the update's one DNS answer a host, the streamed
 * sample lines and seen.bin's bounds (1 091 389 bytes built afresh);
 * 1 120 kB with the exports in MaxMind's schemas, seen.bin's checksum and
 * update's progress (1 106 187 bytes); 1 360 kB with `iprecord/bytes`, one
 * file for Workers and browsers that shares no chunk with the Node build
 * (105 kB, and its types, 41 kB), the lite export and the lookup API's own
 * module (1 340 199 bytes); 1 380 kB with packed datasets' unpacking and
 * the parts' renderer in the bytes entry (113 kB now), `tryWriteJson()`
 * and the access log's bound (1 360 962 bytes); 1 400 kB with the
 * network registries' readers and statements (the statements are in the
 * bytes entry too, which checks a dataset's rows), the shipped hosting-ASN
 * list (6.7 kB with its licence), URL variables, the feed catalogue and
 * the csv options (1 388 616 bytes).
 */
const UNPACKED_BUDGET = 1_400_000;

describe('package', () => {
  it.each(['index', 'build', 'export'])('ESM entry %s exports what its source exports', async (entry) => {
    const esm = (await import(join(DIST, `${entry}.js`))) as Record<string, unknown>;
    const src = (await import(join(ROOT, 'src', `${entry}.ts`))) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(Object.keys(src).sort());
  });

  it('CommonJS entry exports the same and answers a lookup', () => {
    const out = node([
      '-e',
      `const m = require('./dist/index.cjs'); const e = m.openSync(); console.log(JSON.stringify({ keys: Object.keys(m).sort(), cc: e.lookup('8.8.8.8').country_code, err: (() => { try { e.lookup('10.0.0.1') } catch (x) { return x instanceof m.PrivateIpError && x.message } })() }))`,
    ]);
    const r = JSON.parse(out) as { keys: string[]; cc: string; err: string };
    expect(r.keys).toEqual(Object.keys(source).sort());
    expect(r.cc).toBe('US');
    expect(r.err).toBe(new source.PrivateIpError('10.0.0.1').message);
  });

  it.each([
    ['ESM', `import('iprecord/server')`],
    ['CommonJS', `Promise.resolve(require('iprecord/server'))`],
  ])('iprecord/server (%s) resolves through the exports map and answers over HTTP', (_kind, load) => {
    const script = `${load}.then(async (s) => { const srv = await s.createServer({ open: { memory: 'read' } }); const a = await srv.listen(0); const r = await fetch('http://127.0.0.1:' + a.port + '/8.8.8.8/country_code'); console.log(await r.text()); await srv.close(); })`;
    expect(node(['-e', script]).trim()).toBe('US');
  });

  it.each([
    ['ESM', `import('./dist/build.js')`],
    ['CommonJS', `Promise.resolve(require('./dist/build.cjs'))`],
  ])('%s build compiles a large list on worker threads (dist/threat-worker.js) like on one thread', (_kind, load) => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-pkg-threads-'));
    try {
      const list = join(dir, 'list.txt');
      writeFileSync(
        list,
        Array.from({ length: 30_000 }, (_, i) => `${(i * 7919) % 223}.${i % 256}.${(i >> 8) % 256}.${i % 199}`).join('\n'),
      );
      const script = `${load}.then(async (m) => {
        const config = m.parseThreatConfig({ feeds: [{ name: 'l', source: ${JSON.stringify(list)}, format: 'list', categories: ['attacker'] }] }, '.');
        const now = new Date(0);
        const one = await m.buildThreat(config, null, { threads: 1, now });
        const two = await m.buildThreat(config, null, { threads: 2, now, partBytes: 50000 });
        console.log(JSON.stringify({ same: one.buffer.equals(two.buffer), entries: two.feeds[0].entries }));
      })`;
      const r = JSON.parse(node(['-e', script])) as { same: boolean; entries: number };
      expect(r).toEqual({ same: true, entries: 30_000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('types: the Engine class has no member for the package itself (marked @internal), and no public constructor (open() makes engines)', () => {
    // The type file that declares Engine (a chunk the entries share).
    const file = readdirSync(DIST).find(
      (f) => f.endsWith('.d.ts') && readFileSync(join(DIST, f), 'utf8').includes('declare class Engine '),
    );
    expect(file).toBeDefined();
    const text = readFileSync(join(DIST, file!), 'utf8');
    const body = text.slice(text.indexOf('declare class Engine '));
    const engine = body.slice(0, body.indexOf('\n}\n'));
    expect(engine).not.toMatch(/@internal/);
    expect(engine).toMatch(/^ {4}private constructor\(\);$/m);
    // What a user calls: the lookups, the bytes path, the engine's state.
    for (const method of [
      'lookup',
      'tryLookup',
      'lookupJson',
      'writeJson',
      'select',
      'bulk',
      'field',
      'threat',
      'share',
      'info',
      'reload',
      'checkData',
      'verifyInBackground',
      'close',
    ])
      expect(engine, method).toMatch(new RegExp(`^ {4}${method}[<(]`, 'm'));
  });

  it('types: a TypeScript project type-checks its use of the package from either module system (.d.ts and .d.cts)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-pkg-types-'));
    try {
      // A project that depends on this package (its exports map, as npm links a local one) and Node's types.
      mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
      symlinkSync(ROOT, join(dir, 'node_modules', 'iprecord'), 'dir');
      symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
      // Each file uses the package, and misuses it once where the types must refuse it (an unused @ts-expect-error is
      // an error too: types read as any would fail).
      writeFileSync(
        join(dir, 'use.mts'),
        [
          "import { openSync, type IpRecord } from 'iprecord';",
          "import { createServer } from 'iprecord/server';",
          "import { buildDataset } from 'iprecord/build';",
          "const record: IpRecord = openSync().lookup('8.8.8.8');",
          'const city: string | null = record.city;',
          '// @ts-expect-error: a city is no number',
          'const wrong: number = record.city;',
          'export { city, wrong, createServer, buildDataset };',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'use.cts'),
        [
          "import iprecord = require('iprecord');",
          "import server = require('iprecord/server');",
          "import exporter = require('iprecord/export');",
          "const code: string | null = iprecord.openSync().lookup('8.8.8.8').country_code;",
          '// @ts-expect-error: a country code is no number',
          "const wrong: number = iprecord.openSync().lookup('8.8.8.8').country_code;",
          'export = { code, wrong, server, exporter };',
        ].join('\n'),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--listFiles'];
      const r = spawnSync(process.execPath, [tsc, ...args, 'use.mts', 'use.cts'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const read = r.stdout.split('\n');
      // The ES module's entries from their .d.ts, the CommonJS ones from their .d.cts.
      for (const entry of ['index.d.ts', 'server.d.ts', 'build.d.ts', 'index.d.cts', 'server.d.cts', 'export.d.cts'])
        expect(read, entry).toContain(join(ROOT, 'dist', entry));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports map: the lookup API, build, export and server, types first, then the module, for import and require; bytes, one ES module', () => {
    expect(Object.keys(pkg.exports)).toEqual(['.', './build', './export', './server', './bytes', './package.json']);
    for (const entry of ['.', './build', './export', './server']) {
      const map = pkg.exports[entry] as Record<string, Record<string, string>>;
      for (const condition of ['import', 'require']) {
        expect(Object.keys(map[condition])[0]).toBe('types');
        for (const file of Object.values(map[condition])) expect(existsSync(join(ROOT, file)), file).toBe(true);
      }
    }
    // Workers, browsers and bundlers import it; Node's require() loads it as an ES module (require(esm)).
    const bytes = pkg.exports['./bytes'] as Record<string, string>;
    expect(Object.keys(bytes)).toEqual(['types', 'default']);
    for (const file of Object.values(bytes)) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it("the image's Node: one long-term support release (an even major), pinned to its version, in every stage of the Dockerfile, within the package's engines", () => {
    const images = [...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(1);
    expect(new Set(images).size, images.join(', ')).toBe(1);
    const [, major, minor, patch] = /^node:(\d+)\.(\d+)\.(\d+)-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/.exec(images[0]) ?? [];
    expect(major, `${images[0]}: node:<major>.<minor>.<patch>-<debian>-slim`).toBeDefined();
    expect(Number(major) % 2, `${images[0]}: an odd major is never a long-term support line`).toBe(0);
    const [need, needMinor] = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
      .replace('>=', '')
      .split('.')
      .map(Number);
    expect(
      Number(major) > need || (Number(major) === need && Number(minor) >= needMinor),
      `${major}.${minor}.${patch} against engines ${need}.${needMinor}`,
    ).toBe(true);
  });

  it('bin: iprecord prints the record that the library answers', () => {
    expect(pkg.bin.iprecord).toBe('./dist/cli.js');
    expect(readFileSync(join(ROOT, pkg.bin.iprecord), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const printed = JSON.parse(node([pkg.bin.iprecord, '1.1.1.1'])) as source.IpRecord;
    const engine = source.openSync();
    const direct = engine.lookup('1.1.1.1');
    const timeless = (r: source.IpRecord) => ({ ...r, time_zone: r.time_zone && { ...r.time_zone, current_time: '' }, count: '' });
    expect(timeless(printed)).toEqual(timeless(direct));
  });

  it(`publishes only what users need, within ${UNPACKED_BUDGET} bytes unpacked`, () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [packed] = JSON.parse(out) as { unpackedSize: number; files: { path: string }[] }[];
    for (const f of packed.files)
      expect(f.path).toMatch(
        /^(dist\/[\w.-]+\.(js|cjs|d\.ts|d\.cts)|README\.md|LICENSE|package\.json|scripts\/(postinstall|build-native)\.mjs|binding\.gyp|native\/mmap\.c)$/,
      );
    expect(packed.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'dist/index.js',
        'dist/index.cjs',
        'dist/index.d.ts',
        'dist/cli.js',
        'dist/threat-worker.js',
      ]),
    );
    expect(packed.unpackedSize).toBeLessThan(UNPACKED_BUDGET);
  });
});
