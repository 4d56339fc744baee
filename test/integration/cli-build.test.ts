/**
 * `iprecord build` and `iprecord update` end to end: the built CLI as a
 * real process compiles a feed configuration written here into a dataset
 * directory (update: downloaded from a server on 127.0.0.1), and lookups
 * and `info` read it back.
 */

import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSync } from '../../src/index.js';
import { ROOT } from '../helpers/env.js';
import { HANG_MS, until } from '../helpers/wait.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm ci builds it).');

const dir = mkdtempSync(join(tmpdir(), 'iprecord-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): { out: string; err: string; code: number } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, IPRECORD_DATA: '' } });
  return { out: r.stdout, err: r.stderr, code: r.status ?? -1 };
}

const attackers = {
  name: 'mine',
  source: 'mine.txt',
  format: 'list',
  categories: ['attacker'],
  blocklist: { name: 'Mine', site: 'https://example.com/mine', type: 'attacker' },
};
const proxies = { name: 'proxies', source: 'proxies.txt', format: 'list', categories: ['proxy'] };

describe('iprecord build', () => {
  it('compiles a configuration (saved with a byte order mark) into a dataset that lookups and info read', () => {
    writeFileSync(join(dir, 'mine.txt'), '# a list of my own\n1.2.3.4\n5.6.7.0/24\nnot-an-ip\n2a00:1450::/32\n');
    writeFileSync(join(dir, 'proxies.txt'), 'http://5.6.7.8:3128\n');
    // As some editors on Windows save it.
    writeFileSync(join(dir, 'feeds.json'), '\uFEFF' + JSON.stringify({ feeds: [attackers, proxies], sources: SMALL_SOURCES }));
    const r = run(['build', '--config', 'feeds.json', '--out', 'ds']);
    expect(r.code, r.err).toBe(0);
    // The bad line, with its file and line number; the rest compiled.
    expect(r.err).toContain(`${join(dir, 'mine.txt')}:4: `);
    expect(r.err).toMatch(/mine: 3 entries, 1 bad line/);

    const threat = (ip: string) => {
      const t = run([ip, '--data', 'ds', '--threat']);
      expect(t.code, t.err).toBe(0);
      return JSON.parse(t.out) as Record<string, unknown>;
    };
    const engine = openSync({ data: join(dir, 'ds') });
    try {
      for (const ip of ['1.2.3.4', '5.6.7.8', '5.6.7.255', '5.6.8.0', '9.9.9.9', '2a00:1450::1', '2a00:1451::1']) {
        const t = threat(ip);
        // The process answers what the library answers from the same directory.
        expect(t, ip).toEqual(JSON.parse(JSON.stringify(engine.threat(ip))));
        const listed = ip === '1.2.3.4' || ip.startsWith('5.6.7.') || ip.startsWith('2a00:1450:');
        expect(t.is_known_attacker, ip).toBe(listed);
        expect(t.blocklists, ip).toEqual(listed ? [attackers.blocklist] : []);
        expect(t.is_proxy, ip).toBe(ip === '5.6.7.8');
      }
    } finally {
      engine.close();
    }

    const info = run(['info', '--data', 'ds']);
    const feeds = (JSON.parse(info.out) as { feeds: { name: string; state: string; entries: number; addresses: string; source: string }[] })
      .feeds;
    const mine = feeds.find((f) => f.name === 'mine');
    expect(mine).toMatchObject({ state: 'loaded', entries: 3, source: join(dir, 'mine.txt') });
    // 1 + 256 IPv4 addresses and a /32 of IPv6.
    expect(BigInt(mine?.addresses ?? '0')).toBe(257n + (1n << 96n));
    expect(feeds.find((f) => f.name === 'proxies')).toMatchObject({ state: 'loaded', entries: 1, addresses: '1' });
    // The directory names its current build, whose dataset has the feeds compiled in: opened as it is, with nothing laid over it.
    const build = join(dir, 'ds', readFileSync(join(dir, 'ds', 'current'), 'utf8').trim());
    expect(existsSync(join(build, 'threat.bin'))).toBe(true);
    const described = JSON.parse(info.out) as { dataset: { path: string }; threat: { path: string } };
    expect(resolve(dir, described.dataset.path)).toBe(join(build, 'dataset.iprd'));
    expect(resolve(dir, described.threat.path)).toBe(join(build, 'threat.bin'));
    // It answers as the same databases compiled without the feeds, with the build's threat.bin laid over them at run time.
    const compiled = openSync({ data: join(dir, 'ds') });
    const laid = openSync({ ...SMALL_SOURCES, threat: join(build, 'threat.bin') });
    try {
      for (const ip of [
        '1.2.3.4',
        '5.6.7.8',
        '5.6.7.255',
        '5.6.8.0',
        '9.9.9.9',
        '2a00:1450::1',
        '2a00:1451::1',
        '2.125.160.216',
        '81.2.69.160',
      ]) {
        const text = (e: typeof laid) => e.lookupJson(ip, { count: '1' }).replace(/"current_time":"[^"]*"/, '');
        expect(text(compiled), ip).toBe(text(laid));
      }
    } finally {
      compiled.close();
      laid.close();
    }
  });

  it('a feed it cannot read is reported and the others are compiled (exit 1); a bad configuration is a usage error (exit 2)', () => {
    writeFileSync(join(dir, 'mine.txt'), '1.2.3.4\n');
    writeFileSync(
      join(dir, 'partial.json'),
      JSON.stringify({ feeds: [attackers, { ...proxies, source: 'gone.txt' }], sources: SMALL_SOURCES }),
    );
    const r = run(['build', '--config', 'partial.json', '--out', 'ds2']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/proxies/);
    expect(r.err).toContain('gone.txt');
    const t = run(['1.2.3.4', '--data', 'ds2', '--threat']);
    expect((JSON.parse(t.out) as { is_known_attacker: boolean }).is_known_attacker).toBe(true);
    // Its category has no other source: failed, saying which feed and why; one it never had (tor) is missing.
    const info = run(['info', '--data', 'ds2']);
    const lists = (JSON.parse(info.out) as { lists: { name: string; state: string; reason?: string }[] }).lists;
    expect(lists.find((l) => l.name === 'proxy')).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/^proxies: .*gone\.txt/),
    });
    expect(lists.find((l) => l.name === 'tor')).toMatchObject({ state: 'missing' });
    expect(lists.find((l) => l.name === 'attacker')).toMatchObject({ state: 'loaded' });
    expect(info.err).toMatch(/^warning: proxy: failed \(proxies: /m);

    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ feeds: [{ ...attackers, categories: ['spam'] }], sources: SMALL_SOURCES }));
    const bad = run(['build', '--config', 'bad.json', '--out', 'ds3']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/categor/);
    expect(existsSync(join(dir, 'ds3', 'current'))).toBe(false);
    const none = run(['build', '--config', 'none.json', '--out', 'ds4']);
    expect({ code: none.code, err: none.err }).toEqual({
      code: 2,
      err: 'iprecord build: Cannot read the feed configuration none.json: it does not exist\n',
    });
  });
});

