/**
 * The feed builder on several threads: a large list read in parts by
 * worker threads compiles to the same bytes as on one thread, with bad
 * lines numbered in the whole file.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildThreat } from '../../src/compile/feeds/build.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A list of addresses, blocks, hit counts, IPv6 and bad lines, in a fixed order. */
function writeList(file: string, lines: number): number[] {
  const bad: number[] = [];
  let x = 12345;
  const out: string[] = ['# Source File Date: Sat Aug 22 00:54:28 UTC 2026'];
  for (let i = 0; i < lines; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const a = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
    const kind = i % 50;
    if (kind === 7) {
      out.push(`${a}/33`);
      bad.push(out.length);
    } else if (kind === 11) out.push(`${a}\t${(x % 9) + 1}`);
    else if (kind === 13) out.push(`2001:db8:${(x & 0xffff).toString(16)}::/48`);
    else if (kind === 17) out.push(`${a}/${8 + (x % 25)}`);
    else out.push(a);
  }
  writeFileSync(file, out.join('\n') + '\n');
  return bad;
}

describe('feed builder on worker threads', () => {
  it('compiles a list read in parts like one thread, bad lines numbered in the whole file', async () => {
    const file = join(dir, 'big.txt');
    const badLines = writeList(file, 40_000);
    const config = parseThreatConfig(
      {
        feeds: [
          { name: 'big', source: file, format: 'list', categories: ['attacker'], options: { minHits: 3 } },
          { name: 'small', source: file, format: 'list', categories: ['abuser'] },
        ],
      },
      dir,
    );
    const now = new Date('2026-11-22T00:00:00Z');
    const one = await buildThreat(config, null, { threads: 1, now });
    const many = await buildThreat(config, null, { threads: 3, now, partBytes: 100_000 });
    expect(many.buffer.equals(one.buffer)).toBe(true);
    expect(many.feeds).toEqual(one.feeds);
    expect(many.meta).toEqual(one.meta);
    expect(one.feeds[0].badLines.map((b) => b.line)).toEqual(badLines);
    expect(one.meta.feeds[0].dataDate).toBe('2026-08-22T00:54:28.000Z');
  });
});
