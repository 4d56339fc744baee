import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';

const PUBLIC = { index: 'src/index.ts', build: 'src/build.ts', export: 'src/export.ts', server: 'src/server/index.ts' };
/** Every ESM entry by its name in dist/ (the test set-up builds the same ones: test/helpers/built-entries.ts). */
export const ENTRIES = {
  ...PUBLIC,
  cli: 'src/cli/index.ts',
  compile: 'src/compile/main.ts',
  'threat-worker': 'src/compile/feeds/worker.ts',
  'enrich-worker': 'src/cli/enrich-worker.ts',
  'verify-worker': 'src/dataset/verify-worker.ts',
  'parquet-worker': 'src/export/parquet-worker.ts',
  'range-csv-worker': 'src/compile/range-csv-worker.ts',
  'counts-worker': 'src/server/counts-worker.ts',
};
export const TARGET = 'node20';

/** Where the bytes entry's build takes `src/platform/bytes-web.ts` for `src/platform/bytes.ts` (Buffer's natives). */
const WEB_BYTES: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'iprecord-web-bytes',
  setup(build) {
    build.onResolve({ filter: /platform\/bytes\.js$/ }, (args) => ({
      path: resolve(args.resolveDir, args.path.replace(/\.js$/, '-web.ts')),
    }));
  },
};

/**
 * `iprecord/bytes`: one file with nothing to resolve (its dependency and JSON inlined), Buffer's natives replaced, for
 * Workers and browsers (a page imports it as it is). ES2022: what their runtimes of the last years run. The test set-up
 * builds the same (test/helpers/built-entries.ts).
 */
export const BYTES_BUILD = {
  entry: { bytes: 'src/bytes.ts' },
  format: ['esm'],
  platform: 'neutral',
  target: 'es2022',
  noExternal: [/.*/],
  esbuildPlugins: [WEB_BYTES],
} satisfies Options;

// `npm run build` empties dist/ first; the two builds run side by side.
export default defineConfig([
  {
    // ESM: the library, the server, the CLI and the worker threads (feed builder, enrich, dataset check, Parquet export, range CSVs) share chunks of code.
    entry: ENTRIES,
    format: ['esm'],
    dts: { entry: PUBLIC },
    splitting: true,
    target: TARGET,
    // The CommonJS entries: `require()` loads the ESM build itself (require(esm), on by default from Node 20.19), so
    // both module systems share one copy of the code and of its state. Their types, .d.cts: scripts/cjs-types.mjs.
    onSuccess: async () => {
      for (const name of Object.keys(PUBLIC))
        writeFileSync(`dist/${name}.cjs`, `'use strict';\nmodule.exports = require('./${name}.js');\n`);
    },
  },
  { ...BYTES_BUILD, dts: { entry: BYTES_BUILD.entry } },
]);