/** Runs the CLI without blocking this process (which serves the feeds). */
function runAsync(args: string[]): Promise<{ out: string; err: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, IPRECORD_DATA: '' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ out, err, code: code ?? -1 }));
  });
}

describe('iprecord update', () => {
  let server: Server | undefined;
  /** What the feed's URL answers: a status and a body, with an ETag for the body. */
  let answer = { status: 200, body: '' };
  const requests: { etag: string | undefined }[] = [];

  afterAll(() => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve()))));

  it('downloads, compiles and swaps in; a failed or shrunken download keeps the last good data and exits 1', async () => {
    const feeds = createServer((req, res) => {
      const etag = `"${answer.body.length}-${answer.status}"`;
      requests.push({ etag: req.headers['if-none-match'] });
      if (answer.status === 200 && req.headers['if-none-match'] === etag) res.writeHead(304).end();
      else res.writeHead(answer.status, { etag }).end(answer.body);
    });
    server = feeds;
    await new Promise<void>((resolve) => feeds.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}/list.txt`;
    writeFileSync(
      join(dir, 'update.json'),
      JSON.stringify({ feeds: [{ name: 'remote', source: url, format: 'list', categories: ['abuser'] }], sources: SMALL_SOURCES }),
    );
    const listed = Array.from({ length: 200 }, (_, i) => `8.${i}.0.1`);
    const abuser = async (ip: string) =>
      (JSON.parse((await runAsync([ip, '--data', 'du', '--threat'])).out) as { is_known_abuser: boolean }).is_known_abuser;

    answer = { status: 200, body: listed.join('\n') + '\n' };
    const first = await runAsync(['update', '--config', 'update.json', '--data', 'du']);
    expect(first.code, first.err).toBe(0);
    expect(await abuser('8.150.0.1')).toBe(true);
    expect(await abuser('8.250.0.1')).toBe(false);

    // Unchanged: asked with the ETag it was given, answered 304.
    const again = await runAsync(['update', '--config', 'update.json', '--data', 'du']);
    expect(again.code, again.err).toBe(0);
    expect(requests.at(-1)?.etag).toBe(`"${answer.body.length}-200"`);

    // Shrunk tenfold: refused, the last good list kept.
    answer = { status: 200, body: listed.slice(0, 20).join('\n') + '\n' };
    const shrunk = await runAsync(['update', '--config', 'update.json', '--data', 'du']);
    expect(shrunk.code).toBe(1);
    expect(shrunk.err).toMatch(/remote.*(shr|fewer)/i);
    expect(await abuser('8.150.0.1')).toBe(true);

    // A server error, after its retries: the same.
    answer = { status: 500, body: 'oops' };
    const failed = await runAsync(['update', '--config', 'update.json', '--data', 'du']);
    expect(failed.code).toBe(1);
    expect(failed.err).toMatch(/remote.*500/);
    expect(await abuser('8.150.0.1')).toBe(true);
  });
});

/** Whether util-linux's `script` is here, to run a command on a pseudo-terminal. */
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe('iprecord update on a terminal, without a network', () => {
  it.skipIf(!hasScript)(
    'shows each download as it ends on one line rewritten in place, one line a host that does not resolve, within 15 s',
    () => {
      // .invalid never resolves (RFC 6761): as a machine offline answers every name.
      const feeds = ['a', 'b', 'c'].map((name) => ({
        name,
        source: `http://iprecord-offline.invalid/${name}.txt`,
        format: 'list',
        categories: ['attacker'],
      }));
      writeFileSync(join(dir, 'offline.json'), JSON.stringify({ feeds, sources: SMALL_SOURCES }));
      const command = [process.execPath, CLI, 'update', '--config', 'offline.json', '--data', 'offline'].map((a) => `'${a}'`).join(' ');
      const onTerminal = () => {
        const started = Date.now();
        // script runs the command on a pseudo-terminal and copies what it writes there to its standard output.
        const r = spawnSync('script', ['-qec', command, '/dev/null'], {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, IPRECORD_DATA: '', TERM: 'dumb' },
        });
        return { text: r.stdout, code: r.status, ms: Date.now() - started };
      };
      // The first: no build yet, so one is made from the installed data; the second keeps it.
      onTerminal();
      const { text, code, ms } = onTerminal();
      console.log(`update offline on a terminal: ${ms} ms`);
      expect(code, text).toBe(1);
      expect(ms).toBeLessThan(15_000);
      for (let k = 1; k <= 3; k++) expect(text).toMatch(new RegExp(`\\r\\x1b\\[Kiprecord: downloaded [abc] \\(${k} of 3\\) \\(\\d+ %`));
      const lines = text
        .split(/\r\n|\n|\r/)
        .map((l) => l.replace(/^\x1b\[K/, ''))
        .filter((l) => l !== '' && !l.startsWith('iprecord: downloaded '));
      expect(lines).toEqual([
        'failed    iprecord-offline.invalid does not resolve (ENOTFOUND): 3 downloads, each keeping its last good data',
        expect.stringMatching(/^nothing was downloaded: the current build is kept \(.+\)$/),
      ]);
    },
    HANG_MS,
  );
});

