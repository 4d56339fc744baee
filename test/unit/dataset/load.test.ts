/**
 * `dataset/load.ts`: a snapshot's file is opened only as a regular file
 * (a FIFO or a directory refused at once, naming the file), closed after
 * its work whether that returns, throws or settles later; its bytes read
 * whole into shared memory, in parallel chunks, as the file holds them
 * (any size, chunk edges included), or mapped where the addon is; a file
 * cut while it is read is an error naming the byte it ended at.
 */

import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidDatasetError } from '../../../src/contract/errors.js';
import { bytes, bytesSync, readWhole, sharedBuffer, withFile, wrapRead } from '../../../src/dataset/load.js';
import { memoryMapper } from '../../../src/platform/native.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether a descriptor is still open. */
const isOpen = (fd: number) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe('loading a file of a snapshot', () => {
  it('reads a regular file whole, as it holds it, into shared memory or a mapping', async () => {
    const mapper = memoryMapper();
    const sizes = fc.oneof(fc.nat(5000), fc.constantFrom((8 << 20) - 1, 8 << 20, (8 << 20) + 1, (16 << 20) + 7));
    await fc.assert(
      fc.asyncProperty(sizes, fc.nat(255), async (size, fill) => {
        const path = join(dir, `f-${size}`);
        const content = Buffer.alloc(size);
        for (let i = 0; i < size; i += 4093) content[i] = (i + fill) & 255;
        writeFileSync(path, content);
        const read = await withFile(path, (f) => bytes(f, null));
        expect(read.buffer).toBeInstanceOf(SharedArrayBuffer);
        expect(read.equals(content)).toBe(true);
        expect(withFile(path, (f) => bytesSync(f, null)).equals(content)).toBe(true);
        if ('map' in mapper && size > 0) expect(withFile(path, (f) => bytesSync(f, mapper)).equals(content)).toBe(true);
        const stamps = withFile(path, (f) => [f.stamp, f.stat.size]);
        expect(stamps[1]).toBe(BigInt(size));
      }),
      { numRuns: 20 },
    );
  });

  it('closes the file after its work: returned, thrown, resolved or rejected; errors name the file', async () => {
    const path = join(dir, 'small');
    writeFileSync(path, 'abc');
    let fd = -1;
    withFile(path, (f) => (fd = f.fd));
    expect(isOpen(fd)).toBe(false);
    expect(() =>
      withFile(path, (f) => {
        fd = f.fd;
        throw new Error('boom');
      }),
    ).toThrow(new InvalidDatasetError(`Cannot read database ${path}: boom`));
    expect(isOpen(fd)).toBe(false);
    await withFile(path, async (f) => (fd = f.fd));
    expect(isOpen(fd)).toBe(false);
    await expect(
      withFile(path, async (f) => {
        fd = f.fd;
        throw new InvalidDatasetError('as it is');
      }),
    ).rejects.toThrow(/^as it is$/);
    expect(isOpen(fd)).toBe(false);
    expect(() => wrapRead('x', new InvalidDatasetError('kept'))).toThrow(/^kept$/);
  });

  it.skipIf(process.platform === 'win32')('refuses what is not a regular file at once, naming it', () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    for (const path of [fifo, sub, '/dev/zero', join(dir, 'absent')])
      expect(() => withFile(path, () => 0), path).toThrow(new RegExp(`^Cannot read database ${path}: `));
  });

  it('says where a file cut while it is read ended', async () => {
    const path = join(dir, 'cut');
    writeFileSync(path, Buffer.alloc(1000));
    const fd = openSync(path, 'r');
    try {
      await expect(readWhole(fd, 2000)).rejects.toThrow('the file ended at byte 1000 of 2000 (it changed while it was read)');
    } finally {
      closeSync(fd);
    }
    expect(sharedBuffer(3).buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});
