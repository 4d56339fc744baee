import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePosixTz } from '../../../../src/compile/zones/tzif.js';
import { laterRelease } from '../../../../src/time/zoneinfo.js';
import { seed } from '../../../helpers/env.js';

const params = { seed: seed(), numRuns: 300 };
const year = fc.integer({ min: 1971, max: 2199 });
const isLeap = (y: number) => new Date(Date.UTC(y, 1, 29)).getUTCMonth() === 1;

// The footers of the system's files use only Mm.w.d; these forms are POSIX's others, checked against Date's calendar.
describe('POSIX TZ rules (TZif footers)', () => {
  it('Jn counts 1 to 365 without February 29; n counts 0 to 365 with it', () => {
    fc.assert(
      fc.property(year, fc.integer({ min: 1, max: 365 }), (y, n) => {
        const [on] = parsePosixTz(`AAA0BBB,J${n}/0,J365/23`).transitions(y);
        const want = new Date(Date.UTC(y, 0, n + (isLeap(y) && n >= 60 ? 1 : 0)));
        expect(new Date(on.at * 1000).toISOString()).toBe(want.toISOString());
        const [zero] = parsePosixTz(`AAA0BBB,${n - 1}/0,365/23`).transitions(y);
        expect(zero.at * 1000).toBe(Date.UTC(y, 0, n));
      }),
      params,
    );
  });

  it('Mm.w.d is the w-th weekday d of month m (5: the last), at a time that may be negative or past 24 hours', () => {
    fc.assert(
      fc.property(
        year,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: -167, max: 167 }),
        (y, m, w, d, h) => {
          // Standard time 3 hours west: the start is given in it.
          const rule = parsePosixTz(`<-03>3<-02>,M${m}.${w}.${d}/${h},M${m === 12 ? 1 : m + 1}.1.0`);
          const on = rule.transitions(y).find((t) => t.abbr === '-02')!;
          const days = Array.from({ length: 31 }, (_, i) => new Date(Date.UTC(y, m - 1, i + 1))).filter(
            (t) => t.getUTCMonth() === m - 1 && t.getUTCDay() === d,
          );
          const day = days[Math.min(w, days.length) - 1];
          expect(on.at * 1000).toBe(day.getTime() + h * 3_600_000 + 3 * 3_600_000);
          expect(on.utoff).toBe(-2 * 3600);
        },
      ),
      params,
    );
  });

  it('reads offsets east and west, with minutes, and the default daylight offset', () => {
    expect(parsePosixTz('<+0545>-5:45').std).toEqual({ abbr: '+0545', utoff: 5 * 3600 + 45 * 60 });
    expect(parsePosixTz('<+0545>-5:45').transitions(2030)).toEqual([]);
    const [pdt, pst] = parsePosixTz('PST8PDT,M3.2.0,M11.1.0').transitions(2030);
    expect([pdt.abbr, pdt.utoff, new Date(pdt.at * 1000).toISOString()]).toEqual(['PDT', -7 * 3600, '2030-03-10T10:00:00.000Z']);
    expect([pst.abbr, pst.utoff, new Date(pst.at * 1000).toISOString()]).toEqual(['PST', -8 * 3600, '2030-11-03T09:00:00.000Z']);
    expect(() => parsePosixTz('PST8PDT,M3.2.0')).toThrow(/unreadable TZ rule/);
    // Values out of their range: a footer a damaged or crafted file carries, refused (the zone table then gives way to the package's).
    for (const bad of [
      'XXX-999YYY,M3.2.0,M11.1.0',
      'AAA25',
      'AAA0BBB-25,M3.2.0,M11.1.0',
      'AAA0:60',
      'PST8PDT,M0.2.0,M11.1.0',
      'PST8PDT,M99.2.0,M11.1.0',
      'PST8PDT,M3.6.0,M11.1.0',
      'PST8PDT,M3.0.0,M11.1.0',
      'PST8PDT,M3.2.7,M11.1.0',
      'PST8PDT,J0,J365',
      'PST8PDT,J366,J365',
      'PST8PDT,0,366',
      'PST8PDT,M3.2.0/168,M11.1.0',
    ])
      expect(() => parsePosixTz(bad), bad).toThrow(/unreadable TZ rule/);
    for (const good of [
      '<-03>3<-02>,M3.5.0/-2,M10.5.0/-1',
      'AAA0BBB,J1/0,J365/167',
      'AAA0BBB,0/-167,365/23',
      '<+1345>-13:45<+1445>,M9.5.0/2:45,M4.1.0/3:45',
    ])
      expect(() => parsePosixTz(good), good).not.toThrow();
  });
});

describe('tz releases', () => {
  it('order by year, then by letters (2026z before 2026aa)', () => {
    expect(laterRelease('2026g', '2026f')).toBe(true);
    expect(laterRelease('2026f', '2026f')).toBe(false);
    expect(laterRelease('2027a', '2026z')).toBe(true);
    expect(laterRelease('2026aa', '2026z')).toBe(true);
    expect(laterRelease('2025z', '2026a')).toBe(false);
  });
});
