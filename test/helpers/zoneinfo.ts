/**
 * Zoneinfo directories for the time zone tests, whatever the machine's own
 * tz data: each release in fixtures/tz (the tz database's `tzdata.zi` as
 * Debian's tzdata packages ship it) compiled by the system's `zic` into a
 * folder of the caller's, and the system's zoneinfo as it is. `zdump` reads
 * a directory through TZDIR, so a test compares what one directory says
 * with what iprecord reads from that same directory.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { zoneinfoRelease } from '../../src/time/zoneinfo.js';
import { ROOT } from './env.js';

const find = (name: string) =>
  ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/bin'].map((d) => join(d, name)).find((p) => existsSync(p));
export const ZIC = find('zic');
export const ZDUMP = find('zdump');

/** With IPRECORD_REQUIRE_ZONEINFO=1 (CI) a missing tool fails; else its tests skip with this reason. */
export function zoneToolsMissing(): string | null {
  const missing = [ZIC === undefined ? 'zic' : '', ZDUMP === undefined ? 'zdump' : ''].filter(Boolean);
  if (missing.length === 0) return null;
  const reason = `${missing.join(' and ')} not found (Debian: libc-bin)`;
  if (process.env.IPRECORD_REQUIRE_ZONEINFO === '1') throw new Error(`IPRECORD_REQUIRE_ZONEINFO=1: ${reason}`);
  return reason;
}

export interface Zoneinfo {
  /** What the directory is, for test names: `tz 2025b (fixtures, zic -b slim)`. */
  readonly label: string;
  readonly dir: string;
  readonly release: string;
}

const FIXTURES = join(ROOT, 'fixtures', 'tz');

/** The releases in fixtures/tz, oldest first. */
export const FIXTURE_RELEASES: readonly string[] = readdirSync(FIXTURES)
  .map((f) => /^tzdata-(\d{4}[a-z]+)\.zi\.gz$/.exec(f)?.[1])
  .filter((r): r is string => r !== undefined)
  .sort();

/**
 * A fixture release compiled by zic into `<into>/<release>`, `-b fat` (every
 * transition written out) as Debian ships it. Slim files leave the years
 * after the last rule change to the TZ footer, and where a change falls
 * within a year of the footer's rule (America/Ojinaga, 30 October 2022)
 * zdump reads the footer from that change on (CDT a week early), where the
 * source and iprecord's reader keep the change's own offset.
 */
export function compileRelease(release: string, into: string): Zoneinfo {
  const dir = join(into, release);
  mkdirSync(dir, { recursive: true });
  const source = join(dir, 'tzdata.zi');
  writeFileSync(source, gunzipSync(readFileSync(join(FIXTURES, `tzdata-${release}.zi.gz`))));
  execFileSync(ZIC!, ['-b', 'fat', '-d', dir, source]);
  return { label: `tz ${release} (fixtures/tz, compiled by zic)`, dir, release };
}

/** The system's zoneinfo (TZDIR, else /usr/share/zoneinfo), any release, or null when it has no zones. */
export function systemZoneinfo(): Zoneinfo | null {
  const dir = process.env.TZDIR || '/usr/share/zoneinfo';
  if (!existsSync(join(dir, 'Europe', 'London'))) return null;
  const release = zoneinfoRelease(dir) ?? 'of no stated release';
  return { label: `the system's zoneinfo (${dir}, tz ${release})`, dir, release };
}

/** A zone's period as zdump gives it: from that instant on, its offset in seconds east, abbreviation and isdst flag. */
export interface Period {
  readonly from: number;
  readonly gmtoff: number;
  readonly abbr: string;
  readonly isdst: boolean;
}

/** Seconds east of UTC of zdump's offset text: `-08`, `+0530`, `+054500`. */
function seconds(text: string): number {
  const sign = text[0] === '-' ? -1 : 1;
  const [h, m = '0', sec = '0'] = [text.slice(1, 3), text.slice(3, 5) || undefined, text.slice(5, 7) || undefined];
  return sign * (Number(h) * 3600 + Number(m) * 60 + Number(sec));
}

/** Each zone's periods from `fromYear` to `toYear` as zdump reads them from `zi` (`-i`, one process): the one in effect at the start, then one per transition. */
export function zdumpPeriods(zi: Zoneinfo, zones: readonly string[], fromYear: number, toYear: number): Map<string, Period[]> {
  const out = new Map<string, Period[]>();
  const text = execFileSync(ZDUMP!, ['-i', '-c', `${fromYear},${toYear}`, ...zones], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, TZDIR: zi.dir },
  });
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
