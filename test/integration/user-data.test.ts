/**
 * The user's dataset directory: where `iprecord build` and `update` write
 * when not told where, and what `open()` and every command answer from
 * when it holds a build and nothing else is named.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { defaultDataDir, userDataDir } from '../../src/dataset/store.js';
import { lookup, open, openSync } from '../../src/index.js';
import { ROOT } from '../helpers/env.js';
import { SMALL, SMALL_SOURCES } from '../helpers/maxmind.js';

const CLI = join(ROOT, 'dist', 'cli.js');
const TOR = '185.220.101.1';
const home = mkdtempSync(join(tmpdir(), 'iprecord-user-data-'));
const config = (dir: string) =>
  parseThreatConfig(
    { feeds: [{ name: 'tor', source: join(home, 'tor.txt'), format: 'list', categories: ['tor'] }], sources: SMALL_SOURCES },
    dir,
  );

beforeAll(() => {
  // This process's own: the set-up's XDG_DATA_HOME is shared by every test file.
  process.env.XDG_DATA_HOME = join(home, 'share');
  delete process.env.IPRECORD_DATA;
  writeFileSync(join(home, 'tor.txt'), `${TOR}\n`);
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("the user's dataset directory", () => {
  it("is $IPRECORD_DATA, else the platform's place for an application's data", () => {
    expect(userDataDir({}, 'linux', '/home/u')).toBe('/home/u/.local/share/iprecord');
    expect(userDataDir({ XDG_DATA_HOME: '/d' }, 'linux', '/home/u')).toBe('/d/iprecord');
    expect(userDataDir({ XDG_DATA_HOME: '/d' }, 'darwin', '/Users/u')).toBe('/Users/u/Library/Application Support/iprecord');
    expect(userDataDir({ LOCALAPPDATA: 'C:/Users/u/AppData/Local' }, 'win32', 'C:/Users/u')).toBe(
      join('C:/Users/u/AppData/Local', 'iprecord'),
    );
    expect(userDataDir({ IPRECORD_DATA: '/srv/ip', XDG_DATA_HOME: '/d' }, 'linux', '/home/u')).toBe('/srv/ip');
    // Read only when a build is there; IPRECORD_DATA set empty: none.
    expect(defaultDataDir({ XDG_DATA_HOME: join(home, 'none') }, 'linux', home)).toBeUndefined();
    expect(defaultDataDir({ IPRECORD_DATA: '', XDG_DATA_HOME: '/d' }, 'linux', home)).toBeUndefined();
    expect(defaultDataDir({ IPRECORD_DATA: '/srv/ip' }, 'linux', home)).toBe('/srv/ip');
  });

  it('answers open(), the top-level lookups and every command once a build is there, unless other data is named', async () => {
    const dir = userDataDir();
    expect(dir).toBe(join(home, 'share', 'iprecord'));
    const before = await open();
    expect(before.lookup(TOR).threat.is_tor).toBe(false);
    before.close();
    await buildAndSwap(config(dir), dir);
    const e = await open();
    try {
      expect(e.info().dataset.path.startsWith(dir)).toBe(true);
      expect(e.lookup(TOR).threat.is_tor).toBe(true);
      // The default engine, opened on first use.
      expect(lookup(TOR).threat.is_tor).toBe(true);
    } finally {
      e.close();
    }
    // Other sources named: the user's directory is not laid over them.
    const named = openSync(SMALL);
    expect(named.lookup(TOR).threat.is_tor).toBe(false);
    named.close();
    const cli = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [CLI, '--quiet', TOR], { encoding: 'utf8', env: { ...process.env, ...env } });
    const found = cli({});
    expect(found.status, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout).threat.is_tor).toBe(true);
    // IPRECORD_DATA set empty: the installed data alone.
    expect(JSON.parse(cli({ IPRECORD_DATA: '' }).stdout).threat.is_tor).toBe(false);
  });

  it('is where iprecord build writes when not told where', () => {
    const share = join(home, 'other-share');
    writeFileSync(
      join(home, 'feeds.json'),
      JSON.stringify({
        feeds: [{ name: 'tor', source: join(home, 'tor.txt'), format: 'list', categories: ['tor'] }],
        sources: SMALL_SOURCES,
      }),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: share };
    delete env.IPRECORD_DATA;
    const r = spawnSync(process.execPath, [CLI, 'build', '--quiet', '--config', join(home, 'feeds.json')], {
      cwd: home,
      encoding: 'utf8',
      env,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(share, 'iprecord', 'current'))).toBe(true);
    expect(existsSync(join(home, 'iprecord-data'))).toBe(false);
  });

  it('watched before its first build: the default data answers, then the first build swapped in, with no reopen', async () => {
    const dir = join(home, 'waiting');
    mkdirSync(dir);
    const engine = await open({ data: dir, watch: true });
    try {
      // The package's default data (8.8.8.8 in the US: the fixtures the builds here compile place it nowhere).
      expect(engine.info().dataset.path).toBe(join(ROOT, 'data', 'default.iprd'));
      expect(engine.lookup('8.8.8.8').country_code).toBe('US');
      expect(engine.lookup(TOR).threat.is_tor).toBe(false);
      const reloaded = new Promise((resolve) => engine.once('reload', resolve));
      await buildAndSwap(config(dir), dir);
      await reloaded;
      expect(engine.lookup(TOR).threat.is_tor).toBe(true);
      expect(engine.info().dataset.path.startsWith(join(dir, 'builds'))).toBe(true);
    } finally {
      engine.close();
    }
  });

  it('named but not there, a file, or a folder holding no build: an error naming the directory (not a file in it) and what makes one, from open() and the CLI', async () => {
    const missing = join(home, 'no-such-data');
    const file = join(home, 'a-file');
    writeFileSync(file, 'not a directory\n');
    const empty = join(home, 'empty-folder');
    mkdirSync(empty);
    const hint = 'a data directory is what iprecord update --data <dir> or iprecord build --out <dir> makes.';
    for (const [dir, what] of [
      [missing, 'it does not exist'],
      [file, 'it is a file, not a directory'],
      [empty, 'it holds no build (no current, manifest.json or threat.bin)'],
    ]) {
      const message = `Cannot read data directory ${dir}: ${what}; ${hint}`;
      await expect(open({ data: dir })).rejects.toThrow(message);
      expect(() => openSync({ data: dir })).toThrow(expect.objectContaining({ code: 'INVALID_DATASET' }));
      const r = spawnSync(process.execPath, [CLI, '8.8.8.8', '--data', dir], { encoding: 'utf8' });
      expect([r.status, r.stderr.trim()]).toEqual([2, `iprecord: ${message}`]);
    }
  });
});
