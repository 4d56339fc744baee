import { defineConfig } from 'tsup';

// `npm run build` empties dist/ first; the two builds run side by side.
export default defineConfig([
  {
    // ESM: the library, the CLI and the worker threads (feed builder, enrich) share one chunk of code.
    // The CommonJS build starts the same ESM worker file (dist/threat-worker.js).
    entry: { index: 'src/index.ts', cli: 'src/cli/index.ts', 'threat-worker': 'src/threat/worker.ts', 'enrich-worker': 'src/cli/enrich-worker.ts' },
    format: ['esm'],
    dts: { entry: { index: 'src/index.ts' } },
    splitting: true,
    target: 'node20',
  },
  {
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    dts: { entry: { index: 'src/index.ts' } },
    target: 'node20',
    // import.meta.url in the CommonJS build.
    shims: true,
  },
]);
