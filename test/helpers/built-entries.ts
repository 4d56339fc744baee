/**
 * Vitest global set-up: the package's entries (tsup.config.ts) built from
 * the sources into a folder of this run, as `dist/` holds them, named by
 * $IPRECORD_BUILT_ENTRIES (`ownEntry` in src/platform/threads.ts): compiler
 * processes and worker threads that tests start from the sources run them
 * rather than the TypeScript under tsx, which takes about a third of a
 * second longer to start each (about 130 compiler processes a run). The folder sits beside
 * src/, as dist/ does, so that what an entry finds relative to itself (the
 * native addon in build/, the package root) is where dist/ finds it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'tsup';
import type { TestProject } from 'vitest/node';
import { BYTES_BUILD, ENTRIES, TARGET } from '../../tsup.config.js';
import { BUILT_ENTRIES } from '../../src/platform/threads.js';
import { ROOT } from './env.js';

/** Vitest runs a global set-up for the root and again for each project, in one process: one folder for them all. */
const run = globalThis as { iprecordBuiltEntries?: string };

async function buildEntries(dir: string): Promise<void> {
  await build({
    entry: ENTRIES,
    format: ['esm'],
    splitting: true,
    target: TARGET,
    outDir: dir,
    dts: false,
    config: false,
    silent: true,
    clean: true,
  });
  await build({ ...BYTES_BUILD, outDir: dir, dts: false, config: false, silent: true, clean: false });
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (run.iprecordBuiltEntries !== undefined) return () => {};
  const dir = mkdtempSync(join(ROOT, '.test-dist-'));
  run.iprecordBuiltEntries = dir;
  await buildEntries(dir);
  process.env[BUILT_ENTRIES] = dir;
  // Watch mode: the sources may have changed before tests run again.
  project.onTestsRerun(() => buildEntries(dir));
  return () => {
    rmSync(dir, { recursive: true, force: true });
    run.iprecordBuiltEntries = undefined;
  };
}
