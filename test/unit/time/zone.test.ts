import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoLocal, PACKAGE_ZONES, ZoneClock, type ZoneTable } from '../../../src/time/zone.js';
import { readZoneinfo } from '../../../src/compile/zones/table.js';

const TZDATA = PACKAGE_ZONES.tzdata;
import ZONE_TABLE from '../../../src/time/zones.json';
import { seed } from '../../helpers/env.js';

const params = { seed: seed(), numRuns: 400 };
const ZONES = Object.keys(ZONE_TABLE.zones);
const FROM = Date.UTC(2020, 0, 1);
const TO = Date.UTC(2037, 11, 31);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** A zone's transitions as the system's zoneinfo gives them (zdump): from each instant, offset in seconds east, abbreviation, isdst. */
interface Period {
  readonly from: number;
  readonly gmtoff: number;
  readonly abbr: string;
  readonly isdst: boolean;
}

/** The system's tz database release (Debian's tzdata.zi), or null. */
const SYSTEM_TZ = (() => {
  try {
    return /^# version (\S+)/.exec(readFileSync('/usr/share/zoneinfo/tzdata.zi', 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
})();
const ZDUMP = ['/usr/sbin/zdump', '/usr/bin/zdump'].find((p) => existsSync(p));
const REFERENCE = ZDUMP !== undefined && SYSTEM_TZ === TZDATA;
/** The system's zoneinfo as the compiler reads it (any release: zdump reads the same files). */
const SYSTEM_TABLE = ZDUMP !== undefined && SYSTEM_TZ !== null ? readZoneinfo('/usr/share/zoneinfo', SYSTEM_TZ, ZONES) : null;
if (!REFERENCE && process.env.IPRECORD_REQUIRE_ZONEINFO === '1') throw new Error(`IPRECORD_REQUIRE_ZONEINFO=1: zdump and zoneinfo at tz ${TZDATA} are required (found ${SYSTEM_TZ ?? 'none'})`);
if (!REFERENCE) console.warn(`skipping the zoneinfo reference: it needs zdump and the system's tz database at release ${TZDATA} (apt install tzdata); found ${SYSTEM_TZ ?? 'none'}`);

/** Seconds east of UTC of zdump's offset text: `-08`, `+0530`, `+054500`. */
function seconds(text: string): number {
  const sign = text[0] === '-' ? -1 : 1;
  const [h, m = '0', sec = '0'] = [text.slice(1, 3), text.slice(3, 5) || undefined, text.slice(5, 7) || undefined];
  return sign * (Number(h) * 3600 + Number(m) * 60 + Number(sec));
}

/** Every zone's periods from 2019 to 2038 by zdump's table (`-i`, one process): the one in effect in 2019, then one per transition. */
function systemPeriods(): Map<string, Period[]> {
  const out = new Map<string, Period[]>();
  const text = execFileSync(ZDUMP!, ['-i', '-c', '2019,2038', ...ZONES], { encoding: 'utf8', maxBuffer: 1 << 28 });
  let list: Period[] = [];
  for (const line of text.split('\n')) {
    const zone = /^TZ="(.*)"$/.exec(line);
    if (zone !== null) out.set(zone[1], (list = []));
    const f = line.split('\t');
    if (zone !== null || f.length < 3) continue;
    // "2026-03-08	03	-07	PDT	1": the local date and time the period starts, its offset, abbreviation (left out when it is the offset) and DST flag.
    const gmtoff = seconds(f[2]);
    let from = -Infinity;
    if (f[0] !== '-') {
      const [y, mo, d] = f[0].split('-').map(Number);
      const [hh, mm = 0, ss = 0] = f[1].split(':').map(Number);
      from = Date.UTC(y, mo - 1, d, hh, mm, ss) - gmtoff * 1000;
    }
    list.push({ from, gmtoff, abbr: f[3] === undefined || f[3] === '' ? f[2] : f[3], isdst: f[4] === '1' });
  }
  return out;
}

/** The period in effect at `ms`. */
const periodAt = (periods: readonly Period[], ms: number): Period => periods.filter((p) => p.from <= ms).at(-1) ?? periods[0];

/** Offset seconds as `+HHMM`, and the local time of `ms` under it. */
function expected(p: Period, [ms, us]: Instant): { offset: string; current_time: string } {
  const minutes = p.gmtoff / 60;
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23);
  return {
    offset: `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`,
    current_time: `${local}${pad(us, 3)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`,
  };
}

/** Epoch milliseconds and microseconds past them. */
type Instant = [ms: number, us: number];
const instant = fc.tuple(fc.integer({ min: FROM, max: TO }), fc.integer({ min: 0, max: 999 }));
const at = ([ms, us]: Instant) => ms + us / 1000;

/** Where iprecord's DST rule (an offset that will fall back) and the tz database's isdst flag differ, by design. */
const DST_DECIDED: Record<string, string> = {
  'Europe/Dublin': "the tz database's main data calls winter GMT a negative DST; summer IST is the offset that falls back",
  Eire: 'Europe/Dublin',
};

