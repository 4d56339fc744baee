/**
 * The built package as users get it: the ESM and CommonJS entry points
 * export the same API as the sources, the exports map puts types first,
 * the `iprecord` bin runs, and the published files stay within budget.
 * Needs `dist/` (built by `npm ci` / `npm install` through `prepare`).
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

/** Budget for the unpacked package (dist, README, licence, install script). */
const UNPACKED_BUDGET = 1_200_000;

describe('package', () => {
  it('ESM entry exports what the sources export', async () => {
    const esm = (await import(join(DIST, 'index.js'))) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(Object.keys(source).sort());
  });

  it('CommonJS entry exports the same and answers a lookup', () => {
    const out = node(['-e', `const m = require('./dist/index.cjs'); const e = m.openSync(); console.log(JSON.stringify({ keys: Object.keys(m).sort(), cc: e.lookup('8.8.8.8').country_code, err: (() => { try { e.lookup('10.0.0.1') } catch (x) { return x instanceof m.PrivateIpError && x.message } })() }))`]);
    const r = JSON.parse(out) as { keys: string[]; cc: string; err: string };
    expect(r.keys).toEqual(Object.keys(source).sort());
    expect(r.cc).toBe('US');
    expect(r.err).toBe(new source.PrivateIpError('10.0.0.1').message);
  });

  it('exports map: types first, then the module, for import and require', () => {
    const dot = pkg.exports['.'] as Record<string, Record<string, string>>;
    for (const condition of ['import', 'require']) {
      expect(Object.keys(dot[condition])[0]).toBe('types');
      for (const file of Object.values(dot[condition])) expect(existsSync(join(ROOT, file)), file).toBe(true);
    }
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
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [packed] = JSON.parse(out) as { unpackedSize: number; files: { path: string }[] }[];
    for (const f of packed.files) expect(f.path).toMatch(/^(dist\/[\w.-]+\.(js|cjs|d\.ts|d\.cts)|README\.md|LICENSE|package\.json|scripts\/postinstall\.mjs)$/);
    expect(packed.files.map((f) => f.path)).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/cli.js']));
    expect(packed.unpackedSize).toBeLessThan(UNPACKED_BUDGET);
  });
});
