/**
 * The primary of `iprecord serve --workers` writes to a worker whose
 * channel has closed without its knowing yet (a worker stopping between
 * `isConnected()` and the write: EPIPE, which node emits on the Worker as
 * an 'error' that stops the process). Made likely here rather than left to
 * chance (test/helpers/gone-worker.ts): four workers killed, the primary
 * held until they are dead before it reads their channels' close, then a
 * message to each through `tell()`, which must leave the primary up.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const primary = fileURLToPath(new URL('../helpers/gone-worker.ts', import.meta.url));

describe('a message to a worker whose channel closed', () => {
  it('through tell() leaves the primary up', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', primary], { encoding: 'utf8' });
    expect(r.stdout, r.stderr).toContain('connected as far as the primary knows: 4 of 4');
    expect(r.stdout, r.stderr).toContain('primary still up');
    expect(r.stderr).not.toMatch(/EPIPE/);
    expect(r.status, r.stderr).toBe(0);
  });
});
