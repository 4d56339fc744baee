// The test suite: every suite once with database files memory-mapped (the
// default), then the suites that depend on how files are held once more
// with them read into memory (IPRECORD_MEMORY=read). Arguments go to
// vitest: flags to both runs, file filters to the first and to choose the
// second run's suites (none matched: no second run).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Suites that open, map, share, swap or damage dataset files. (Not the
 * MaxMind contract: its databases are sources, read by the compiler the
 * same way in either mode, and what it looks up in the datasets compiled
 * from them, the engine suite looks up in both.)
 */
const MEMORY_SUITES = ['test/contract/fixtures.test.ts', 'test/integration/engine.test.ts', 'test/integration/share.test.ts', 'test/integration/watch.test.ts', 'test/integration/update.test.ts'];

const require = createRequire(import.meta.url);
const pkg = require.resolve('vitest/package.json');
const vitest = join(dirname(pkg), require(pkg).bin.vitest);
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('-'));
const filters = args.filter((a) => !a.startsWith('-'));
// With file filters, the second run takes the memory suites they match.
const memorySuites = filters.length === 0 ? MEMORY_SUITES : MEMORY_SUITES.filter((s) => filters.some((f) => s.includes(f)));
const runs = [
  { memory: 'mmap', args },
  { memory: 'read', args: memorySuites.length === 0 ? null : [...flags, ...memorySuites] },
];
// Datasets the tests compile from fixture databases: one cache folder for both runs (the second finds the first's).
const cache = mkdtempSync(join(tmpdir(), 'iprecord-test-cache-'));
let failed = false;
const started = Date.now();
for (const { memory, args: runArgs } of runs) {
  if (runArgs === null) continue;
  console.log(`\n== tests with IPRECORD_MEMORY=${memory}${memory === 'read' ? ' (the suites that depend on how files are held)' : ''}\n`);
  const r = spawnSync(process.execPath, [vitest, 'run', ...runArgs], { stdio: 'inherit', env: { ...process.env, IPRECORD_MEMORY: memory, IPRECORD_TEST_CACHE: cache } });
  if (r.status !== 0) failed = true;
}
rmSync(cache, { recursive: true, force: true });
console.log(`\nnpm test: ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
