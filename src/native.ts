/**
 * iprecord's native addon (native/mmap.c, built at install by node-gyp
 * when a compiler is there): read-only memory maps of database files.
 */

import { createRequire } from 'node:module';

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
    try {
      // build/ sits beside src/ and dist/ in the package.
      addon = createRequire(import.meta.url)('../build/Release/iprecord_mmap.node') as Mapper;
    } catch (e) {
      const why =
        (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' ? 'it was not built at install (that needs a C compiler, make and Python for node-gyp)' : (e as Error).message.split('\n')[0];
      addon = { reason: `the memory-map addon is not available: ${why}; files are read into memory` };
    }
  }
  return addon;
}
