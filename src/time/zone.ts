/**
 * The `time_zone` object of a record.
 *
 * Offsets and abbreviations come from one release of the IANA tz database
 * that the dataset carries (each zone's periods from 2020 to 2038: the
 * package's own release, `zones.json` from `scripts/gen-tz-rules.ts`, or
 * the system's zoneinfo when it is newer, `compile/zones/`), not from the
 * runtime's ICU data, so that a record is the same on every Node version. DST is an offset that will fall back (the next
 * other offset, within 400 days, is lower: docs/decisions.md says how this
 * reads the tz database's flag). The
 * facts of a zone are kept until its next transition, or a week on; only
 * `current_time` is computed per lookup, with integer arithmetic.
 */

import type { ByteWriter } from '../text/writer.js';
import { textWords, type Words } from '../text/words.js';
import { offsetColon, offsetHhmm, pad2 } from './abbr.js';
import type { TimeZone } from '../contract/types.js';

/** A zone's periods: offset (minutes east) and abbreviation of each, and until when each holds (epoch minutes; the last holds on). */
export interface ZoneRules {
  readonly o: readonly number[];
  readonly a: readonly string[];
  readonly u: readonly number[];
}

/** Zone rules of one tz database release, as a dataset carries them (`DatasetMeta.timeZones`). */
export interface ZoneTable {
  /** The tz database release (`2026f`). */
  readonly tzdata: string;
  /** Where the rules were read: `package` (iprecord's own table) or a zoneinfo directory. */
  readonly source: string;
  /** Zones whose file in the directory could not be read: their rules are the package's (its release). */
  readonly fromPackage?: readonly string[];
  /** The span of the periods (ISO dates): before it the first period holds, after it the last. */
  readonly from: string;
  readonly to: string;
  /** Each zone's rules, by their index (zones with the same periods share them). */
  readonly zones: Readonly<Record<string, number>>;
  readonly rules: readonly ZoneRules[];
}

/** How far ahead the next offset of a zone is looked for, in days: an offset is DST when the next one within it is lower. */
const HORIZON_DAYS = 400;

/** Offset facts of a zone that hold until `until`. */
interface ZoneState {
  readonly name: string;
  readonly abbr: string;
  readonly offset: string;
  /** The offset with a colon (`+05:30`), which ends `current_time`. */
  readonly colon: string;
  /** `colon` and the end of the JSON object (`"}`). */
  readonly closing: string;
  readonly isDst: boolean;
  readonly offsetMs: number;
  /** Epoch milliseconds when these facts were computed (a clock set back before it recomputes them). */
  readonly since: number;
  /** Epoch milliseconds of the next offset change (or a week ahead). */
  readonly until: number;
  /** JSON text of the facts up to `"current_time":"`. */
  readonly head: string;
  /** Local second that `secondText` spells (`YYYY-MM-DDTHH:MM:SS.`). */
  second: number;
  secondText: string;
  /** `head` and `secondText` in UTF-8 (`ByteWriter.part`), made again when the second changes, and its length. */
  headWords: Words;
  headEnd: number;
}

const NO_WORDS = textWords([]);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** Per-zone offsets and abbreviations, refreshed at each zone's next transition. */
export class ZoneClock {
  private readonly states = new Map<string, ZoneState>();

  /** `table`: a dataset's (its metadata's `timeZones`), or the package's own (`package-zones.ts`). */
  constructor(readonly table: ZoneTable) {}

  /** Whether the zone table knows the zone. */
  isValid(name: string): boolean {
    return Object.hasOwn(this.table.zones, name);
  }

  /** The `time_zone` object at `nowMs` (fractional milliseconds give microseconds). */
  timeZone(name: string, nowMs: number): TimeZone {
    const s = this.state(name, nowMs);
    return { name: s.name, abbr: s.abbr, offset: s.offset, is_dst: s.isDst, current_time: this.currentTime(s, nowMs) };
  }

  /** `current_time`: the date and time up to the second change once a second, only the microseconds are formatted per call. */
  private currentTime(s: ZoneState, nowMs: number): string {
    const local = nowMs + s.offsetMs;
    return this.secondOf(s, local) + micros6(microsOf(local)) + s.colon;
  }

  /** `JSON.stringify(timeZone(name, nowMs))` in UTF-8, written to `out`, from text kept per zone and per second. */
  writeTimeZone(name: string, nowMs: number, out: ByteWriter): void {
    const s = this.state(name, nowMs);
    const local = nowMs + s.offsetMs;
    this.secondOf(s, local);
    out.part(s.headWords, 0, s.headEnd);
    out.digits6(microsOf(local));
    out.latin1(s.closing);
  }

