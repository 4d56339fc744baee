// The test suite, once per way of holding database files: memory-mapped
// (the default) and read into memory (IPRECORD_MEMORY=read). Arguments go
// to vitest.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const pkg = require.resolve('vitest/package.json');
const vitest = join(dirname(pkg), require(pkg).bin.vitest);
let failed = false;
for (const memory of ['mmap', 'read']) {
  console.log(`\n== tests with IPRECORD_MEMORY=${memory}\n`);
  const r = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, IPRECORD_MEMORY: memory } });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
