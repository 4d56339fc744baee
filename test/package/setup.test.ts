/**
 * The README's set-up commands, as a new user runs them. CI (`.ci/run`)
 * runs the README's "Set up" block itself on its clean clone, as its one
 * install from the lockfile; this suite checks that block is what CI can
 * run (a clean install, then the first lookup), runs its first lookup and
 * `npx iprecord 8.8.8.8` in this checkout: npx installs the folder into
 * its cache to run its own command, running its lifecycle scripts again;
 * they must not build again (which took 13-23 s): the output of npx's run
 * may not show a build. Then the checkout packed (`npm pack`) and
 * installed into a new project with install scripts off, as pnpm and
 * `--ignore-scripts` install it: the first lookup compiles the default
 * dataset. The time each step took is printed.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';

/** A bound for an install and its first lookup, against a hang: on a CI machine busy with other steps, one took 355 s. */
const INSTALL_MS = 900_000;

/** The commands of the README's first `sh` block under "## Set up", comments removed (.ci/run reads them the same way). */
function setUpCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Set up'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('README.md has no sh block under "## Set up"');
  return block[1]
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** npx's cache, where it installs this folder to run `npx iprecord` here. */
const NPX = join(process.env.npm_config_cache ?? join(homedir(), '.npm'), '_npx');
const npxEntries = () => new Set(existsSync(NPX) ? readdirSync(NPX) : []);
const npxBefore = npxEntries();
const dir = mkdtempSync(join(tmpdir(), 'iprecord-setup-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  // An entry npx made for this checkout during the test (CI's clone is removed after the run): it would point at nothing.
  for (const entry of npxEntries()) {
    const pkg = join(NPX, entry, 'package.json');
    if (!npxBefore.has(entry) && existsSync(pkg) && readFileSync(pkg, 'utf8').includes(JSON.stringify(ROOT)))
      rmSync(join(NPX, entry), { recursive: true, force: true });
  }
});

describe('README set-up', () => {
  it(
    'a clean install CI runs as written, then the first lookup, and npx iprecord, which does not build again',
    () => {
      const commands = setUpCommands();
      // The install CI runs as its own (a clean install from the lockfile), then the first lookup.
      expect(commands).toEqual([expect.stringMatching(/^npm ci\b/), 'node dist/cli.js 8.8.8.8']);
      const times: string[] = [];
      const records: string[] = [];
      for (const command of [...commands.slice(1), 'npx iprecord 8.8.8.8']) {
        const started = performance.now();
        const r = spawnSync('sh', ['-c', command], {
          cwd: ROOT,
          encoding: 'utf8',
          maxBuffer: 64 << 20,
          // The checkout's own data only; npm's lifecycle messages shown.
          env: { ...process.env, IPRECORD_DATA: '', npm_config_loglevel: 'info' },
        });
        times.push(`${command}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
        expect(r.status, `${command}\n${r.stderr}`).toBe(0);
        records.push(r.stdout);
        if (command.startsWith('npx')) {
          // What npm ran for npx: the lifecycle scripts, each of which finds its work done.
          expect(r.stdout + r.stderr).not.toMatch(/tsup|Build success|node-gyp|embedded data ready/);
        }
      }
      console.log(`README set-up after the install: ${times.join('; ')}`);
      for (const out of records) {
        const record = JSON.parse(out) as { ip: string; country_code: string; asn: { asn: string } };
        expect(record).toMatchObject({ ip: '8.8.8.8', country_code: 'US', asn: { asn: 'AS15169' } });
      }
    },
    INSTALL_MS,
  );

  it(
    'the packed package installed with install scripts off: the first open compiles the default dataset, says so once, and answers',
    () => {
      // Packed as built (with its scripts, prepare would build again: the same files).
      const [{ filename: packed }] = JSON.parse(
        execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
          cwd: ROOT,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }),
      ) as [{ filename: string }];
      const app = join(dir, 'app');
      const cache = join(dir, 'cache');
      mkdirSync(app);
      execFileSync('npm', ['init', '-y'], { cwd: app, stdio: 'ignore' });
      const started = performance.now();
      execFileSync('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed)], {
        cwd: app,
        stdio: 'ignore',
      });
      const installed = performance.now();
      const script = `const { lookup, openSync } = await import('iprecord'); const r = lookup('8.8.8.8'); console.log(JSON.stringify(r)); lookup('1.1.1.1'); console.error('memory: ' + JSON.stringify(openSync().info().memory));`;
      const run = () =>
        spawnSync(process.execPath, ['--input-type=module', '-e', script], {
          cwd: app,
          encoding: 'utf8',
          env: { ...process.env, XDG_CACHE_HOME: cache, IPRECORD_DATA: '' },
        });
      const first = run();
      const compiled = performance.now();
      expect(first.status, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({
        ip: '8.8.8.8',
        country_code: 'US',
        asn: { asn: 'AS15169' },
        time_zone: { name: 'America/Los_Angeles' },
      });
      expect(first.stderr.match(/compiling the default data/g)).toHaveLength(1);
      // No addon, and info() says why: the install scripts did not run.
      expect(first.stderr).toMatch(
        /memory: \{"mode":"read","reason":"the memory-map addon is not available: the install scripts did not run/,
      );
      // Written into the installed package's own folder, found there by the next process.
      expect(existsSync(join(app, 'node_modules', 'iprecord', 'data', 'default.iprd'))).toBe(true);
      const second = run();
      expect(second.status, second.stderr).toBe(0);
      expect(second.stderr).not.toMatch(/compiling/);
      const timeless = (t: string) => t.replace(/"current_time":"[^"]*"/, '').replace(/"count":"\d+"/, '');
      expect(timeless(second.stdout)).toBe(timeless(first.stdout));
      console.log(
        `packed package, scripts off: npm install ${((installed - started) / 1000).toFixed(1)} s, first lookup (compiles) ${((compiled - installed) / 1000).toFixed(1)} s, second process ${((performance.now() - compiled) / 1000).toFixed(1)} s`,
      );
    },
    INSTALL_MS,
  );
});
