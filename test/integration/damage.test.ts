/**
 * A dataset file written in place under a process that answers from its
 * memory map: the process notices (a stat every few seconds, and at a
 * reload), checks the file again, and answers from it only if it passes;
 * else no answer comes from the damaged pages: data compiled from
 * databases is compiled again at once, a directory's build gives way to
 * the good build before it, and where there is none the server answers 503
 * until the next build. Real files
 * changed byte by byte, a real `iprecord serve`.
 */

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../src/index.js';
import { memoryState } from '../../src/engine/snapshot.js';
import { resolveOptions } from '../../src/engine/options.js';
import { ROOT } from '../helpers/env.js';
import { HANG_MS, until } from '../helpers/wait.js';
import { SMALL, SMALL_SOURCES } from '../helpers/maxmind.js';
import { get, serveProcess, sleep } from '../helpers/redis.js';

const CLI = join(ROOT, 'dist', 'cli.js');
const MAPPED = memoryState(resolveOptions({})).mode === 'mmap';
if (!MAPPED && process.env.IPRECORD_REQUIRE_MMAP === '1') throw new Error('IPRECORD_REQUIRE_MMAP=1: memory maps are required');
if (!MAPPED) console.warn('skipping the damaged-file tests: memory maps are not available (the native addon did not build)');

/** Changes, in place, the first letter of the first `text` after the header of a file: the same file, one byte changed. */
function damage(path: string, text: string): void {
  const at = readFileSync(path).indexOf(Buffer.from(text), 80);
  expect(at, `${text} in ${path}`).toBeGreaterThan(0);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(text[0] === 'X' ? 'Y' : 'X'), 0, 1, at);
  closeSync(fd);
}