  /** The local time up to the microseconds (`YYYY-MM-DDTHH:MM:SS.`): it changes once a second. */
  private secondOf(s: ZoneState, local: number): string {
    const second = Math.floor(local / 1000);
    if (second !== s.second) {
      s.second = second;
      s.secondText = isoLocal(second * 1000).slice(0, 20);
      const w = textWords([s.head + s.secondText]);
      s.headWords = w.words;
      s.headEnd = w.at[1];
    }
    return s.secondText;
  }

  private state(name: string, nowMs: number): ZoneState {
    let s = this.states.get(name);
    if (s === undefined || nowMs >= s.until || nowMs < s.since) {
      s = this.compute(name, nowMs);
      this.states.set(name, s);
    }
    return s;
  }

  private compute(name: string, nowMs: number): ZoneState {
    const now = Math.floor(nowMs);
    const r = this.rulesOf(name);
    const i = periodAt(r, now);
    const offset = r.o[i];
    // The facts hold until the next transition, or a week on (DST looks 400 days ahead).
    const until = Math.min(i < r.u.length ? r.u[i] * 60_000 : Infinity, now + WEEK);
    let next = offset;
    for (let k = i; k < r.u.length && r.u[k] * 60_000 <= now + HORIZON_DAYS * DAY && next === offset; k++) next = r.o[k + 1];
    const abbr = r.a[i];
    const isDst = offset > next;
    const hhmm = offsetHhmm(offset);
    const colon = offsetColon(offset);
    const head = JSON.stringify({ name, abbr, offset: hhmm, is_dst: isDst, current_time: '' }).slice(0, -2);
    return {
      name,
      abbr,
      offset: hhmm,
      colon,
      closing: colon + '"}',
      isDst,
      offsetMs: offset * 60_000,
      since: now,
      until,
      head,
      second: NaN,
      secondText: '',
      headWords: NO_WORDS.words,
      headEnd: 0,
    };
  }

  /** Forgets the cached states (for tests and reload). */
  clear(): void {
    this.states.clear();
  }

  /** @throws RangeError for a zone the table does not know */
  private rulesOf(name: string): ZoneRules {
    if (!this.isValid(name)) throw new RangeError(`Invalid time zone specified: ${name}`);
    return this.table.rules[this.table.zones[name]];
  }
}

/** The period of a zone in effect at `ms` (the first one before 2020, the last after 2038). */
function periodAt(r: ZoneRules, ms: number): number {
  const minute = ms / 60_000;
  let lo = 0;
  let hi = r.u.length;
  // The first period whose end is past the instant.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (r.u[mid] <= minute) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `YYYY-MM-DDTHH:MM:SS.ffffff` of a local-time instant given as epoch
 * milliseconds (with a fraction for microseconds). Civil date from days per
 * H. Hinnant's `civil_from_days`.
 */
export function isoLocal(ms: number): string {
  const whole = Math.floor(ms);
  // Rounded: a double holds 12.011 ms as 12.01099999...
  const micros = Math.min(999, Math.round((ms - whole) * 1000));
  let days = Math.floor(whole / DAY);
  let rem = whole - days * DAY;
  const hh = Math.floor(rem / HOUR);
  rem -= hh * HOUR;
  const mm = Math.floor(rem / 60_000);
  rem -= mm * 60_000;
  const ss = Math.floor(rem / 1000);
  const frac = (rem - ss * 1000) * 1000 + micros;
  days += 719_468;
  const era = Math.floor(days / 146_097);
  const doe = days - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${pad2(m)}-${pad2(d)}T${pad2(hh)}:${pad2(mm)}:${pad2(ss)}.${String(frac).padStart(6, '0')}`;
}

/** The microseconds of a local time in milliseconds (0 to 999 999). */
function microsOf(local: number): number {
  return Math.min(999_999, Math.round((local - Math.floor(local / 1000) * 1000) * 1000));
}

/** Microseconds 0..999999 as six digits. */
function micros6(n: number): string {
  if (n >= 100_000) return String(n);
  return String(1_000_000 + n).slice(1);
}

/**
 * Now in epoch milliseconds with a microsecond fraction: the wall clock's
 * milliseconds and the monotonic clock's sub-millisecond part (the monotonic
 * clock alone drifts from the wall clock over days).
 */
export function nowMicros(): number {
  const p = performance.now();
  return Date.now() + (p - Math.floor(p));
}

/**
 * The time zone rules an engine follows, as its dataset carries them
 * (`info().timeZones`): the IANA tz database release, where they were read
 * (`package` or a zoneinfo directory), the span its table covers, and the
 * zones whose file there could not be read, which follow the package's
 * release.
 */
export interface ZoneRulesInfo {
  readonly tzdata: string;
  readonly source: string;
  readonly from: string;
  readonly to: string;
  readonly fromPackage?: readonly string[];
}
