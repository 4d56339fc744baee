import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isoLocal, ZoneClock, type ZoneTable } from '../../../src/time/zone.js';
import { PACKAGE_ZONES } from '../../../src/time/package-zones.js';
import { readZoneinfo } from '../../../src/compile/zones/table.js';
import ZONE_TABLE from '../../../src/time/zones.json';
import { seed } from '../../helpers/env.js';
import {
  compileRelease,
  FIXTURE_RELEASES,
  type Period,
  systemZoneinfo,
  zdumpPeriods,
  type Zoneinfo,
  zoneToolsMissing,
} from '../../helpers/zoneinfo.js';

const params = { seed: seed(), numRuns: 400 };
const ZONES = Object.keys(ZONE_TABLE.zones);
const FROM = Date.UTC(2020, 0, 1);
const TO = Date.UTC(2037, 11, 31);
/** How far ahead iprecord looks for the next offset (src/time/zone.ts): is_dst is checked where zdump's window (to 2038) covers it. */
const HORIZON = 400 * 86_400_000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * The references, whatever tz release the machine has (or none): the
 * package's release and every older one of fixtures/tz compiled by zic,
 * and the system's zoneinfo as it is. Each is read by zdump and by
 * iprecord's zoneinfo reader from the same files.
 */
const TOOLS_MISSING = zoneToolsMissing();
if (TOOLS_MISSING !== null) console.warn(`skipping the zoneinfo references (zdump against iprecord): ${TOOLS_MISSING}`);
if (!FIXTURE_RELEASES.includes(PACKAGE_ZONES.tzdata))
  throw new Error(
    `fixtures/tz has no tzdata-${PACKAGE_ZONES.tzdata}.zi.gz, the release of src/time/zones.json: add it (fixtures/README.md)`,
  );
