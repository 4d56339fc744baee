/**
 * iprecord's own package root: the folder whose package.json is named
 * iprecord, above this module both in the sources (`src/platform/`) and
 * in the built package (`dist/`). It holds `data/` after install and the
 * native addon's `build/`.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (holds `data/` after install, and `build/`). */
export function iprecordRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'iprecord') return dir;
    dir = dirname(dir);
  }
  return dirname(fileURLToPath(import.meta.url));
}
