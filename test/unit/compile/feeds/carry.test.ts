/**
 * `carryForward` (compile/feeds/seen.ts): the days of seen.bin never go
 * backwards, never lie before `FIRST_DAY` nor after the build's own day,
 * whatever the clocks of the downloads say; a list left out of a build
 * keeps its days for KEEP_DAYS and picks them up again when it returns.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { carryForward, dayOf, FIRST_DAY, KEEP_DAYS, type Held, type SeenList } from '../../../../src/compile/feeds/seen.js';

const DAY = dayOf(Date.UTC(2026, 5, 1));
const held = (name: string, day: number, v4: number[]): Held => ({ name, day, v4, v6: [] });
/** The (start, end, first, last) rows of a list's IPv4 ranges. */
const rows = (l: SeenList | undefined) => (l === undefined ? [] : [...l.v4]);
const byName = (lists: readonly SeenList[]) => new Map(lists.map((l) => [l.name, l]));

describe('first and last seen carried from build to build', () => {
  it('keeps a list as it was when its download is dated before its last one (a clock set back), and says so', () => {
    const warned: string[] = [];
    const first = byName(carryForward(new Map(), [held('a', DAY, [10, 20])], DAY));
    const back = carryForward(first, [held('a', DAY - 3, [10, 30])], DAY - 3, (l) => warned.push(l));
    expect(back).toEqual([first.get('a')]);
    expect(warned).toEqual([
      'a: its download is dated 2026-05-29, before its last download, 2026-06-01 (is the clock right?); its first and last seen are kept as they were',
    ]);
  });

  it('refuses a day before FIRST_DAY (a clock not set) and dates a download ahead of the build by the build', () => {
    const warned: string[] = [];
    expect(carryForward(new Map(), [held('a', 1, [10, 20])], 1, (l) => warned.push(l))).toEqual([]);
    expect(warned[0]).toMatch(/^a: its download is dated 1970-01-02, before 2020-01-01/);
    const ahead = carryForward(new Map(), [held('a', DAY + 40, [10, 20])], DAY);
    expect(ahead[0].latest).toBe(DAY);
    expect(rows(ahead[0])).toEqual([10, 20, DAY, DAY]);
  });

  it('keeps the days of a list left out for KEEP_DAYS, picked up again when it returns', () => {
    const one = byName(carryForward(new Map(), [held('a', DAY, [10, 20]), held('b', DAY, [50, 60])], DAY));
    // b left out of the configuration for a month: kept as it was.
    const without = byName(carryForward(one, [held('a', DAY + 30, [10, 20])], DAY + 30));
    expect(without.get('b')).toEqual(one.get('b'));
    // Back: its first seen is the first build's.
    const back = byName(carryForward(without, [held('a', DAY + 31, [10, 20]), held('b', DAY + 31, [50, 60])], DAY + 31));
    expect(rows(back.get('b'))).toEqual([50, 60, DAY, DAY + 31]);
    // Left out for longer than KEEP_DAYS: gone.
    expect(byName(carryForward(one, [], DAY + KEEP_DAYS + 1)).has('b')).toBe(false);
    expect(byName(carryForward(one, [], DAY + KEEP_DAYS)).has('b')).toBe(true);
  });

  it("never moves a list's days backwards, before FIRST_DAY or past the build, over builds with clocks anywhere", () => {
    const step = fc.record({
      today: fc.integer({ min: FIRST_DAY - 400, max: DAY + 400 }),
      // The download's day about the build's: a file dated ahead, behind, or the build's.
      skew: fc.integer({ min: -30, max: 30 }),
      listed: fc.boolean(),
      start: fc.integer({ min: 0, max: 40 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        let lists = new Map<string, SeenList>();
        let latest = -Infinity;
        for (const s of steps) {
          const h = s.listed ? [held('a', s.today + s.skew, [s.start, s.start + 10])] : [];
          const next = byName(carryForward(lists, h, s.today, () => {}));
          const a = next.get('a');
          if (a !== undefined) {
            expect(a.latest).toBeGreaterThanOrEqual(latest);
            expect(a.latest).toBeGreaterThanOrEqual(FIRST_DAY);
            for (let i = 0; i < a.v4.length; i += 4) {
              expect(a.v4[i + 2]).toBeGreaterThanOrEqual(FIRST_DAY);
              expect(a.v4[i + 2]).toBeLessThanOrEqual(a.v4[i + 3]);
              expect(a.v4[i + 3]).toBeLessThanOrEqual(a.latest);
            }
            // A list changed by this build is dated no later than the build.
            if (a !== lists.get('a')) expect(a.latest).toBeLessThanOrEqual(s.today);
            latest = a.latest;
          } else latest = -Infinity;
          lists = next;
        }
      }),
    );
  });
});
