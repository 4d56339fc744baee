/**
 * An install whose memory-map addon did not load (`npm install
 * --ignore-scripts`, Deno without `--allow-ffi`): the engine reads the
 * dataset into memory and says so once a process, as a process warning
 * (IPRECORD_NO_MMAP) naming why and what builds the addon, however many
 * engines it opens; not with IPRECORD_QUIET=1, nor where `memory: 'read'`
 * was asked for. The addon's absence is made by a preload that fails its
 * require as a missing file does.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtEntry, ROOT } from '../helpers/env.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-no-addon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const preload = join(dir, 'no-addon.cjs');
writeFileSync(
  preload,
  `const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request.endsWith('iprecord_mmap.node')) {
    const e = new Error("Cannot find module '" + request + "'");
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  }
  return load.call(this, request, ...rest);
};
`,
);

/** Opens two engines and looks an address up in each, in a process without the addon: its warnings by code, and what info() says. */
function run(env: Record<string, string>, options = '{}'): { warnings: string[]; memory: { mode: string; reason?: string } } {
  const script = `
    const codes = [];
    process.on('warning', (w) => codes.push(w.code + ': ' + w.message));
    const { open } = await import(${JSON.stringify(builtEntry('index'))});
    const a = await open(${options});
    const b = await open(${options});
    a.lookup('8.8.8.8');
    b.lookup('1.1.1.1');
    await new Promise((r) => setImmediate(r));
    console.log(JSON.stringify({ warnings: codes.filter((c) => !c.startsWith('IPRECORD_MISSING_LISTS')), memory: a.info().memory }));
  `;
  const out = execFileSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, IPRECORD_QUIET: '', IPRECORD_MEMORY: '', ...env },
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { warnings: string[]; memory: { mode: string; reason?: string } };
}

describe('without the memory-map addon', () => {
  it('reads the dataset and says so once a process, naming why and the command that builds it', () => {
    const { warnings, memory } = run({});
    expect(memory.mode).toBe('read');
    expect(memory.reason).toMatch(/^the memory-map addon is not available: /);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^IPRECORD_NO_MMAP: the memory-map addon is not available: .*; files are read into memory: each process holds the whole dataset/,
    );
    expect(warnings[0]).toMatch(/npm rebuild iprecord|was not built at install|built at install but is gone/);
  });

  it('is quiet with IPRECORD_QUIET=1, and where reading was asked for', () => {
    expect(run({ IPRECORD_QUIET: '1' }).warnings).toEqual([]);
    const read = run({}, "{ memory: 'read' }");
    expect(read).toEqual({ warnings: [], memory: { mode: 'read' } });
  });
});
