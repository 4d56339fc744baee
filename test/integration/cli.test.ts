/**
 * `iprecord <ip>` and the options every command shares, as a real process:
 * the version, options that exclude each other, the one rule for lines of
 * a plain list (`iprecord -` and `iprecord enrich`), and a `--fields` that
 * names no field.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSync, type Engine } from '../../src/index.js';
import { residentBytes, ROOT, seed, unicastV4, xorshift32 } from '../helpers/env.js';

const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm ci builds it).');

let engine: Engine;
beforeAll(() => {
  engine = openSync();
});
afterAll(() => engine.close());

function run(args: string[], input?: string): { out: string; err: string; code: number } {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', env: { ...process.env, IPRECORD_DATA: '' } });
  return { out: r.stdout, err: r.stderr, code: r.status ?? -1 };
}

describe('iprecord', () => {
  it('says once on standard error, as a line of its own, that threat categories have no source', () => {
    const r = run(['8.8.8.8', '1.1.1.1']);
    expect(r.code, r.err).toBe(0);
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^iprecord: no loaded source answers for tor, vpn, proxy, icloud_relay, attacker, abuser: /);
  });

  it('--quiet (anywhere, any command) or IPRECORD_QUIET=1 leaves warnings out; errors are still said', () => {
    const plain = run(['8.8.8.8', '--fields', 'ip']);
    for (const r of [run(['--quiet', '8.8.8.8', '--fields', 'ip']), run(['8.8.8.8', '--fields', 'ip', '--quiet'])])
      expect(r).toEqual({ ...plain, err: '' });
    const env = spawnSync(process.execPath, [CLI, '8.8.8.8'], {
      encoding: 'utf8',
      env: { ...process.env, IPRECORD_DATA: '', IPRECORD_QUIET: '1' },
    });
    expect(env.stderr).toBe('');
    expect(run(['--quiet', 'export', '--format', 'csv', '--out', '-', '--data', '/nonexistent']).err).toMatch(/nonexistent/);
  });

  it('--version and -v print the package version', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) expect(run([flag])).toEqual({ out: `iprecord ${version}\n`, err: '', code: 0 });
  });

  it.each([
    [['8.8.8.8', '--threat', '--fields', 'ip'], '--threat and --fields cannot be used together'],
    [['8.8.8.8', '--field', 'city', '--fields', 'ip'], '--field and --fields cannot be used together'],
    [['8.8.8.8', '--threat', '--field=city'], '--threat and --field cannot be used together'],
    [['8.8.8.8', '--fields', 'ip', '--fields', 'city'], '--fields is given twice'],
    [['enrich', '-', '--format', 'ndjson', '--column', 'ip'], '--column applies to CSV input'],
    [['enrich', '-', '--format', 'csv', '--path', 'a.b'], '--path applies to NDJSON input'],
    [['enrich', '-', '--format', 'csv', '--key', 'geo'], '--key applies to NDJSON output'],
    [['enrich', '-', '--fields', 'ip', '--fields=city'], '--fields is given twice'],
  ])('refuses %j with exit 2', (args, message) => {
    const r = run(args, '8.8.8.8\n');
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.out).toBe('');
  });

  it.each([
    [['8.8.8.8', '--feilds', 'ip'], 'iprecord: unknown option --feilds (did you mean --fields?); iprecord --help lists the options'],
    [['8.8.8.8', '--feilds=ip'], 'iprecord: unknown option --feilds (did you mean --fields?); iprecord --help lists the options'],
    [
      ['--field', '8.8.8.8'],
      'iprecord: --field needs a field name before the address (--field country_code 8.8.8.8); iprecord --help lists the options',
    ],
    [
      ['enrich', '--thread', '2'],
      'iprecord enrich: unknown option --thread (did you mean --threads?); iprecord enrich --help lists its options',
    ],
    [['serve', '--prot', '8080'], 'iprecord serve: unknown option --prot (did you mean --port?); iprecord serve --help lists its options'],
    [
      ['build', '--confg', 'x.json'],
      'iprecord build: unknown option --confg (did you mean --config?); iprecord build --help lists its options',
    ],
    [
      ['export', '--fromat', 'csv'],
      'iprecord export: unknown option --fromat (did you mean --format?); iprecord export --help lists its options',
    ],
    [['info', 'extra'], 'iprecord info: unexpected argument extra; iprecord info --help lists its options'],
    // A first argument that is a word near a command is that command misspelt (a word near none is an address: bleh).
    [['enrch', 'access.csv'], 'iprecord: unknown command enrch (did you mean enrich?); iprecord --help lists the commands'],
    [['exports', '--format', 'csv'], 'iprecord: unknown command exports (did you mean export?); iprecord --help lists the commands'],
    [
      ['serve', '--check-data-every', '0'],
      'iprecord serve: --check-data-every must be a number of seconds above 0, not 0; iprecord serve --help lists its options',
    ],
    [
      ['serve', '--counts-sync-every', '0.5'],
      'iprecord serve: --counts-sync-every is for counts in Redis (--counts redis://host:port/db); iprecord serve --help lists its options',
    ],
    [
      ['serve', '--quota-when-redis-down', 'closed'],
      'iprecord serve: --quota-when-redis-down is for counts in Redis (--counts redis://host:port/db); iprecord serve --help lists its options',
    ],
    [
      ['serve', '--counts', 'redis://127.0.0.1:1/0', '--quota-lease', '0'],
      'iprecord serve: --quota-lease must be a whole number of at least 1, not 0; iprecord serve --help lists its options',
    ],
    [
      ['serve', '--counts', 'redis://127.0.0.1:1/0', '--quota-when-redis-down', 'shut'],
      'iprecord serve: --quota-when-redis-down must be open or closed, not shut; iprecord serve --help lists its options',
    ],
  ])('a mistake is one line naming the fix, exit 2: %j', (args, line) => {
    const r = run(args);
    expect({ code: r.code, err: r.err, out: r.out }).toEqual({ code: 2, err: `${line}\n`, out: '' });
  });

  it('a --fields that names no field is the full record (as fields= over HTTP)', () => {
    const full = Object.keys(engine.lookup('8.8.8.8'));
    for (const fields of ['', ' , ']) {
      expect(Object.keys(JSON.parse(run(['8.8.8.8', '--fields', fields]).out))).toEqual(full);
      const enriched = JSON.parse(run(['enrich', '-', '--fields', fields], '8.8.8.8\n').out) as { iprecord: object };
      expect(Object.keys(enriched.iprecord)).toEqual(full);
    }
  });

  it("--fields and --field take a member's member (asn.asn, threat.is_tor) as select() does, for random addresses; a path the record has not is exit 2", () => {
    const next = xorshift32(seed());
    const ips = ['8.8.8.8', '2001:4860:4860::8888', ...Array.from({ length: 6 }, () => unicastV4(next())), '10.0.0.1'];
    const paths = 'country_code,asn.asn,asn.route,threat.is_tor,time_zone.name';
    const pick = engine.select(paths);
    const r = run(['-', '--fields', paths], ips.join('\n') + '\n');
    const lines = r.out.trim().split('\n');
    const answered = ips.map((ip) => pick.try(ip)).filter((a) => !('code' in a));
    expect(lines.map((l) => JSON.parse(l) as object)).toEqual(answered);
    expect(r.code).toBe(1);
    expect(run(['8.8.8.8', '--field', 'asn.name']).out).toBe(`${engine.select(['asn.name'])('8.8.8.8')['asn.name']}\n`);
    const bad = run(['8.8.8.8', '--fields', 'asn.nope']);
    expect([bad.code, bad.err.trim()]).toEqual([2, 'iprecord: asn.nope is not a valid field.']);
  });

  it('`iprecord -` waits for a reader of its output slower than its input rather than holding every answer', async () => {
    // 100 000 records are about 110 MB of JSON: held for a stalled reader they were 254 MiB of anonymous memory.
    const ips = Array.from({ length: 100_000 }, (_, i) => `8.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    const child = spawn(process.execPath, [CLI, '-', '--quiet'], { stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.end(ips.join('\n') + '\n');
    child.stdout.pause();
    let peak = 0;
    for (let t = 0; t < 30; t++) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, residentBytes(child.pid as number, 'RssAnon'));
    }
    let lines = 0;
    child.stdout.on('data', (d: Buffer) => {
      for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lines++;
    });
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    console.log(`iprecord - under a stalled reader: anonymous resident at most ${(peak / 2 ** 20).toFixed(0)} MiB`);
    expect(code).toBe(0);
    expect(lines).toBe(ips.length);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(100 * 2 ** 20);
  }, 60_000);

  it('an error line shows its input with control characters escaped and a long one cut, its length said', () => {
    const coloured = 'not-an-ip\x1b[31mred\x07';
    const long = '\0'.repeat(5000);
    const r = run(['-', '--quiet', '--field', 'country_code'], ['8.8.8.8', coloured, long, '10.0.0.1', "a$&b$'c"].join('\n') + '\n');
    expect(r.code).toBe(1);
    expect(r.out).toBe('US\n');
    expect(r.err.split('\n')).toEqual([
      'iprecord: not-an-ip\\u001b[31mred\\u0007 does not appear to be an IPv4 or IPv6 address',
      `iprecord: ${'\\u0000'.repeat(200)}... (5000 characters) does not appear to be an IPv4 or IPv6 address`,
      'iprecord: 10.0.0.1 is a private IP address',
      "iprecord: a$&b$'c does not appear to be an IPv4 or IPv6 address",
      '',
    ]);
    // Nothing the terminal would act on.
    expect(r.err).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });

  it('a plain list: blank and # lines are not rows, for `iprecord -` and `enrich` alike; every other line is one row, in order', () => {
    const next = xorshift32(seed());
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const r = next() % 10;
      if (r === 0) lines.push('');
      else if (r === 1) lines.push('   ');
      else if (r === 2) lines.push(`# comment ${i}`);
      else if (r === 3) lines.push(`  #${unicastV4(next())}`);
      else if (r === 4) lines.push('not-an-ip');
      else lines.push(r === 5 ? ` ${unicastV4(next())}\t` : unicastV4(next()));
    }
    const input = lines.join((next() & 1) === 1 ? '\r\n' : '\n') + '\n';
    const rows = lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));

    // What the library says of each row: its canonical address, or its error.
    const answers = rows.map((ip) => {
      try {
        return { ip: engine.lookup(ip).ip };
      } catch (e) {
        return { error: (e as Error).message };
      }
    });
    const direct = run(['-', '--fields', 'ip'], input);
    expect(direct.code).toBe(1);
    expect(
      direct.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(answers.filter((a) => 'ip' in a));
    // Less the line that says the threat categories have no source (the test above).
    const errors = direct.err
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('iprecord: no loaded source'));
    expect(errors).toEqual(answers.flatMap((a) => ('error' in a ? [`iprecord: ${a.error}`] : [])));

    const enriched = run(['enrich', '-', '--format', 'lines', '--fields', 'ip'], input);
    const out = enriched.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ip: string; iprecord: unknown });
    expect(out.map((row) => row.ip)).toEqual(rows);
    expect(out.map((row) => row.iprecord)).toEqual(answers);
    expect(enriched.err).toContain(`enriched ${rows.length.toLocaleString('en')} rows`);
  });
});
