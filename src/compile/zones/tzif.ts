/**
 * A zone's periods from a compiled tz database file (TZif, RFC 8536, as
 * `zic` writes it to the system's zoneinfo): the transitions it lists, then
 * those of its footer's POSIX TZ rule up to the end of the span (files
 * written `-b slim` list transitions only until the rule takes over).
 */

import type { ZoneRules } from '../../time/zone.js';

/** A period's start (epoch seconds), offset (seconds east) and abbreviation. */
interface Transition {
  readonly at: number;
  readonly utoff: number;
  readonly abbr: string;
}

interface LocalType {
  readonly utoff: number;
  readonly abbr: string;
}

/**
 * The periods of a zone in effect from `from` (epoch seconds) to `to`: the
 * one at `from`, then one per change of offset or abbreviation up to `to`.
 * @throws Error for a file that is not TZif version 2 or later, or a change off the minute
 */
export function zoneRules(file: Buffer, from: number, to: number): ZoneRules {
  const { types, transitions, footer } = readTzif(file);
  // Before the first transition: type 0 (RFC 8536 3.2).
  const all: Transition[] = [{ at: -Infinity, ...types[0] }, ...transitions];
  const last = all[all.length - 1];
  if (footer !== '' && last.at < to) {
    const rule = parsePosixTz(footer);
    const firstYear = new Date(Math.max(last.at, -62135596800) * 1000).getUTCFullYear();
    const lastYear = new Date(to * 1000).getUTCFullYear();
    for (let y = firstYear; y <= lastYear; y++) for (const t of rule.transitions(y)) if (t.at > last.at) all.push(t);
    all.sort((a, b) => a.at - b.at);
  }
  let first = 0;
  while (first + 1 < all.length && all[first + 1].at <= from) first++;
  const o: number[] = [];
  const a: string[] = [];
  const u: number[] = [];
  for (let k = first; k < all.length && all[k].at <= to; k++) {
    const t = all[k];
    if (t.utoff % 60 !== 0) throw new Error(`an offset off the minute (${t.utoff} s)`);
    if (k > first) {
      // A change of the isdst flag alone is no change of the record's facts.
      if (t.utoff === o[o.length - 1] * 60 && t.abbr === a[a.length - 1]) continue;
      if (t.at % 60 !== 0) throw new Error(`a change off the minute at ${t.at}`);
      u.push(t.at / 60);
    }
    o.push(t.utoff / 60);
    a.push(t.abbr);
  }
  if (u.length > MAX_CHANGES)
    throw new Error(
      `${u.length} changes of offset or abbreviation within ${new Date(from * 1000).getUTCFullYear()}-${new Date(to * 1000).getUTCFullYear()}, more than the ${MAX_CHANGES} a zone may have`,
    );
  return { o, a, u };
}

/** Most changes a zone may have within the table's span: the tz database's busiest (Morocco's, with Ramadan) has under 100 over 2020-2038. */
const MAX_CHANGES = 1000;

/** The version 2+ data block of a TZif file: local time types, transitions and footer. */
function readTzif(b: Buffer): { types: LocalType[]; transitions: Transition[]; footer: string } {
  const header = (at: number) => {
    if (b.length < at + 44 || b.toString('latin1', at, at + 4) !== 'TZif') throw new Error('not a TZif file');
    const n = (i: number) => b.readUInt32BE(at + 20 + i * 4);
    return { version: b[at + 4], isut: n(0), isstd: n(1), leap: n(2), time: n(3), type: n(4), char: n(5) };
  };
  const v1 = header(0);
  if (v1.version < 0x32) throw new Error('a TZif version 1 file (no 64-bit data, no footer)');
  const skip = 44 + v1.time * 5 + v1.type * 6 + v1.char + v1.leap * 8 + v1.isstd + v1.isut;
  const h = header(skip);
  let at = skip + 44;
  if (h.type === 0 || b.length < at + h.time * 9 + h.type * 6 + h.char + h.leap * 12 + h.isstd + h.isut)
    throw new Error('a TZif file cut short or with counts past its end');
  const times: number[] = [];
  for (let i = 0; i < h.time; i++, at += 8) times.push(Number(b.readBigInt64BE(at)));
  const index = [...b.subarray(at, (at += h.time))];
  const raw: { utoff: number; desig: number }[] = [];
  for (let i = 0; i < h.type; i++, at += 6) raw.push({ utoff: b.readInt32BE(at), desig: b[at + 5] });
  const chars = b.subarray(at, (at += h.char));
  at += h.leap * 12 + h.isstd + h.isut;
  const types = raw.map(({ utoff, desig }) => ({ utoff, abbr: chars.toString('latin1', desig, chars.indexOf(0, desig)) }));
  if (index.some((type) => type >= types.length)) throw new Error('a TZif transition to a local time type it does not have');
  const transitions = times.map((t, i) => ({ at: t, ...types[index[i]] }));
  const end = b.indexOf(0x0a, at + 1);
  const footer = b[at] === 0x0a && end > at ? b.toString('latin1', at + 1, end) : '';
  return { types, transitions, footer };
}

