import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A fresh clone and npm install (30-40 s): its own step of CI (npm run test:setup), not part of npm test.
    exclude: process.env.IPRECORD_SETUP_TEST === '1' ? [] : ['test/package/setup.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/helpers/cache-dir.ts'],
    setupFiles: ['test/helpers/warnings.ts'],
    reporters: ['default'],
  },
});
