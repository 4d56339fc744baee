import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoLocal, ZoneClock, zonePeriods } from '../../../src/time/zone.js';
import { numericAbbreviation } from '../../../src/time/abbr.js';
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

  it('tells abbreviation and DST state of the period the runtime is in, for every zone, now and at its next transitions', () => {
    const table = Object.fromEntries(ZONES.map((z) => [z, zonePeriods(z)]));
    // Abbreviations the tz database writes only for periods that fall back (summer), and only for others.
    const summer = new Set<string>();
    const standard = new Set<string>();
    for (const periods of Object.values(table)) {
      for (const [key, abbr] of Object.entries(periods ?? {})) {
        const [offset, next] = key.split('>').map(Number);
        (offset > next ? summer : standard).add(abbr);
      }
    }
    const minutes = (o: string) => (o[0] === '-' ? -1 : 1) * (Number(o.slice(1, 3)) * 60 + Number(o.slice(3, 5)));
    const DAY = 86_400_000;
    // The US names that CLDR and the tz database spell alike (CLDR writes HAST for the tz database's HST).
    const US = new Set(['PST', 'PDT', 'MST', 'MDT', 'CST', 'CDT', 'EST', 'EDT', 'AKST', 'AKDT']);
    let checked = 0;
    let named = 0;
    for (const zone of ZONES) {
      // The reference: the runtime's offsets day by day for 1 200 days (its offset text, GMT-07:00).
      const long = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
      const offsetAt = (ms: number) => {
        const text = long.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
        return text === 'GMT' ? 0 : minutes(text.slice(3).replace(':', ''));
      };
      const start = Date.now();
      const days = Array.from({ length: 1200 }, (_, d) => offsetAt(start + d * DAY));
      // Now, then the day after each of the next three changes of offset.
      const instants = [0];
      for (let d = 1; d < 800 && instants.length < 4; d++) if (days[d] !== days[d - 1]) instants.push(d);
      const short = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'short' });
      for (const d of instants) {
        const ms = start + d * DAY;
        const tz = new ZoneClock().timeZone(zone, ms);
        const offset = days[d];
        expect(minutes(tz.offset), zone).toBe(offset);
        // The next other offset within 400 days.
        let following = offset;
        for (let k = d + 1; k <= d + 400 && following === offset; k++) following = days[k];
        // DST is an offset that will fall back, as the runtime's own offsets say.
        expect(tz.is_dst, `${zone} at ${new Date(ms).toISOString()}`).toBe(offset > following);
        // The tz database's abbreviation of that period, else the numeric form: never one of another period.
        expect(tz.abbr, zone).toBe(table[zone]?.[`${offset}>${following}`] ?? numericAbbreviation(offset));
        if (summer.has(tz.abbr) && !standard.has(tz.abbr)) expect(tz.is_dst, `${zone} ${tz.abbr}`).toBe(true);
        if (standard.has(tz.abbr) && !summer.has(tz.abbr)) expect(tz.is_dst, `${zone} ${tz.abbr}`).toBe(false);
        // Where the runtime has one of those US names, it is the same.
        const name = short.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? '';
        if (US.has(name)) {
          expect(tz.abbr, `${zone} at ${new Date(ms).toISOString()}`).toBe(name);
          named++;
        }
        checked++;
      }
    }
    console.log(`time zones: ${ZONES.length} zones, ${checked} periods checked, ${named} against the runtime's own US names`);
    expect(named).toBeGreaterThan(50);
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
