/**
 * Vitest global set-up: the package's entries (tsup.config.ts) built from
 * the sources into a folder of this run, as `dist/` holds them, named by
 * $IPRECORD_BUILT_ENTRIES (`ownEntry` in src/threads.ts): compiler
 * processes and worker threads that tests start from the sources run them
 * rather than the TypeScript under tsx, which takes 0.3-0.5 s longer to
 * start each (about 130 compiler processes a run). The folder sits beside
 * src/, as dist/ does, so that what an entry finds relative to itself (the
 * native addon in build/, the package root) is where dist/ finds it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'tsup';
import config from '../../tsup.config.js';
import { BUILT_ENTRIES } from '../../src/threads.js';
import { ROOT } from './env.js';

export default async function setup(): Promise<() => void> {
  const dir = mkdtempSync(join(ROOT, '.test-dist-'));
  const esm = (Array.isArray(config) ? config : [config])[0] as { entry: Record<string, string>; target: string };
  await build({ entry: esm.entry, format: ['esm'], splitting: true, target: esm.target, outDir: dir, dts: false, config: false, silent: true });
  process.env[BUILT_ENTRIES] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
