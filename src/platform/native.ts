/**
 * iprecord's native addon (native/mmap.c, built at install by node-gyp
 * when a compiler is there): read-only memory maps of database files.
 */

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { iprecordRoot } from './root.js';

export interface Mapper {
  /**
   * A read-only Buffer over the whole file, mapped: a path (opened without
   * blocking, a regular file only) or an open descriptor (left open).
   */
  map(file: string | number): Buffer;
  /** Has this process killed when its parent ends (Linux); false where it cannot. */
  dieWithParent(): boolean;
}

let addon: Mapper | { readonly reason: string } | null = null;

/** The addon, or why it cannot be used. */
export function memoryMapper(): Mapper | { readonly reason: string } {
  if (addon === null) {
    // build/ sits beside src/ and dist/ in the package.
    const require = createRequire(import.meta.url);
    const build = join(iprecordRoot(), 'build');
    try {
      addon = require(join(build, 'Release', 'iprecord_mmap.node')) as Mapper;
    } catch (e) {
      let install: unknown = null;
      try {
        install = require(join(build, 'native-install.json'));
      } catch {
        // The install script did not run.
      }
      addon = {
        reason: `the memory-map addon is not available: ${missingAddon(e as NodeJS.ErrnoException, install)}; files are read into memory`,
      };
    }
  }
  return addon;
}

/** Why the addon could not be loaded: its error, and what the install script said (`scripts/build-native.mjs`; null: it did not run). */
export function missingAddon(e: { code?: string; message: string }, install: unknown): string {
  if (e.code !== 'MODULE_NOT_FOUND') return e.message.split('\n')[0];
  const said = install as { built?: unknown; reason?: unknown } | null;
  if (said === null || typeof said !== 'object')
    return 'the install scripts did not run (npm install --ignore-scripts, or a package manager that skips them); `npm rebuild iprecord` builds it';
  if (said.built === true) return 'it was built at install but is gone';
  return `it was not built at install: ${typeof said.reason === 'string' ? said.reason : 'no reason given'}`;
}
