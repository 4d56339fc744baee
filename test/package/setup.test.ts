/**
 * The README's set-up commands, as a new user runs them: a fresh clone of
 * this repository's committed tree, then each command of the README's "Set
 * up" block in turn, then `npx iprecord 8.8.8.8`. npx installs the folder
 * into its cache to run its own command, running its lifecycle scripts
 * again; they must not build again (which took 13-23 s): the output of
 * npx's run may not show a build. The time each step took is printed.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';

/** The commands of the README's first `sh` block under "## Set up", comments removed. */
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

const isClone = existsSync(join(ROOT, '.git'));
const dir = mkdtempSync(join(tmpdir(), 'iprecord-setup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!isClone)('README set-up on a fresh clone', () => {
  it('npm install, the first lookup, and npx iprecord, which does not build again', () => {
    const commands = setUpCommands();
    expect(commands).toEqual([expect.stringMatching(/^npm (install|ci)\b/), 'node dist/cli.js 8.8.8.8']);
    const clone = join(dir, 'iprecord');
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    const times: string[] = [];
    const records: string[] = [];
    for (const command of [...commands, 'npx iprecord 8.8.8.8']) {
      const started = performance.now();
      const r = spawnSync('sh', ['-c', command], {
        cwd: clone,
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        // The clone's own data only; npm's lifecycle messages shown.
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
    console.log(`README set-up on a fresh clone: ${times.join('; ')}`);
    for (const out of records.slice(1)) {
      const record = JSON.parse(out) as { ip: string; country_code: string; asn: { asn: string } };
      expect(record).toMatchObject({ ip: '8.8.8.8', country_code: 'US', asn: { asn: 'AS15169' } });
    }
  }, 300_000);
});
if (!isClone) console.log(`README set-up test skipped: ${ROOT} is not a git clone`);
