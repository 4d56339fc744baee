/**
 * The compiler process: `node compile.js '<job as JSON>'` (`CompileJob`,
 * from `dataset/locate.ts`) compiles one dataset into its place, says what
 * it does on standard error (with a progress line when that is a
 * terminal: step, share done, time left), and answers one line of JSON on
 * standard output: `{"path": …}`, or `{"error": …}` with exit code 1.
 */

import type { CompileJob } from '../dataset/locate.js';
import { memoryMapper } from '../platform/native.js';

// A build killed outright (SIGKILL) must not leave its compile running and writing into a directory the next build
// removed: the kernel kills this process with its parent where it can (Linux); elsewhere, and as a second check, each
// step and the write stop when the parent is gone (this process then has another parent). This is asked for before
// the compiler's code loads (a second and more on a busy machine), so that a parent killed meanwhile ends this
// process at once.
const mapper = memoryMapper();
if ('dieWithParent' in mapper) mapper.dieWithParent();
let parent = process.ppid;
const orphaned = () => {
  if (process.ppid !== parent) process.exit(1);
};

try {
  const job = JSON.parse(process.argv[2] ?? '') as CompileJob;
  // The parent may have died before this process asked to die with it.
  parent = job.parent ?? parent;
  orphaned();
  const [{ terminalProgress }, { compileTo }] = await Promise.all([import('./progress.js'), import('./run.js')]);
  orphaned();
  const { progress, say } = terminalProgress();
  const stepped = (step: string, done: number) => {
    orphaned();
    progress(step, done);
  };
  const path = compileTo(job.sources, job.key, job.places, say, stepped);
  process.stdout.write(JSON.stringify({ path }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ error: (e as Error).message }) + '\n');
  process.exitCode = 1;
}