const scratch = mkdtempSync(join(tmpdir(), 'iprecord-zoneinfo-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const RELEASES: readonly Zoneinfo[] =
  TOOLS_MISSING !== null ? [] : FIXTURE_RELEASES.map((r) => compileRelease(r, scratch)).concat(systemZoneinfo() ?? []);
const PACKAGE_RELEASE = RELEASES.find((z) => z.release === PACKAGE_ZONES.tzdata && z.dir.startsWith(scratch));
if (TOOLS_MISSING === null && systemZoneinfo() === null)
  console.warn('the system has no zoneinfo: the fixture releases alone are the references');

/** The period in effect at `ms`. */
const periodAt = (periods: readonly Period[], ms: number): Period => periods.filter((p) => p.from <= ms).at(-1) ?? periods[0];

/**
 * The tz database's DST flag at `ms`, where iprecord's rule (an offset that
 * will fall back: the next other offset within 400 days is lower) and the
 * flag agree by definition: the next other offset is a change of flag. A
 * zone whose DST offset is below its standard one (the main data's
 * negative DST: Dublin's winter GMT, Morocco's Ramadan time) reads the
 * other way round, as the tz database's rearguard data and most runtimes
 * give it: summer time is DST. Null where the next other offset keeps the
 * flag (a zone moving its standard time) or none comes within 400 days.
 */
function tzDst(periods: readonly Period[], ms: number): boolean | null {
  const p = periodAt(periods, ms);
  const q = periods.find((n) => n.from > ms && n.gmtoff !== p.gmtoff);
  if (q === undefined || q.from > ms + HORIZON || q.isdst === p.isdst) return null;
  const negative = p.isdst ? p.gmtoff < q.gmtoff : q.gmtoff < p.gmtoff;
  return negative ? !p.isdst : p.isdst;
}

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

/** Where iprecord's table (the tz release as published) and Debian's build of the same release differ in an abbreviation. */
const ABBR_DECIDED: Record<string, string> = {
  MET: "tz 2024b made MET a link to Europe/Brussels (CET); Debian's tzdata.zi keeps the old MET zone",
};

/** Offsets, local times, abbreviations and DST of a table's clock against zdump over `zi`; `abbrDecided`: where the table differs by design. */
function againstZdump(label: string, table: ZoneTable, zi: Zoneinfo, abbrDecided: Record<string, string>) {
  const zones = ZONES.filter((z) => Object.hasOwn(table.zones, z));
  describe(`ZoneClock over ${label} against zdump over ${zi.label}`, () => {
    const system = zdumpPeriods(zi, zones, 2019, 2038);

    it('gives the offset and local time zoneinfo gives, for any zone and instant', () => {
      fc.assert(
        fc.property(fc.constantFrom(...zones), instant, (zone, t) => {
          const tz = new ZoneClock(table).timeZone(zone, at(t));
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
        fc.property(
          fc.constantFrom(...zones),
          fc.array(instant, { minLength: 2, maxLength: 30 }),
          fc.boolean(),
          (zone, times, backwards) => {
            const clock = new ZoneClock(table);
            times.sort((a, b) => (backwards ? at(b) - at(a) : at(a) - at(b)));
            for (const t of times) {
              const tz = clock.timeZone(zone, at(t));
              const want = expected(periodAt(system.get(zone)!, t[0]), t);
              expect(tz.offset).toBe(want.offset);
              expect(tz.current_time).toBe(want.current_time);
            }
          },
        ),
        { ...params, numRuns: 100 },
      );
    });

    it("every zone's offset and abbreviation at each of its transitions from 2020 to 2038 and the millisecond before; is_dst against the tz database's flag", () => {
      let checked = 0;
      let dstChecked = 0;
      const decided = new Set<string>();
      const negative = new Set<string>();
      const undefinedByFlag = new Set<string>();
      for (const zone of zones) {
        const periods = system.get(zone)!;
        const clock = new ZoneClock(table);
        const instants = [FROM, ...periods.filter((p) => p.from > FROM && p.from < TO).flatMap((p) => [p.from - 1, p.from])];
        for (const ms of instants) {
          const tz = clock.timeZone(zone, ms);
          const p = periodAt(periods, ms);
          const where = `${zone} at ${new Date(ms).toISOString()}`;
          expect(tz.offset, where).toBe(expected(p, [ms, 0]).offset);
          if (tz.abbr !== p.abbr) {
            expect(abbrDecided[zone], `${where}: ${tz.abbr}, zoneinfo ${p.abbr}`).toBeDefined();
            decided.add(zone);
          }
          const flag = ms + HORIZON < Date.UTC(2038, 0, 1) ? tzDst(periods, ms) : null;
          if (flag !== null) {
            expect(tz.is_dst, `${where}: is_dst ${tz.is_dst}, zoneinfo ${p.abbr} isdst=${Number(p.isdst)}`).toBe(flag);
            if (flag !== p.isdst) negative.add(zone);
            dstChecked++;
          } else if (
            ms + HORIZON < Date.UTC(2038, 0, 1) &&
            periods.some((n) => n.from > ms && n.from <= ms + HORIZON && n.gmtoff !== p.gmtoff)
          )
            undefinedByFlag.add(zone);
          checked++;
        }
      }
      console.log(
        `time zones (${label} against ${zi.label}): ${zones.length} zones, ${checked} instants, is_dst at ${dstChecked} of them; ` +
          `negative DST read as its summer time: ${[...negative].join(', ') || 'none'}; ` +
          `an offset change that keeps the tz flag (is_dst by iprecord's rule alone): ${[...undefinedByFlag].join(', ') || 'none'}; ` +
          `abbreviation decided otherwise: ${[...decided].join(', ') || 'none'}`,
      );
      expect(dstChecked).toBeGreaterThan(zones.length);
      // Every decision is still needed.
      for (const zone of Object.keys(abbrDecided)) expect(decided.has(zone), zone).toBe(true);
    });
  });
}

if (PACKAGE_RELEASE !== undefined)
  againstZdump(`the package's table (tz ${PACKAGE_ZONES.tzdata})`, PACKAGE_ZONES, PACKAGE_RELEASE, ABBR_DECIDED);
for (const zi of RELEASES) {
  const present = ZONES.filter((z) => existsSync(join(zi.dir, z)));
  againstZdump(`the zoneinfo reader (compile/zones: TZif files and their TZ rules)`, readZoneinfo(zi.dir, zi.release, present), zi, {});
}

describe.skipIf(PACKAGE_RELEASE === undefined)("The package's table and zoneinfo of the same release", () => {
  it('give every zone the same periods from 2020 to 2038 (two packings of one release), but where decided', () => {
    const read = readZoneinfo(PACKAGE_RELEASE!.dir, PACKAGE_RELEASE!.release, ZONES);
    const differ = ZONES.filter(
      (z) => JSON.stringify(PACKAGE_ZONES.rules[PACKAGE_ZONES.zones[z]]) !== JSON.stringify(read.rules[read.zones[z]]),
    );
    expect(differ).toEqual(Object.keys(ABBR_DECIDED));
  });
});

describe('ZoneClock', () => {
  it('changes offset at the transition instant, to the millisecond', () => {
    const clock = new ZoneClock(PACKAGE_ZONES);
    // US daylight saving time began 2026-03-08 at 02:00 PST = 10:00 UTC.
    const t = Date.UTC(2026, 2, 8, 10);
    expect(clock.timeZone('America/Los_Angeles', t - 1)).toMatchObject({
      abbr: 'PST',
      offset: '-0800',
      is_dst: false,
      current_time: '2026-03-08T01:59:59.999000-08:00',
    });
    expect(clock.timeZone('America/Los_Angeles', t)).toMatchObject({
      abbr: 'PDT',
      offset: '-0700',
      is_dst: true,
      current_time: '2026-03-08T03:00:00.000000-07:00',
    });
    // EU summer time ends 2026-10-25 at 01:00 UTC.
    const e = Date.UTC(2026, 9, 25, 1);
    expect(clock.timeZone('Europe/Berlin', e - 0.001)).toMatchObject({
      abbr: 'CEST',
      offset: '+0200',
      is_dst: true,
      current_time: '2026-10-25T02:59:59.999999+02:00',
    });
    expect(clock.timeZone('Europe/Berlin', e)).toMatchObject({ abbr: 'CET', offset: '+0100', is_dst: false });
  });

  it('writes abbreviations as the tz database does', () => {
    const clock = new ZoneClock(PACKAGE_ZONES);
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
    expect(new ZoneClock(PACKAGE_ZONES).timeZone('America/Vancouver', Date.UTC(2026, 10, 26))).toMatchObject({
      abbr: 'MST',
      offset: '-0700',
      is_dst: false,
    });
    expect(new ZoneClock(PACKAGE_ZONES).timeZone('America/Vancouver', Date.UTC(2027, 6, 1))).toMatchObject({
      abbr: 'MST',
      offset: '-0700',
      is_dst: false,
    });
    const clock = new ZoneClock(PACKAGE_ZONES);
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
