import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoLocal, ZoneClock } from '../../../src/time/zone.js';
import { seed } from '../../helpers/env.js';

const params = { seed: seed(), numRuns: 400 };
const ZONES = Intl.supportedValuesOf('timeZone');
const FROM = Date.UTC(2000, 0, 1);
const TO = Date.UTC(2037, 11, 31);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * Reference: the wall-clock time of the zone at `ms` from Intl's calendar
 * fields (not its offset text), the offset as the difference to UTC.
 */
function reference(zone: string, [ms, us]: Instant): { offset: string; current_time: string } {
  const second = Math.floor(ms / 1000) * 1000;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(second)
      .map((p) => [p.type, p.value]),
  );
  const [y, mo, d, h, mi, s] = [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second].map(Number);
  const minutes = Math.round((Date.UTC(y, mo - 1, d, h, mi, s) - second) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const micros = (ms - second) * 1000 + us;
  return {
    offset: `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`,
    current_time: `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}.${pad(micros, 6)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`,
  };
}

/** Epoch milliseconds and microseconds past them. */
type Instant = [ms: number, us: number];
const instant = fc.tuple(fc.integer({ min: FROM, max: TO }), fc.integer({ min: 0, max: 999 }));
const at = ([ms, us]: Instant) => ms + us / 1000;

describe('ZoneClock', () => {
  it('gives the offset and local time that Intl gives, for any zone and instant', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instant, (zone, t) => {
        const tz = new ZoneClock().timeZone(zone, at(t));
        const want = reference(zone, t);
        expect(tz.name).toBe(zone);
        expect(tz.offset).toBe(want.offset);
        expect(tz.current_time).toBe(want.current_time);
      }),
      params,
    );
  });

  it('stays right across transitions while it caches (time going forward, and set back)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.array(instant, { minLength: 2, maxLength: 30 }), fc.boolean(), (zone, times, backwards) => {
        const clock = new ZoneClock();
        times.sort((a, b) => (backwards ? at(b) - at(a) : at(a) - at(b)));
        for (const t of times) {
          const tz = clock.timeZone(zone, at(t));
          const want = reference(zone, t);
          expect(tz.offset).toBe(want.offset);
          expect(tz.current_time).toBe(want.current_time);
        }
      }),
      { ...params, numRuns: 100 },
    );
  });

  it('changes offset at the transition instant, to the millisecond', () => {
    const clock = new ZoneClock();
    // US daylight saving time began 2026-03-08 at 02:00 PST = 10:00 UTC.
    const t = Date.UTC(2026, 2, 8, 10);
    expect(clock.timeZone('America/Los_Angeles', t - 1)).toMatchObject({ abbr: 'PST', offset: '-0800', is_dst: false, current_time: '2026-03-08T01:59:59.999000-08:00' });
    expect(clock.timeZone('America/Los_Angeles', t)).toMatchObject({ abbr: 'PDT', offset: '-0700', is_dst: true, current_time: '2026-03-08T03:00:00.000000-07:00' });
    // EU summer time ends 2026-10-25 at 01:00 UTC.
    const e = Date.UTC(2026, 9, 25, 1);
    expect(clock.timeZone('Europe/Berlin', e - 0.001)).toMatchObject({ abbr: 'CEST', offset: '+0200', is_dst: true, current_time: '2026-10-25T02:59:59.999999+02:00' });
    expect(clock.timeZone('Europe/Berlin', e)).toMatchObject({ abbr: 'CET', offset: '+0100', is_dst: false });
  });

  it('writes abbreviations as the tz database does', () => {
    const clock = new ZoneClock();
    const jan = Date.UTC(2026, 0, 15, 12);
    const jul = Date.UTC(2026, 6, 15, 12);
    const abbr = (zone: string, ms: number) => clock.timeZone(zone, ms).abbr;
    expect([abbr('America/New_York', jan), abbr('America/New_York', jul)]).toEqual(['EST', 'EDT']);
    expect([abbr('Europe/London', jan), abbr('Europe/London', jul)]).toEqual(['GMT', 'BST']);
    expect(abbr('Asia/Kolkata', jan)).toBe('IST');
    expect(abbr('Asia/Tokyo', jan)).toBe('JST');
    expect([abbr('Australia/Sydney', jan), abbr('Australia/Sydney', jul)]).toEqual(['AEDT', 'AEST']);
    expect(clock.timeZone('Australia/Sydney', jan).is_dst).toBe(true);
    expect(abbr('America/Sao_Paulo', jan)).toBe('-03');
    expect(abbr('Asia/Kathmandu', jan)).toBe('+0545');
    expect(abbr('Asia/Dubai', jan)).toBe('+04');
    expect(abbr('UTC', jan)).toBe('UTC');
  });

  it('knows which zones the runtime has', () => {
    const clock = new ZoneClock();
    expect(clock.isValid('Europe/Paris')).toBe(true);
    expect(clock.isValid('Mars/Olympus_Mons')).toBe(false);
  });
});

describe('isoLocal', () => {
  it('spells an instant as Date#toISOString does, with microseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2199, 11, 31) }), fc.integer({ min: 0, max: 999 }), (ms, us) => {
        expect(isoLocal(ms + us / 1000)).toBe(new Date(ms).toISOString().slice(0, -1) + pad(us, 3));
      }),
      { ...params, numRuns: 2000 },
    );
  });
});
