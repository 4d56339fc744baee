/**
 * A source module bundled into one JavaScript file (tsup, as the package's
 * entries are built), for a child process to import with plain `node`:
 * under tsx a child takes about 0.4 s of CPU more to start, and the tests
 * that start several of them at once pay it each time.
 */

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'tsup';

/** The `file:` URL of `source` (a path from the package root) bundled into `dir` (the test's scratch folder). */
export async function bundled(source: string, dir: string): Promise<string> {
  await build({
    entry: { module: source },
    format: ['esm'],
    target: 'node20',
    outDir: dir,
    dts: false,
    config: false,
    silent: true,
    splitting: false,
  });
  return pathToFileURL(join(dir, 'module.js')).href;
}
