/**
 * Vitest global set-up: datasets that tests compile from their fixture
 * databases go to a cache folder of this run (`compile/cache.ts` reads
 * XDG_CACHE_HOME), removed at the end, never to the user's cache; the
 * user's dataset directory is one of this run too (XDG_DATA_HOME, empty
 * unless a test builds there; $IPRECORD_DATA unset), so that what a
 * user's `iprecord update` left does not change what the tests see.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-test-cache-'));
  process.env.XDG_CACHE_HOME = dir;
  process.env.XDG_DATA_HOME = join(dir, 'data');
  delete process.env.IPRECORD_DATA;
  return () => rmSync(dir, { recursive: true, force: true });
}
