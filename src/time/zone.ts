/**
 * The `time_zone` object of a record.
 *
 * The UTC offset and the DST state come from the runtime's own tz data
 * (`Intl`): DST is an offset that will fall back (the next other offset,
 * within 400 days, is lower). The abbreviation is the tz database's for
 * the period so told, its offset and the next other one
 * (`abbreviations.json`; the numeric form when the tz database has no
 * letters, or when its table knows no such period: a runtime whose rules
 * differ from the table's never gets an abbreviation that contradicts its
 * offset). All three are computed once per zone
 * and kept for a week, or until the zone's next offset change when that
 * comes sooner (found by probing a week ahead with `Intl`, then to the
 * millisecond); only `current_time` is computed per lookup, with integer
 * arithmetic (formatting with `Intl` on every call caps a lookup near
 * 155k/s).
 */

import ABBREVIATIONS from './abbreviations.json';
import type { ByteWriter } from '../record/writer.js';
import { HORIZON_DAYS, numericAbbreviation, offsetColon, offsetHhmm, pad2 } from './abbr.js';

export interface TimeZone {
  name: string;
  abbr: string;
  offset: string;
  is_dst: boolean;
  current_time: string;
}

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
  /** JSON text of the facts up to `"current_time":"`, and in UTF-8. */
  readonly head: string;
  readonly headBytes: Uint8Array;
  /** Local second that `secondText` spells (`YYYY-MM-DDTHH:MM:SS.`). */
  second: number;
  secondText: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** The tz database's letter abbreviations of each zone's periods, by `<offset>><next offset>` (`scripts/gen-tz-abbrs.ts`). */
export function zonePeriods(name: string): Readonly<Record<string, string>> | undefined {
  const { periods, zones } = ABBREVIATIONS as unknown as { periods: Record<string, string>[]; zones: Record<string, number> };
  const at = zones[name];
  return at === undefined ? undefined : periods[at];
}

/**
 * Loads the runtime's time zone data (ICU): the first `Intl.DateTimeFormat`
 * with a time zone costs about 15 ms, the next ones a fraction of a
 * millisecond. `open()` calls it while the database files are being read.
 */
export function warmTimeZones(): void {
  new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', timeZoneName: 'longOffset' }).formatToParts(0);
}

/** Per-zone offsets and abbreviations, refreshed at each zone's next transition. */
export class ZoneClock {
  private readonly states = new Map<string, ZoneState>();
  private readonly formats = new Map<string, Intl.DateTimeFormat>();
  private readonly valid = new Map<string, boolean>();

  /** Whether the runtime knows the zone. */
  isValid(name: string): boolean {
    let ok = this.valid.get(name);
    if (ok === undefined) {
      try {
        // The formatter `offsetAt` uses: one per zone (making one costs about 100 us).
        this.formatter(name);
        ok = true;
      } catch {
        ok = false;
      }
      this.valid.set(name, ok);
    }
    return ok;
  }

  /** The `time_zone` object at `nowMs` (fractional milliseconds give microseconds). */
  timeZone(name: string, nowMs: number): TimeZone {
    const s = this.state(name, nowMs);
    return { name: s.name, abbr: s.abbr, offset: s.offset, is_dst: s.isDst, current_time: this.currentTime(s, nowMs) };
  }

  /** `JSON.stringify(timeZone(name, nowMs))`, from text kept per zone and per second. */
  timeZoneJson(name: string, nowMs: number): string {
    const s = this.state(name, nowMs);
    return s.head + this.currentTime(s, nowMs) + '"}';
  }

  /** `current_time`: the date and time up to the second change once a second, only the microseconds are formatted per call. */
  private currentTime(s: ZoneState, nowMs: number): string {
    const local = nowMs + s.offsetMs;
    return this.secondOf(s, local) + micros6(microsOf(local)) + s.colon;
  }

  /** `timeZoneJson(name, nowMs)` in UTF-8, written to `out`. */
  writeTimeZone(name: string, nowMs: number, out: ByteWriter): void {
    const s = this.state(name, nowMs);
    const local = nowMs + s.offsetMs;
    out.bytes(s.headBytes);
    out.latin1(this.secondOf(s, local));
    out.digits6(microsOf(local));
    out.latin1(s.closing);
  }

  /** The local time up to the microseconds (`YYYY-MM-DDTHH:MM:SS.`): it changes once a second. */
  private secondOf(s: ZoneState, local: number): string {
    const second = Math.floor(local / 1000);
    if (second !== s.second) {
      s.second = second;
      s.secondText = isoLocal(second * 1000).slice(0, 20);
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

  /** Offset of a zone at an instant, in minutes east of UTC. */
  offsetAt(name: string, ms: number): number {
    const parts = this.formatter(name).formatToParts(ms);
    let text = '';
    for (const p of parts) if (p.type === 'timeZoneName') text = p.value;
    // "GMT", "GMT-07:00", "GMT+05:30"
    if (text.length <= 3) return 0;
    const sign = text.charCodeAt(3) === 45 /* - */ ? -1 : 1;
    const h = Number(text.slice(4, 6));
    const m = text.length > 6 ? Number(text.slice(7, 9)) : 0;
    return sign * (h * 60 + m);
  }

  /** @throws RangeError for a zone the runtime does not know */
  private formatter(name: string): Intl.DateTimeFormat {
    let f = this.formats.get(name);
    if (!f) {
      f = new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' });
      this.formats.set(name, f);
    }
    return f;
  }

  private compute(name: string, nowMs: number): ZoneState {
    const now = Math.floor(nowMs);
    const offset = this.offsetAt(name, now);
    const until = this.nextTransition(name, now, offset);
    // The period is told by its offset and the next other one: DST is an offset that will fall back, and the tz
    // database's abbreviation is the one of that period (its table is keyed the same way: a runtime whose rules are
    // older or newer than the table's finds its own period's, or the numeric form).
    const next = this.nextOffset(name, now, offset);
    const abbr = zonePeriods(name)?.[`${offset}>${next}`] ?? numericAbbreviation(offset);
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
      headBytes: Buffer.from(head),
      second: NaN,
      secondText: '',
    };
  }

  /**
   * Until when `offset` holds from `from`: its next change, to the
   * millisecond, when that is within a week; else a week on (the facts are
   * worked out again then: a zone's offset does not change twice in a
   * week, and one probe a week costs less than searching a year ahead for
   * each zone a lookup meets).
   */
  private nextTransition(name: string, from: number, offset: number): number {
    let lo = from;
    let hi = from + WEEK;
    if (this.offsetAt(name, hi) === offset) return hi;
    // Bisect to the millisecond: the first instant with the new offset.
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.offsetAt(name, mid) === offset) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  /** The next offset other than `offset` within HORIZON_DAYS of `from` (looked for week by week), else `offset`. */
  private nextOffset(name: string, from: number, offset: number): number {
    for (let t = from + WEEK; t <= from + HORIZON_DAYS * DAY; t += WEEK) {
      const o = this.offsetAt(name, t);
      if (o !== offset) return o;
    }
    return offset;
  }

  /** Forgets the cached states (for tests and reload). */
  clear(): void {
    this.states.clear();
  }
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