/** Where iprecord's table (the tz release as published) and Debian's zoneinfo differ in an abbreviation. */
const ABBR_DECIDED: Record<string, string> = {
  MET: "tz 2024b made MET a link to Europe/Brussels (CET); Debian's zoneinfo keeps the old MET zone",
};

/** Offsets, local times, abbreviations and DST of a table's clock against zdump; `abbrDecided`: where the table differs by design. */
function againstZdump(label: string, table: ZoneTable | null, abbrDecided: Record<string, string>) {
  describe.skipIf(table === null)(`ZoneClock over ${label} against the system's zoneinfo (zdump)`, () => {
    const system = table !== null ? systemPeriods() : new Map<string, Period[]>();

    it('gives the offset and local time zoneinfo gives, for any zone and instant', () => {
      fc.assert(
        fc.property(fc.constantFrom(...ZONES), instant, (zone, t) => {
          const tz = new ZoneClock(table!).timeZone(zone, at(t));
          const want = expected(periodAt(system.get(zone)!, t[0]), t);
          expect(tz.name).toBe(zone);
          expect(tz.offset, zone).toBe(want.offset);
          expect(tz.current_time, zone).toBe(want.current_time);
        }),
        params,
      );
    });

    it('stays right across transitions while it caches (time going forward, and set back)', () => {
      fc.assert(
        fc.property(fc.constantFrom(...ZONES), fc.array(instant, { minLength: 2, maxLength: 30 }), fc.boolean(), (zone, times, backwards) => {
          const clock = new ZoneClock(table!);
          times.sort((a, b) => (backwards ? at(b) - at(a) : at(a) - at(b)));
          for (const t of times) {
            const tz = clock.timeZone(zone, at(t));
            const want = expected(periodAt(system.get(zone)!, t[0]), t);
            expect(tz.offset).toBe(want.offset);
            expect(tz.current_time).toBe(want.current_time);
          }
        }),
        { ...params, numRuns: 100 },
      );
    });

    it("every zone's offset, abbreviation and DST state now and at its next three transitions", () => {
      const now = Date.now();
      let checked = 0;
      const decided: string[] = [];
      for (const zone of ZONES) {
        const periods = system.get(zone)!;
        const instants = [
          now,
          ...periods
            .filter((p) => p.from > now)
            .slice(0, 3)
            .map((p) => p.from),
        ];
        for (const ms of instants) {
          const tz = new ZoneClock(table!).timeZone(zone, ms);
          const p = periodAt(periods, ms);
          expect(tz.offset, `${zone} at ${new Date(ms).toISOString()}`).toBe(expected(p, [ms, 0]).offset);
          if (tz.abbr !== p.abbr) {
            expect(abbrDecided[zone], `${zone} at ${new Date(ms).toISOString()}: ${tz.abbr}, zoneinfo ${p.abbr}`).toBeDefined();
            decided.push(`${zone} ${tz.abbr} (zoneinfo ${p.abbr})`);
          }
          if (tz.is_dst !== p.isdst) {
            expect(DST_DECIDED[zone], `${zone} at ${new Date(ms).toISOString()}: is_dst ${tz.is_dst}, zoneinfo isdst=${Number(p.isdst)}`).toBeDefined();
            decided.push(`${zone} ${p.abbr}`);
          }
          checked++;
        }
      }
      console.log(
        `time zones (${label}, tz ${table!.tzdata}): ${ZONES.length} zones, ${checked} periods checked against zoneinfo; decided otherwise (is_dst or abbreviation): ${[...new Set(decided)].join(', ') || 'none'}`,
      );
      expect(checked).toBeGreaterThan(ZONES.length);
      // Every decision is still needed.
      for (const zone of [...Object.keys(DST_DECIDED), ...Object.keys(abbrDecided)])
        expect(
          decided.some((d) => d.startsWith(`${zone} `)),
          zone,
        ).toBe(true);
    });
  });
}

againstZdump(`the package's table`, REFERENCE ? PACKAGE_ZONES : null, ABBR_DECIDED);
againstZdump('the zoneinfo reader (compile/zones: TZif files and their TZ rules)', SYSTEM_TABLE, {});

describe.skipIf(!REFERENCE)("The package's table and the system's zoneinfo of the same release", () => {
  it('give every zone the same periods from 2020 to 2038 (two packings of one release), but where decided', () => {
    const differ = ZONES.filter((z) => JSON.stringify(PACKAGE_ZONES.rules[PACKAGE_ZONES.zones[z]]) !== JSON.stringify(SYSTEM_TABLE!.rules[SYSTEM_TABLE!.zones[z]]));
    expect(differ).toEqual(Object.keys(ABBR_DECIDED));
  });
});

describe('ZoneClock', () => {
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

  it('knows which zones its table has; British Columbia is on Mountain Standard Time all year from November 2026', () => {
    expect(new ZoneClock().timeZone('America/Vancouver', Date.UTC(2026, 10, 26))).toMatchObject({ abbr: 'MST', offset: '-0700', is_dst: false });
    expect(new ZoneClock().timeZone('America/Vancouver', Date.UTC(2027, 6, 1))).toMatchObject({ abbr: 'MST', offset: '-0700', is_dst: false });
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
