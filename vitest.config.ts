import { defineConfig } from 'vitest/config';

/**
 * Suites that open, map, share, swap or damage dataset files: run once more with the files read into memory
 * (IPRECORD_MEMORY=read). Not the MaxMind and fixture contracts: their databases are sources, read by the compiler the
 * same way in either mode, and what it looks up in the datasets compiled from them, the engine suite looks up in both;
 * not update: its downloads and checks are the same in either mode, and the builds it swaps in are opened in both by the
 * watch suite.
 */
const MEMORY_SUITES = ['test/integration/engine.test.ts', 'test/integration/share.test.ts', 'test/integration/watch.test.ts'];

export default defineConfig({
  test: {
    // A fresh clone and npm install (30-40 s each; the Dockerfile's steps as a script too): their own step of CI (npm run test:setup), not part of npm test.
    exclude: process.env.IPRECORD_SETUP_TEST === '1' ? [] : ['test/package/setup.test.ts', 'test/package/docker.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A test file per core (Vitest's default leaves one core free): the suites' own work fills both cores. Three at a
    // time took as long as two (191 s and 192 s, one after the other on the same tree).
    maxWorkers: '100%',
    globalSetup: ['test/helpers/environment.ts', 'test/helpers/built-entries.ts'],
    setupFiles: ['test/helpers/warnings.ts'],
    reporters: ['default'],
    // Three projects in one run, so that the read-mode suites fill the cores where the others leave gaps.
    projects: [
      {
        extends: true,
        // Unit and property suites set no environment, signal handler or module state that another file reads: they
        // share a process (isolate: false) rather than each starting one and importing the sources again. Their 40
        // files took 49 s so, against 62 s each in its own process, in the same hour.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'], isolate: false, env: { IPRECORD_MEMORY: 'mmap' } },
      },
      {
        extends: true,
        // These start servers, child processes and watchers, set the environment and open engines over shared files:
        // each file in a process of its own.
        test: { name: 'mapped', include: ['test/contract/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/package/**/*.test.ts'], env: { IPRECORD_MEMORY: 'mmap' } },
      },
      { extends: true, test: { name: 'read', include: MEMORY_SUITES, env: { IPRECORD_MEMORY: 'read' } } },
    ],
  },
});
