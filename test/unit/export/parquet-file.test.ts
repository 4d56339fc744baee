/**
 * The Parquet export's writer over a descriptor (`src/export/parquet-file.ts`):
 * the bytes a `ByteWriter` is given land in the file, in order, across its
 * flushes; and once the file's name is removed (a signal's cleanup on the
 * main thread while a worker thread writes), nothing written after makes a
 * file again, which hyparquet-writer's `fileWriter` does (it opens the file
 * by name for each megabyte it appends).
 */

import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { fileWriter, type ByteWriter } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { descriptorWriter } from '../../../src/export/parquet-file.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-parquet-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes pieces through `w` as the Parquet writer does (ensure, then bytes at `index`). */
function put(w: ByteWriter, piece: Uint8Array): void {
  w.ensure(piece.length);
  new Uint8Array(w.buffer).set(piece, w.index);
  w.index += piece.length;
  w.offset += piece.length;
}

describe('descriptorWriter', () => {
  it('writes every byte given, in order, across its megabyte flushes', () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 12 }), fc.integer(), (sizes, seed) => {
        const path = join(dir, `written-${n++}.bin`);
        const fd = openSync(path, 'w');
        const pieces = sizes.map((size, k) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + k * 7 + seed) & 255));
        try {
          const w = descriptorWriter(fd);
          for (const p of pieces) put(w, p);
          w.finish();
        } finally {
          closeSync(fd);
        }
        const expected = Buffer.concat(pieces);
        const got = readFileSync(path);
        rmSync(path);
        return got.length === expected.length && got.equals(expected);
      }),
      { numRuns: 25 },
    );
  });

  it("makes no file again once the file's name is removed; the by-name writer does", () => {
    const removedThenWritten = (make: (path: string) => { w: ByteWriter; done: () => void }, path: string) => {
      const { w, done } = make(path);
      put(w, new Uint8Array(1_500_000).fill(1));
      rmSync(path, { force: true });
      // The worker thread goes on: past a megabyte, then its end.
      put(w, new Uint8Array(1_500_000).fill(2));
      put(w, new Uint8Array(10).fill(3));
      w.finish();
      done();
      return existsSync(path);
    };
    const byDescriptor = (path: string) => {
      const fd = openSync(path, 'w');
      return { w: descriptorWriter(fd), done: () => closeSync(fd) };
    };
    // hyparquet-writer's own: a ByteWriter whose flush appends to the file by name (typed as its Writer).
    const byName = (path: string) => ({ w: fileWriter(path) as ByteWriter, done: () => {} });
    expect(removedThenWritten(byDescriptor, join(dir, 'removed.parquet.tmp'))).toBe(false);
    // The hazard the descriptor removes.
    expect(removedThenWritten(byName, join(dir, 'removed-by-name.parquet.tmp'))).toBe(true);
  });
});