describe.skipIf(!MAPPED)('a mapped dataset written in place', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-damage-'));
  const saved = process.env.XDG_CACHE_HOME;
  beforeAll(() => {
    // A cache of this file's own: its datasets are damaged on purpose.
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  /** An address of the fixtures with a city, and that city. */
  const place = async () => {
    const e = await open(SMALL);
    try {
      const ip = ['81.2.69.160', '2.125.160.216', '89.160.20.128', '216.160.83.56', '1.0.0.1'].find((a) => e.lookup(a).city !== null)!;
      return { ip, city: e.lookup(ip).city! };
    } finally {
      e.close();
    }
  };

  it('data compiled from databases: a written byte is noticed, set aside and compiled again; a rewrite that passes is reloaded', async () => {
    const { ip, city } = await place();
    const engine = await open(SMALL);
    const damaged: string[] = [];
    engine.on('damaged', (e) => damaged.push(e.message));
    try {
      const path = engine.info().dataset.path;
      expect(await engine.checkData()).toBe('unchanged');
      // The same bytes written again: the file changed, and still passes its check.
      const bytes = readFileSync(path);
      const fd = openSync(path, 'r+');
      writeSync(fd, bytes, 0, 100, 0);
      closeSync(fd);
      expect(await engine.checkData()).toBe('reloaded');
      expect(engine.lookup(ip).city).toBe(city);

      damage(path, city);
      // Until the check, the pages say what the file says now: that is what the check is for.
      expect(await engine.checkData()).toBe('reloaded');
      expect(damaged).toHaveLength(1);
      expect(damaged[0]).toMatch(/was written while this process answered from its pages .* fails its check \(.*checksum/);
      expect(existsSync(`${path}.damaged`)).toBe(true);
      expect(engine.lookup(ip).city).toBe(city);
      expect(engine.damaged).toBeNull();
    } finally {
      engine.close();
    }
  });

  it('the scheduled check of the whole dataset finds bytes damaged with no write to the file, and loads good data', async () => {
    const { ip, city } = await place();
    // Read into shared memory: a byte changed there is a byte no write to the file made (as a bit the storage flipped).
    const engine = await open({ ...SMALL, memory: 'read' });
    const damaged: string[] = [];
    engine.on('damaged', (e) => damaged.push(e.message));
    try {
      await engine.verifyInBackground();
      expect(damaged).toEqual([]);
      const [file] = engine.share().files;
      const bytes = Buffer.from(file.bytes!);
      bytes[bytes.indexOf(Buffer.from(city), 80)] ^= 0x20;
      await engine.verifyInBackground();
      expect(damaged).toHaveLength(1);
      expect(damaged[0]).toMatch(/checksum/);
      expect(engine.damaged).toBeNull();
      expect(engine.lookup(ip).city).toBe(city);
    } finally {
      engine.close();
    }
  });

  it('iprecord serve --data: noticed at the next stat (--check-data-every); 503 and a damaged /healthz until the next build when there is no good build before it, else that build answers at once', async () => {
    const { ip, city } = await place();
    writeFileSync(join(dir, 'one.txt'), '1.2.3.4\n');
    writeFileSync(
      join(dir, 'feeds.json'),
      JSON.stringify({ feeds: [{ name: 'mine', source: 'one.txt', format: 'list', categories: ['attacker'] }], sources: SMALL_SOURCES }),
    );
    const build = () =>
      spawnSync(process.execPath, [CLI, 'build', '--config', 'feeds.json', '--out', 'ds'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, IPRECORD_DATA: '' },
      });
    expect(build().status).toBe(0);
    // A stat each half second (5 s by default): what the test waits for is the stat, twice.
    const server = await serveProcess([
      'serve',
      '--port',
      '0',
      '--data',
      join(dir, 'ds'),
      '--access-log',
      'off',
      '--check-data-every',
      '0.5',
    ]);
    try {
      expect(JSON.parse((await get(server.port, `/${ip}`)).body).city).toBe(city);
      const current = readFileSync(join(dir, 'ds', 'current'), 'utf8').trim();
      const manifest = JSON.parse(readFileSync(join(dir, 'ds', current, 'manifest.json'), 'utf8')) as { dataset: string };
      damage(join(dir, 'ds', current, manifest.dataset), city);
      // The next stat notices; from then on no answer comes from the damaged pages.
      let answer = await get(server.port, `/${ip}`);
      await until(async () => (answer = await get(server.port, `/${ip}`)).status !== 200, 'the damage noticed', HANG_MS, 100);
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ message: 'The data failed its check; answers resume once good data is loaded.' });
      const health = await get(server.port, '/healthz');
      expect(health.status).toBe(503);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'damaged' });
      // SIGHUP: the same file, still damaged; it says so once and never "serving the previous data".
      server.child.kill('SIGHUP');
      // Nothing is said of a reload of the same damaged file: a pause (a busy machine can only make this pass, not fail).
      await sleep(500);
      expect((await get(server.port, `/${ip}`)).status).toBe(503);
      expect(server.err()).toMatch(
        /the data failed its check: .*was written while this process answered from its pages .*no answer comes from it until good data is loaded/,
      );
      expect(server.err()).not.toMatch(/serving the previous data/);
      // A new build of the directory: watched, loaded, answered.
      expect(build().status).toBe(0);
      await until(async () => (await get(server.port, `/${ip}`)).status === 200, 'the new build answered', HANG_MS, 100);
      expect(JSON.parse((await get(server.port, `/${ip}`)).body).city).toBe(city);
      expect((await get(server.port, '/healthz')).status).toBe(200);

      // With a good build before it (a third build: the second is good), the damaged build gives way to that one at once.
      const reloaded = () => (server.err().match(/data reloaded/g) ?? []).length;
      // The third build loaded: a reload done after the build named it current (the second build may be reloaded twice,
      // by the watcher and by the stat that saw the first written, and its second message come after the third build began).
      const reloadTimes = () => [...server.err().matchAll(/data reloaded \(([^)]+)\)/g)].map((m) => Date.parse(m[1]));
      expect(build().status).toBe(0);
      const named = Math.floor(statSync(join(dir, 'ds', 'current')).mtimeMs);
      await until(() => reloadTimes().some((t) => t >= named), 'the third build reloaded', HANG_MS, 100);
      const third = readFileSync(join(dir, 'ds', 'current'), 'utf8').trim();
      const thirdManifest = JSON.parse(readFileSync(join(dir, 'ds', third, 'manifest.json'), 'utf8')) as { dataset: string };
      const reloads = reloaded();
      damage(join(dir, 'ds', third, thirdManifest.dataset), city);
      await until(() => reloaded() > reloads, 'the fall back to the good build', HANG_MS, 100);
      const fallback = await get(server.port, `/${ip}`);
      expect(fallback.status).toBe(200);
      expect(JSON.parse(fallback.body).city).toBe(city);
      expect((await get(server.port, '/healthz')).status).toBe(200);
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});