describe.skipIf(process.platform === 'win32')('iprecord build on what is not a regular file', () => {
  // A FIFO would hold a reader forever, a device would fill its memory: each is refused at once, by name.
  it('refuses a FIFO or a device as the configuration, a feed or a database, naming it, in seconds', () => {
    for (const name of ['fifo-config.json', 'fifo-feed.txt', 'fifo-geo.mmdb']) spawnSync('mkfifo', [join(dir, name)]);
    const feed = (source: string) => ({ feeds: [{ name: 'f', source, format: 'list', categories: ['attacker'] }], sources: SMALL_SOURCES });
    writeFileSync(join(dir, 'fifo-feed.json'), JSON.stringify(feed('fifo-feed.txt')));
    writeFileSync(join(dir, 'zero-feed.json'), JSON.stringify(feed('/dev/zero')));
    writeFileSync(join(dir, 'fifo-geo.json'), JSON.stringify({ feeds: [], sources: { ...SMALL_SOURCES, geo: ['fifo-geo.mmdb'] } }));
    writeFileSync(join(dir, 'zero-asn.json'), JSON.stringify({ feeds: [], sources: { ...SMALL_SOURCES, asn: ['/dev/zero'] } }));
    const cases: [string, number, RegExp][] = [
      [
        'fifo-config.json',
        2,
        /Cannot read the feed configuration fifo-config\.json: it is not a regular file \(a device, a FIFO or a socket\)/,
      ],
      ['fifo-feed.json', 1, /failed +f: .*fifo-feed\.txt is not a regular file/],
      ['zero-feed.json', 1, /failed +f: .*\/dev\/zero is not a regular file/],
      ['fifo-geo.json', 2, /fifo-geo\.mmdb is not a regular file/],
      ['zero-asn.json', 2, /\/dev\/zero is not a regular file/],
    ];
    for (const [config, code, message] of cases) {
      const started = Date.now();
      const r = run(['build', '--config', config, '--out', `out-${config}`]);
      expect(r.err, config).toMatch(message);
      expect(r.code, config).toBe(code);
      // A bound on a hang (a FIFO or a device read on), not a speed.
      expect(Date.now() - started, config).toBeLessThan(30_000);
    }
    // The dataset directory is made where there is none; a file or a device there is said by name, before any work.
    writeFileSync(join(dir, 'a-file'), 'x');
    for (const [verb, option, path] of [
      ['build', '--out', join(dir, 'a-file')],
      ['update', '--data', '/dev/null'],
    ] as const) {
      const r = run([verb, option, path, '--quiet']);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toBe(`iprecord ${verb}: ${option} ${path} is not a directory (a dataset directory is made where there is none)\n`);
    }
  });
});

