/**
 * Vitest global set-up: the environment every test process and every
 * process a test starts inherits, whatever the user's shell holds.
 * - iprecord's own variables are cleared (IPRECORD_QUIET, IPRECORD_DATA,
 *   IPRECORD_MEMORY...; a test that needs one sets it for itself, and the
 *   projects of vitest.config.ts set IPRECORD_MEMORY), but for those that
 *   steer the tests (`TEST_CONTROLS`);
 * - TZDIR is cleared (the zone tests point it where they need);
 * - datasets that tests compile from their fixture databases go to a cache
 *   folder of this run (`dataset/locate.ts` reads XDG_CACHE_HOME), removed
 *   at the end, never to the user's cache; the user's dataset directory is
 *   one of this run too (XDG_DATA_HOME, empty unless a test builds there),
 *   so that what a user's `iprecord update` left does not change what the
 *   tests see.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Variables that steer the test run itself, not the library: CI's requirements, where the shared data is, the set-up suites (the built entries are named anew by helpers/built-entries.ts). */
const TEST_CONTROLS = /^IPRECORD_(REQUIRE_[A-Z_]+|SHARED_DATA|SETUP_TEST)$/;

/** Clears the library's variables from `env` (all but `TEST_CONTROLS`) and TZDIR; the names cleared. */
export function clearUserEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const cleared = Object.keys(env).filter((k) => k === 'TZDIR' || (k.startsWith('IPRECORD_') && !TEST_CONTROLS.test(k)));
  for (const k of cleared) delete env[k];
  return cleared;
}

/** Vitest runs a global set-up for the root and again for each project, in one process: the environment is made once. */
const run = globalThis as { iprecordEnvironment?: true };

export default function setup(): () => void {
  if (run.iprecordEnvironment) return () => {};
  run.iprecordEnvironment = true;
  clearUserEnvironment();
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-test-cache-'));
  process.env.XDG_CACHE_HOME = dir;
  process.env.XDG_DATA_HOME = join(dir, 'data');
  return () => rmSync(dir, { recursive: true, force: true });
}
