/**
 * Each test process compiles the datasets it opens in itself, not in a
 * child process as the library does (`compileInThisProcess`): a compile is
 * what a test checks, the process around it is not (the CLI's tests start
 * `iprecord build` and `update` as processes where it is). It saves a
 * Node start and the compiler's loading per compile.
 *
 * Registered before each file's tests, not when this set-up file loads:
 * the compiler's modules are imported after the test file's own, so that a
 * file that mocks a module (added-member.test.ts, the template) has the
 * compiler read its mock. A compile at a file's top level, before its
 * tests, still runs in a child process.
 */

import { beforeAll } from 'vitest';

let setCompiler: ((compile: ((job: import('../../src/dataset/locate.js').CompileJob) => string) | null) => void) | null = null;
let compileHere: ((job: import('../../src/dataset/locate.js').CompileJob) => string) | null = null;

beforeAll(async () => {
  const [{ compileInThisProcess }, { compileTo }] = await Promise.all([
    import('../../src/dataset/locate.js'),
    import('../../src/compile/run.js'),
  ]);
  setCompiler = compileInThisProcess;
  compileHere = (job) => compileTo(job.sources, job.key, job.places, () => {});
  setCompiler(compileHere);
});

/** Runs `f` with compiles in child processes, as the library makes them: for a test of what passes through that process. */
export function withCompilerProcess<T>(f: () => T): T {
  if (setCompiler === null) throw new Error('withCompilerProcess is for a test body (the compiler is registered before the tests)');
  setCompiler(null);
  try {
    return f();
  } finally {
    setCompiler(compileHere);
  }
}
