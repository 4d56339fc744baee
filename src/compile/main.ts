/**
 * The compiler process: `node compile.js '<job as JSON>'` (`CompileJob`,
 * from `dataset/locate.ts`) compiles one dataset into its place, says what
 * it does on standard error, and answers one line of JSON on standard
 * output: `{"path": …}`, or `{"error": …}` with exit code 1.
 */

import type { CompileJob } from '../dataset/locate.js';
import { compileTo } from './run.js';

try {
  const job = JSON.parse(process.argv[2] ?? '') as CompileJob;
  const path = compileTo(job.sources, job.key, job.places, (line) => process.stderr.write(`iprecord: ${line}\n`));
  process.stdout.write(JSON.stringify({ path }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ error: (e as Error).message }) + '\n');
  process.exitCode = 1;
}