/** A POSIX TZ rule (`PST8PDT,M3.2.0,M11.1.0`): standard time, and daylight time with the dates it starts and ends. */
interface PosixTz {
  readonly std: LocalType;
  /** The rule's transitions in a year (none without daylight time). */
  transitions(year: number): Transition[];
}

/**
 * Parses the TZ string of a TZif footer (POSIX, with RFC 8536's extension
 * of transition times from -167 to 167 hours).
 * @throws Error for a string it cannot read
 */
export function parsePosixTz(text: string): PosixTz {
  const r = new TzReader(text);
  // POSIX offsets are west of UTC.
  const std = { abbr: r.name(), utoff: -r.hms(24) };
  if (r.done()) return { std, transitions: () => [] };
  const dst = { abbr: r.name(), utoff: std.utoff + 3600 };
  if (!r.done() && r.peek() !== ',') dst.utoff = -r.hms(24);
  r.comma();
  const start = r.dateRule();
  r.comma();
  const end = r.dateRule();
  if (!r.done()) r.fail();
  return {
    std,
    transitions(year) {
      // The start is given in standard local time, the end in daylight local time.
      const on = { at: start.day(year) * 86_400 + start.time - std.utoff, ...dst };
      const off = { at: end.day(year) * 86_400 + end.time - dst.utoff, ...std };
      return on.at < off.at ? [on, off] : [off, on];
    },
  };
}

/** A TZ string read from its start: each method reads one part at `i`, or throws naming where the string stopped making sense. */
class TzReader {
  private i = 0;

  constructor(private readonly text: string) {}

  done = (): boolean => this.i === this.text.length;
  peek = (): string | undefined => this.text[this.i];

  fail(): never {
    throw new Error(`unreadable TZ rule ${JSON.stringify(this.text)} at ${this.i}`);
  }

  comma(): void {
    if (this.text[this.i] !== ',') this.fail();
    this.i++;
  }

  /** An abbreviation: `<...>` or three letters or more. */
  name(): string {
    const { text } = this;
    if (text[this.i] === '<') {
      const end = text.indexOf('>', this.i);
      if (end < 0) this.fail();
      const n = text.slice(this.i + 1, end);
      this.i = end + 1;
      return n;
    }
    const m = /^[A-Za-z]{3,}/.exec(text.slice(this.i)) ?? this.fail();
    this.i += m[0].length;
    return m[0];
  }

  /** `[+-]hh[:mm[:ss]]` in seconds, its hours at most `most` (an offset 24, a transition time 167), minutes and seconds under 60. */
  hms(most: number): number {
    const m = /^([+-]?)(\d{1,3})(?::(\d{2}))?(?::(\d{2}))?/.exec(this.text.slice(this.i)) ?? this.fail();
    if (Number(m[2]) > most || Number(m[3] ?? 0) > 59 || Number(m[4] ?? 0) > 59) this.fail();
    this.i += m[0].length;
    const s = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
    return m[1] === '-' ? -s : s;
  }

  /** `Jn`, `n` or `Mm.w.d`, then `/time` (default 02:00): the day of a year (days since the epoch) and the time. */
  dateRule(): { day(year: number): number; time: number } {
    const m = /^(?:J(\d{1,3})|(\d{1,3})|M(\d{1,2})\.(\d)\.(\d))/.exec(this.text.slice(this.i)) ?? this.fail();
    // Jn 1 to 365, n 0 to 365, Mm.w.d with a month 1 to 12, a week 1 to 5 and a weekday 0 to 6.
    const [j, n, month, week, weekday] = m.slice(1).map((v) => (v === undefined ? null : Number(v)));
    if (
      (j !== null && (j < 1 || j > 365)) ||
      (n !== null && n > 365) ||
      (month !== null && (month < 1 || month > 12 || week! < 1 || week! > 5 || weekday! > 6))
    )
      this.fail();
    this.i += m[0].length;
    let time = 7200;
    if (this.text[this.i] === '/') {
      this.i++;
      time = this.hms(167);
    }
    return { day: j !== null ? julianDay(j) : n !== null ? (y) => daysFromCivil(y, 1, 1) + n : weekdayOf(month!, week!, weekday!), time };
  }
}

/** `Jn`: day 1 to 365 of the year, February 29 never counted. */
const julianDay =
  (n: number) =>
  (y: number): number =>
    daysFromCivil(y, 1, 1) + n - 1 + (isLeap(y) && n >= 60 ? 1 : 0);

/** `Mm.w.d`: weekday `d` of week `w` of month `m` (week 5: the last). */
const weekdayOf =
  (month: number, week: number, weekday: number) =>
  (y: number): number => {
    const first = daysFromCivil(y, month, 1);
    // 1970-01-01 was a Thursday (4).
    let d = first + ((weekday - ((first + 4) % 7) + 7) % 7) + (week - 1) * 7;
    const next = month === 12 ? daysFromCivil(y + 1, 1, 1) : daysFromCivil(y, month + 1, 1);
    while (d >= next) d -= 7;
    return d;
  };

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days since 1970-01-01 of a civil date. */
const daysFromCivil = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d) / 86_400_000;
