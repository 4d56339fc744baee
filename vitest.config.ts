import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A fresh clone and npm install (30-40 s each; the Dockerfile's steps as a script too): their own step of CI (npm run test:setup), not part of npm test.
    exclude: process.env.IPRECORD_SETUP_TEST === '1' ? [] : ['test/package/setup.test.ts', 'test/package/docker.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A test file per core (Vitest's default leaves one core free): most suites wait on child processes, sockets and
    // the disk. On 2 cores npm test took 194 s so, against 302 s with one file at a time, in the same hour.
    maxWorkers: '100%',
    globalSetup: ['test/helpers/cache-dir.ts'],
    setupFiles: ['test/helpers/warnings.ts'],
    reporters: ['default'],
  },
});
