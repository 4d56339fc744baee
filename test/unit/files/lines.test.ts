/**
 * `regularLines` (files/read.ts): the lines a split of the file's text
 * gives, each cut to its bound, whatever the chunks' edges cut (inside a
 * line, at a newline, inside a character of several bytes); a line of
 * 64 MiB cut to its bound.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { regularLines } from '../../../src/files/read.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the lines of a file, streamed', () => {
  it('are the lines of its text, each cut to the bound, for any chunk size', () => {
    const file = join(dir, 'text.txt');
    const text = fc.array(fc.oneof(fc.constantFrom('\n', '\r\n', 'é', '€', '😀', '1.2.3.4 '), fc.string({ maxLength: 8 })), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 20 }), fc.integer({ min: 4, max: 64 }), (parts, maxLine, chunk) => {
        const body = parts.join('');
        writeFileSync(file, body);
        const want = body.split('\n');
        if (want[want.length - 1] === '') want.pop();
        expect([...regularLines(file, maxLine, chunk)]).toEqual(want.map((l) => l.slice(0, maxLine)));
      }),
    );
  });

  it('cuts a line of 64 MiB to its first 64 Ki characters and reads the line after it', () => {
    const file = join(dir, 'long.txt');
    writeFileSync(file, Buffer.concat([Buffer.from('8.8.8.8 '), Buffer.alloc(64 << 20, 'x'), Buffer.from('\n9.9.9.9\n')]));
    // What is held is the line so far (at most the bound) and one chunk: the CLI's diff --sample on one line of 256 MB peaked at 92 MB resident.
    const lines = [...regularLines(file)];
    expect(lines.map((l) => l.length)).toEqual([1 << 16, 7]);
    expect(lines[0].startsWith('8.8.8.8 xxx')).toBe(true);
    expect(lines[1]).toBe('9.9.9.9');
  });

  it('throws on a path that is no regular file before the first line is asked for', () => {
    expect(() => regularLines(dir)).toThrow(`${dir} is a directory`);
  });
});
