import { defineConfig } from 'vitest/config';

/**
 * Suites that open, map, share, swap or damage dataset files: run once more with the files read into memory
 * (IPRECORD_MEMORY=read). Not the MaxMind and fixture contracts: their databases are sources, read by the compiler the
 * same way in either mode, and what it looks up in the datasets compiled from them, the engine suite looks up in both;
 * not update: its downloads and checks are the same in either mode, and the builds it swaps in are opened in both by the
 * watch suite.
 */
const MEMORY_SUITES = ['test/integration/engine.test.ts', 'test/integration/share.test.ts', 'test/integration/watch.test.ts'];

/**
 * The integration suites that start no process (compiles run in the test's own process: helpers/compile-here.ts; worker
 * threads are not processes): with the unit and property suites, the edit loop, `npm run test:quick`. Not the contract
 * suites: MaxMind's and the feeds' files are read whole there (the feeds' contract alone takes about 9 s); not asn-type,
 * which compiles the default data with the shared feeds (7 s).
 */
const QUICK_SUITES = [
  'added-member',
  'address-forms',
  'build-threads',
  'csv-cells',
  'differential',
  'download',
  'export-duckdb',
  'export-ranges',
  'seen',
  'select',
  'share',
  'sourced-member',
  'update-sources',
  'update',
  'watch',
].map((s) => `test/integration/${s}.test.ts`);

export default defineConfig({
  test: {
    // The package packed and installed, and the Dockerfile's steps as a script (two fresh installs): their own step of CI (npm run test:setup), not part of npm test.
    exclude: process.env.IPRECORD_SETUP_TEST === '1' ? [] : ['test/package/setup.test.ts', 'test/package/docker.test.ts'],
    // A test's time limit only catches a hang: no test sets a shorter one (a slow hour here runs suites 3x slower).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A test file per core (Vitest's default leaves one core free): the suites' own work fills both cores. Three at a
    // time took as long as two (191 s and 192 s, one after the other on the same tree).
    maxWorkers: '100%',
    globalSetup: ['test/helpers/environment.ts', 'test/helpers/built-entries.ts'],
    setupFiles: ['test/helpers/warnings.ts', 'test/helpers/compile-here.ts'],
    reporters: ['default'],
    // Four projects in one run (unit and quick make `npm run test:quick`), so that the read-mode suites fill the cores
    // where the others leave gaps.
    projects: [
      {
        extends: true,
        // Unit and property suites set no environment, signal handler or module state that another file reads: they
        // share a process (isolate: false) rather than each starting one and importing the sources again. Their 40
        // files took 49 s so, against 62 s each in its own process, in the same hour.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
          isolate: false,
          env: { IPRECORD_MEMORY: 'mmap' },
        },
      },
      // These set the environment, watch files and open engines over shared files: each file in a process of its own.
      { extends: true, test: { name: 'quick', include: QUICK_SUITES, env: { IPRECORD_MEMORY: 'mmap' } } },
      {
        extends: true,
        // These also start servers and child processes (the CLI, signals, locks).
        test: {
          name: 'mapped',
          include: ['test/contract/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/package/**/*.test.ts'],
          exclude: [
            ...QUICK_SUITES,
            ...(process.env.IPRECORD_SETUP_TEST === '1' ? [] : ['test/package/setup.test.ts', 'test/package/docker.test.ts']),
          ],
          env: { IPRECORD_MEMORY: 'mmap' },
        },
      },
      { extends: true, test: { name: 'read', include: MEMORY_SUITES, env: { IPRECORD_MEMORY: 'read' } } },
    ],
  },
});
