/**
 * Builds swapped into a dataset directory: which builds stay is decided by
 * what `current` names (never by the order of names: other entries under
 * `builds/`, or a clock that stepped back, may not cost the new build),
 * and builds into one directory at once take turns (in one process, and
 * as three `iprecord build` processes).
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSync } from '../../src/index.js';
import { resolveDataset } from '../../src/compile/feeds/build.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { ROOT } from '../helpers/env.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

const CLI = join(ROOT, 'dist', 'cli.js');
const root = mkdtempSync(join(tmpdir(), 'iprecord-swap-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory with a feed listing 1.2.3.0/24 as Tor, and its configuration. */
function dataset(name: string): { dir: string; configFile: string } {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tor.txt'), '1.2.3.0/24\n');
  const configFile = join(dir, 'feeds.json');
  writeFileSync(
    configFile,
    JSON.stringify({ feeds: [{ name: 'tor', source: 'tor.txt', format: 'list', categories: ['tor'] }], sources: SMALL_SOURCES }),
  );
  return { dir, configFile };
}

/** The build `current` names exists and answers. */
function answers(dir: string): boolean {
  const engine = openSync({ data: dir });
  try {
    return engine.threat('1.2.3.4').is_tor;
  } finally {
    engine.close();
  }
}

describe('builds swapped into a dataset directory', () => {
  it('keep the current build and the one before, whatever other names builds/ holds', async () => {
    const { dir, configFile } = dataset('names');
    const config = parseThreatConfig(JSON.parse(readFileSync(configFile, 'utf8')), dir);
    // A hand-made folder, a name that sorts after every build, and a build "from the future" (the clock stepped back).
    const others = ['2099-01-01', 'manual'];
    for (const o of others) mkdirSync(join(dir, 'builds', o), { recursive: true });
    mkdirSync(join(dir, 'builds', '2099-12-31T23-59-59-999Z-1'), { recursive: true });
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { buildDir } = await buildAndSwap(config, dir);
      made.push(buildDir.split('/').at(-1) as string);
      expect(resolveDataset(dir)).toBe(buildDir);
      expect(existsSync(join(buildDir, 'threat.bin'))).toBe(true);
      expect(answers(dir)).toBe(true);
      expect(readdirSync(join(dir, 'builds')).sort()).toEqual([...others, ...made.slice(-2)].sort());
    }
  });

  it('at once in one process: each waits for the lock; every build ends whole and current names one', async () => {
    const { dir, configFile } = dataset('together');
    const config = parseThreatConfig(JSON.parse(readFileSync(configFile, 'utf8')), dir);
    const results = await Promise.all([0, 1, 2].map(() => buildAndSwap(config, dir)));
    expect(new Set(results.map((r) => r.buildDir)).size).toBe(3);
    expect(answers(dir)).toBe(true);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
  });

  it('three iprecord build processes at once: all succeed', async () => {
    const { dir, configFile } = dataset('processes');
    const runs = [0, 1, 2].map(
      () =>
        new Promise<{ code: number | null; err: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, 'build', '--config', configFile, '--out', dir], {
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let err = '';
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          child.on('close', (code) => resolve({ code, err }));
        }),
    );
    for (const r of await Promise.all(runs)) expect(r.code, r.err).toBe(0);
    expect(answers(dir)).toBe(true);
    expect(readdirSync(join(dir, 'builds'))).toHaveLength(2);
  });

  it('three processes opening the same databases at once, in one cache: one dataset, which every process answers from', async () => {
    // A cache of this test's own, empty: each process compiles, and the first to put its dataset in place is kept.
    const cache = join(root, 'cache-at-once');
    const geo = join(root, 'at-once-geo.mmdb');
    writeFileSync(geo, readFileSync(SMALL_SOURCES.geo[0]));
    const script = `import { open } from ${JSON.stringify(join(ROOT, 'dist', 'index.js'))};
import { statSync } from 'node:fs';
const e = await open({ geo: [${JSON.stringify(geo)}], asn: ${JSON.stringify(SMALL_SOURCES.asn)} });
const path = e.info().dataset.path;
console.log(JSON.stringify({ path, ino: statSync(path).ino, city: e.lookup('1.0.0.1').city }));`;
    const runs = [0, 1, 2].map(
      () =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, XDG_CACHE_HOME: cache },
          });
          let out = '';
          let err = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          child.on('close', (code) => resolve({ code, out, err }));
        }),
    );
    const results = await Promise.all(runs);
    for (const r of results) expect(r.code, r.err).toBe(0);
    const answered = results.map((r) => JSON.parse(r.out) as { path: string; ino: number; city: string | null });
    const [first] = answered;
    // The file every process answers from is the one in place now; no temporary file is left.
    for (const a of answered) expect(a).toEqual({ ...first, ino: statSync(first.path).ino });
    expect(first.city).not.toBeNull();
    expect(readdirSync(join(first.path, '..')).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const { dir, configFile } = dataset('stale');
    mkdirSync(dir, { recursive: true });
    // A process id that is not running: a finished child's.
    const gone = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => resolve(child.pid as number));
    });
    writeFileSync(join(dir, '.lock'), String(gone));
    const config = parseThreatConfig(JSON.parse(readFileSync(configFile, 'utf8')), dir);
    await buildAndSwap(config, dir);
    expect(answers(dir)).toBe(true);
  });

  it('info(): a local feed whose text states no date is dated by its file, and stale when that is old', async () => {
    const { dir, configFile } = dataset('dated');
    const old = new Date(Date.now() - 30 * 86_400_000);
    utimesSync(join(dir, 'tor.txt'), old, old);
    await buildAndSwap(parseThreatConfig(JSON.parse(readFileSync(configFile, 'utf8')), dir), dir);
    const engine = openSync({ data: dir });
    try {
      const feed = engine.info().feeds.find((f) => f.name === 'tor');
      expect(feed?.state).toBe('stale');
      expect(Math.abs(Date.parse(feed!.dataDate!) - old.getTime())).toBeLessThan(1000);
    } finally {
      engine.close();
    }
  });
});
