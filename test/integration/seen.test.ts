/**
 * First and last seen, carried across builds (`compile/feeds/seen.ts`):
 * a list whose entries appear, stay, vanish and come back over nine
 * builds days or weeks apart, each build swapped in as `iprecord build`
 * and `update` do, against a reference that replays the lists' history
 * address by address (every address of the two IPv4 blocks the entries
 * are drawn from, and the IPv6 entries and their neighbours).
 */

import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { dayOf, decodeSeen, encodeSeen, KEEP_DAYS, type SeenList } from '../../src/compile/feeds/seen.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { SEEN_FILE } from '../../src/dataset/store.js';
import { prng, seed } from '../helpers/env.js';

/** Entries drawn from: single addresses and small blocks of two /24s, and IPv6 addresses. */
const POOL: readonly { text: string; v4?: [number, number]; v6?: bigint }[] = [
  ...Array.from({ length: 24 }, (_, i) => {
    const base = (i < 12 ? 0xc6336400 : 0xcb007100) + (i % 12) * 20;
    const size = [1, 1, 2, 4, 8][i % 5];
    const at = base - (base % size);
    const dotted = [at >>> 24, (at >>> 16) & 255, (at >>> 8) & 255, at & 255].join('.');
    return { text: size === 1 ? dotted : `${dotted}/${32 - Math.log2(size)}`, v4: [at, at + size - 1] as [number, number] };
  }),
  ...Array.from({ length: 6 }, (_, i) => ({ text: `2001:db8::${(i * 3 + 1).toString(16)}`, v6: (0x20010db8n << 96n) + BigInt(i * 3 + 1) })),
];

const at6 = (ranges: readonly (readonly [bigint, bigint, number, number])[], x: bigint) => ranges.find(([s, e]) => s <= x && x <= e) ?? null;
/** The range of flat IPv4 ranges (start, end, first, last) that holds `x`, as a tuple. */
function at4(ranges: Uint32Array, x: number): [number, number, number, number] | null {
  for (let i = 0; i < ranges.length; i += 4) if (ranges[i] <= x && x <= ranges[i + 1]) return [ranges[i], ranges[i + 1], ranges[i + 2], ranges[i + 3]];
  return null;
}

describe('seen.bin', () => {
  it('refuses bytes that are not one, cut short or with bytes after its lists, with a typed error', () => {
    expect(() => decodeSeen(Buffer.from('not a seen file'))).toThrow(/not a valid seen.bin: bad magic/);
    const one = encodeSeen([{ name: 'a', latest: 20_000, v4: Uint32Array.of(1, 2, 19_999, 20_000), v6: [[1n, 5n, 20_000, 20_000]] }]);
    expect(decodeSeen(one).get('a')?.v6).toEqual([[1n, 5n, 20_000, 20_000]]);
    expect(() => decodeSeen(one.subarray(0, one.length - 3))).toThrow(/not a valid seen.bin: the IPv6 ranges of a run past the end/);
    expect(() => decodeSeen(Buffer.concat([one, Buffer.alloc(2)]))).toThrow(/2 bytes after the last list/);
  });
});

describe('first and last seen across builds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-seen-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('carries each address first seen, last seen and forgets it 90 days after, as a replay of the history says', async () => {
    const list = join(dir, 'list.txt');
    const config = parseThreatConfig({ feeds: [{ name: 'drawn', source: list, format: 'list', categories: ['attacker'] }] }, dir);
    const next = prng(seed());
    // Days between builds: a day, weeks, the 90 days an entry is kept exactly, and once past them.
    const gaps = [0, 1, 1, 14, 30, 90, 95, 2, 60];
    let day = dayOf(Date.UTC(2026, 0, 1));
    /** The reference: each probe's first and last day, by replaying which builds held it. */
    const truth = new Map<string, { first: number; last: number } | null>();
    const probes4: number[] = [];
    for (const base of [0xc6336400, 0xcb007100]) for (let a = base; a < base + 256; a++) probes4.push(a);
    const probes6 = POOL.filter((p) => p.v6 !== undefined).flatMap((p) => [p.v6! - 1n, p.v6!, p.v6! + 1n]);
    let seen: SeenList | undefined;
    let entries = 0;
    for (const gap of gaps) {
      day += gap;
      const held = POOL.filter(() => next() < 0.55);
      entries += held.length;
      writeFileSync(list, held.map((p) => p.text).join('\n') + '\n');
      // The list's date is its file's (a download's time, a local file's modification time).
      const time = new Date(day * 86_400_000 + 3_600_000);
      utimesSync(list, time, time);
      const { buildDir } = await buildAndSwap(config, dir, { now: time, dataset: false });
      const replay = (key: string, holds: boolean) => {
        const before = truth.get(key) ?? null;
        if (holds) truth.set(key, { first: before?.first ?? day, last: day });
        else if (before !== null && day - before.last > KEEP_DAYS) truth.set(key, null);
      };
      for (const a of probes4)
        replay(
          `4:${a}`,
          held.some((p) => p.v4 !== undefined && p.v4[0] <= a && a <= p.v4[1]),
        );
      for (const x of probes6)
        replay(
          `6:${x}`,
          held.some((p) => p.v6 === x),
        );
      seen = decodeSeen(readFileSync(join(buildDir, SEEN_FILE))).get('drawn');
      expect(seen?.latest).toBe(day);
      const wrong: string[] = [];
      const check = (key: string, got: readonly [unknown, unknown, number, number] | null) => {
        const want = truth.get(key) ?? null;
        const answer = got === null ? null : { first: got[2], last: got[3] };
        if (JSON.stringify(answer) !== JSON.stringify(want)) wrong.push(`${key} on day ${day}: ${JSON.stringify(answer)}, the replay ${JSON.stringify(want)}`);
      };
      for (const a of probes4) check(`4:${a}`, at4(seen!.v4, a));
      for (const x of probes6) check(`6:${x}`, at6(seen!.v6, x));
      expect(wrong.slice(0, 5)).toEqual([]);
    }
    // A damaged seen.bin does not stop the next build: its days start again, and a warning says so.
    const current = readFileSync(join(dir, 'current'), 'utf8').trim();
    writeFileSync(join(dir, current, SEEN_FILE), 'damaged');
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
    process.on('warning', listen);
    try {
      const time = new Date((day + 1) * 86_400_000 + 3_600_000);
      utimesSync(list, time, time);
      const { buildDir } = await buildAndSwap(config, dir, { now: time, dataset: false });
      const fresh = decodeSeen(readFileSync(join(buildDir, SEEN_FILE))).get('drawn')!;
      for (let i = 0; i < fresh.v4.length; i += 4) expect([fresh.v4[i + 2], fresh.v4[i + 3]]).toEqual([day + 1, day + 1]);
      await new Promise((r) => setImmediate(r));
      expect(warned.join('\n')).toMatch(/not a valid seen.bin: bad magic\. First and last seen start again from this build/);
    } finally {
      process.off('warning', listen);
    }
    // The history had all of it: addresses listed again after a gap, and forgotten after the 95 days.
    expect(entries).toBeGreaterThan(60);
    const firsts = new Set([...truth.values()].filter((t) => t !== null).map((t) => t!.first));
    expect(firsts.size).toBeGreaterThan(2);
    // Neighbours with the same days are one range: no more ranges than entries drawn.
    expect(seen!.v4.length / 4).toBeLessThanOrEqual(POOL.length);
  });
});
