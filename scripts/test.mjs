// The test suite (vitest.config.ts): every suite once with database files
// memory-mapped (the default), and the suites that depend on how files are
// held once more with them read into memory (IPRECORD_MEMORY=read), in one
// run. Arguments go to vitest (a file filter picks the matching suites in
// both modes); the run's time is printed at the end.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const pkg = require.resolve('vitest/package.json');
const vitest = join(dirname(pkg), require(pkg).bin.vitest);
const started = Date.now();
const r = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
console.log(`\nnpm test: ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(r.status ?? 1);