describe.skipIf(process.platform === 'win32')('iprecord build stopped by a signal', () => {
  it('SIGTERM mid-build: exit code 143 at once, the build being written, its compile and the lock gone, the current build kept', async () => {
    writeFileSync(join(dir, 'one.txt'), '1.2.3.4\n');
    // The build kept: of the small databases (under a second). The builds stopped: of the default sources, a build of
    // seconds (the merge of the feeds into the default data).
    writeFileSync(join(dir, 'kept.json'), JSON.stringify({ feeds: [{ ...attackers, source: 'one.txt' }], sources: SMALL_SOURCES }));
    writeFileSync(join(dir, 'stopped.json'), JSON.stringify({ feeds: [{ ...attackers, source: 'one.txt' }] }));
    expect(run(['build', '--config', 'kept.json', '--out', 'stopped']).code).toBe(0);
    const before = readdirSync(join(dir, 'stopped', 'builds'));
    const current = readFileSync(join(dir, 'stopped', 'current'), 'utf8');
    // As soon as it holds the directory's lock (it has begun to make things), and once it has worked a while.
    for (const after of [0, 1200]) {
      const build = spawn(process.execPath, [CLI, 'build', '--config', 'stopped.json', '--out', 'stopped'], {
        cwd: dir,
        stdio: 'ignore',
        env: { ...process.env, IPRECORD_DATA: '' },
      });
      const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
        build.on('exit', (code) => resolve({ code, at: Date.now() })),
      );
      await until(() => existsSync(join(dir, 'stopped', '.lock')), 'the build to take the lock', HANG_MS, 10);
      await new Promise((r) => setTimeout(r, after));
      const sent = Date.now();
      build.kill('SIGTERM');
      const { code, at } = await exited;
      expect(code, `stopped ${after} ms in`).toBe(143);
      // A bound on a hang (the signal not heard), not a speed.
      expect(at - sent).toBeLessThan(30_000);
      expect(readdirSync(join(dir, 'stopped')).sort(), `stopped ${after} ms in`).toEqual(
        ['builds', 'current', 'feeds'].filter((f) => existsSync(join(dir, 'stopped', f))).sort(),
      );
      expect(readdirSync(join(dir, 'stopped', 'builds'))).toEqual(before);
      expect(readFileSync(join(dir, 'stopped', 'current'), 'utf8')).toBe(current);
    }
  });
});

describe.skipIf(process.platform !== 'linux')('iprecord build killed outright', () => {
  it('takes its compile process with it (SIGKILL) within a second, killed at once or mid-compile: nothing keeps running or writing', async () => {
    writeFileSync(join(dir, 'one.txt'), '1.2.3.4\n');
    // The default sources: a compile long enough to be killed in the middle.
    writeFileSync(join(dir, 'killed.json'), JSON.stringify({ feeds: [{ ...attackers, source: 'one.txt' }] }));
    const childrenOf = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    };
    // Gone, or a zombie no one has reaped yet (its parent is dead).
    const gone = (pid: number) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
      } catch {
        return true;
      }
    };
    // Killed as soon as its compile process exists (still loading), then after it has worked a while.
    for (const after of [0, 0, 0, 1500]) {
      const build = spawn(process.execPath, [CLI, 'build', '--config', 'killed.json', '--out', 'killed'], {
        cwd: dir,
        stdio: 'ignore',
        env: { ...process.env, IPRECORD_DATA: '' },
      });
      let compile: number | undefined;
      await until(() => (compile = childrenOf(build.pid as number)[0]) !== undefined, 'the compile process to start', HANG_MS, 10);
      await new Promise((r) => setTimeout(r, after));
      build.kill('SIGKILL');
      // Left alone, the compile of the default sources runs for many seconds more: gone within the wait (a bound on a
      // hang) is gone with its parent.
      await until(
        () => gone(compile!),
        `the compile process to end with the build, killed ${after} ms after the compile started`,
        HANG_MS,
        10,
      );
    }
  });
});
