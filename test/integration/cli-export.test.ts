/**
 * `iprecord export` failing cleanly, as the built CLI in real processes on
 * the default data: a path it cannot rightly replace is refused before any
 * work, `-` writes to standard output, a full disk (a 2 MB tmpfs in a mount
 * namespace of its own) and a signal mid-export leave no file behind, and
 * each failure is one line with exit code 2.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { ROOT } from '../helpers/env.js';
import { HANG_MS, until } from '../helpers/wait.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm ci builds it).');
const dir = mkdtempSync(join(tmpdir(), 'iprecord-cli-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, IPRECORD_DATA: '' };

function run(args: string[]): { out: string; err: string; code: number; ms: number } {
  const started = Date.now();
  const r = spawnSync(process.execPath, [CLI, 'export', ...args], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  return { out: r.stdout, err: r.stderr, code: r.status ?? -1, ms: Date.now() - started };
}
/** The error output less the missing-lists warning. */
const errLines = (err: string) => err.split('\n').filter((l) => l !== '' && !l.includes('no loaded source answers'));

describe('iprecord export, failing cleanly', () => {
  it('refuses before any work a directory, a symbolic link, a device or a missing folder as --out, and touches none', () => {
    const target = join(dir, 'kept.csv');
    writeFileSync(target, 'mine\n');
    const link = join(dir, 'link.csv');
    symlinkSync(target, link);
    mkdirSync(join(dir, 'a-dir'));
    const cases: [string, RegExp][] = [
      [join(dir, 'a-dir'), /is a directory/],
      [link, /is a symbolic link/],
      ['/dev/null', /is not a regular file/],
      [join(dir, 'no-such-folder', 'x.csv'), /is not a folder/],
    ];
    for (const [out, reason] of cases) {
      const r = run(['--format', 'csv', '--out', out]);
      expect(r.code, out).toBe(2);
      expect(errLines(r.err), out).toEqual([expect.stringMatching(reason)]);
      // Before the walk of the default data's ranges (minutes for a CSV of it).
      expect(r.ms, out).toBeLessThan(10_000);
    }
    expect(readFileSync(target, 'utf8')).toBe('mine\n');
    expect(readdirSync(dir).sort()).toEqual(['a-dir', 'kept.csv', 'link.csv']);
    for (const f of ['a-dir', 'kept.csv', 'link.csv']) rmSync(join(dir, f), { recursive: true });
  });

  it('writes a CSV to standard output with -, and refuses - for the formats that are files', async () => {
    // A small dataset: the default data's CSV is about 1 GB even of two columns.
    const small = join(dir, 'small-data');
    writeFileSync(join(dir, 'tor.txt'), '1.2.3.0/24\n');
    await buildAndSwap(
      parseThreatConfig(
        { feeds: [{ name: 'tor', source: join(dir, 'tor.txt'), format: 'list', categories: ['tor'] }], sources: SMALL_SOURCES },
        small,
      ),
      small,
    );
    const r = run(['--data', small, '--format', 'csv', '--fields', 'country_code,threat.is_tor', '--out', '-']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toBe('network,start_ip,end_ip,country_code,threat.is_tor');
    expect(lines).toContain('1.2.3.0/24,1.2.3.0,1.2.3.255,,true');
    expect(lines.length).toBeGreaterThan(100);
    expect(errLines(r.err)).toEqual([expect.stringMatching(/^wrote standard output: \d+ rows/)]);
    const mmdb = run(['--data', small, '--format', 'mmdb', '--out', '-']);
    expect(mmdb.code).toBe(2);
    expect(errLines(mmdb.err)).toEqual([expect.stringMatching(/written to a file, not to standard output/)]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'on a full disk: one line naming the file, exit code 2, no file left',
    () => {
      const mount = join(dir, 'small');
      mkdirSync(mount);
      // A mount namespace of its own: the tmpfs goes with the shell.
      const script = `mount -t tmpfs -o size=2m tmpfs "$1" || exit 99; "$2" "$3" export --format csv --out "$1/all.csv" 2>"$1/err"; echo "code $?"; grep -v 'no loaded source' "$1/err"; ls -A "$1"`;
      const r = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', mount, process.execPath, CLI], { encoding: 'utf8', env });
      expect(r.status, 'a tmpfs could be mounted').not.toBe(99);
      const lines = r.stdout.trim().split('\n');
      expect(lines[0]).toBe('code 2');
      expect(lines[1]).toMatch(new RegExp(`^iprecord: cannot write ${join(mount, 'all.csv')}: ENOSPC`));
      // Only the error output the script kept: neither the export nor its temporary file.
      expect(lines.slice(2)).toEqual(['err']);
    },
    60_000,
  );

  /** Starts an export into a folder of its own; resolves once its temporary files have been written to for `afterMs`. */
  async function midExport(format: string, name: string, afterMs: number) {
    const out = join(dir, `stopped-${format}-${name}`);
    mkdirSync(out);
    const child = spawn(process.execPath, [CLI, 'export', '--format', format, '--out', join(out, `all.${format}`)], {
      env,
      stdio: 'ignore',
    });
    const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    await until(() => readdirSync(out).some((f) => /\.tmp(\.data)?$/.test(f)), 'the export to begin its file', HANG_MS, 50);
    await new Promise((r) => setTimeout(r, afterMs));
    return { out, child, exited };
  }

  // The MMDB export walks the data on the main thread for a minute or more: it must still hear the signal.
  it.each(['csv', 'mmdb', 'parquet'])(
    'stopped by SIGTERM mid-export (%s): exit code 143, no file left',
    async (format) => {
      const { out, child, exited } = await midExport(format, 'term', format === 'csv' ? 0 : 1500);
      const sent = Date.now();
      child.kill('SIGTERM');
      const { code, at } = await exited;
      expect(code).toBe(143);
      // A bound on a hang, not a speed: the walk must hear the signal at all.
      expect(at - sent).toBeLessThan(30_000);
      expect(readdirSync(out)).toEqual([]);
    },
    60_000,
  );

  it('what an export killed outright left behind is removed by the next export to that file', async () => {
    const { out, child, exited } = await midExport('mmdb', 'kill', 500);
    child.kill('SIGKILL');
    await exited;
    const left = readdirSync(out);
    expect(left.some((f) => /\.tmp(\.data)?$/.test(f))).toBe(true);
    // The next export starts by removing them; stopped in turn, it leaves nothing.
    const next = spawn(process.execPath, [CLI, 'export', '--format', 'mmdb', '--out', join(out, 'all.mmdb')], { env, stdio: 'ignore' });
    const nextExit = new Promise((resolve) => next.on('exit', resolve));
    await until(() => !readdirSync(out).some((f) => left.includes(f)), 'the next export to remove what the killed one left', HANG_MS, 50);
    next.kill('SIGTERM');
    await nextExit;
    expect(readdirSync(out)).toEqual([]);
  });
});
