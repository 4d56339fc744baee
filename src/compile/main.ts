/**
 * The compiler process: `node compile.js '<job as JSON>'` (`CompileJob`,
 * from `dataset/locate.ts`) compiles one dataset into its place, says what
 * it does on standard error (with a progress line when that is a
 * terminal: step, share done, time left), and answers one line of JSON on
 * standard output: `{"path": …}`, or `{"error": …}` with exit code 1.
 */

import type { CompileJob } from '../dataset/locate.js';
import { compileTo } from './run.js';

try {
  const job = JSON.parse(process.argv[2] ?? '') as CompileJob;
  const started = Date.now();
  // On a terminal, a line that tells the step, how far and about how long is left; rewritten in place.
  const tty = process.stderr.isTTY === true;
  const clear = () => tty && process.stderr.write('\r\x1b[K');
  const progress = (step: string, done: number) => {
    if (!tty) return;
    const elapsed = (Date.now() - started) / 1000;
    const left = done > 0.04 ? `, about ${Math.max(1, Math.round((elapsed * (1 - done)) / done))} s left` : '';
    process.stderr.write(`\r\x1b[Kiprecord: ${step} (${Math.round(done * 100)} %, ${Math.round(elapsed)} s${left})`);
  };
  const say = (line: string) => {
    clear();
    process.stderr.write(`iprecord: ${line}\n`);
  };
  const path = compileTo(job.sources, job.key, job.places, say, progress, job.threat);
  process.stdout.write(JSON.stringify({ path }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ error: (e as Error).message }) + '\n');
  process.exitCode = 1;
}
