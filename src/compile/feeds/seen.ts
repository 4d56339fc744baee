/**
 * When each list first and last held each address: a build's `seen.bin`,
 * carried forward from the build before it.
 *
 * For each list of a build, the space it covers is cut into ranges, each
 * with the day of the first download of that list that held it and the
 * day of the last one. A build takes the ranges of the build before: what
 * the list holds now keeps its first day (also when it comes back after a
 * gap) and gets this download's day as its last; what it no longer holds
 * is kept with its last day for `KEEP_DAYS` days after it, then
 * forgotten; what is new is first seen at this download. A first build
 * marks everything first seen at its downloads. A list the configuration
 * no longer has is not carried. Days are UTC days since 1970.
 * The file's format and its reader: `evidence/seen.ts`. Build time only.
 */

import { join } from 'node:path';
import { dayText, decodeSeen, FIRST_DAY, KEEP_DAYS, SEEN_MAX_BYTES, type SeenList } from '../../evidence/seen.js';
import { SEEN_FILE } from '../../dataset/store.js';
import { readRegular, unreadableReason } from '../../files/read.js';
import type { Prepared } from './prepare.js';

export { dayOf, decodeSeen, encodeSeen, FIRST_DAY, KEEP_DAYS, type SeenList } from '../../evidence/seen.js';

/** a + b of two numbers or of two bigints (one type at a time: `+` takes both). */
const plus = <T extends number | bigint>(a: T, b: T): T => ((a as number) + (b as number)) as T;

/** What one list holds in a build: its ranges (sorted, disjoint, as start and end pairs) and the day of its download. */
export interface Held {
  readonly name: string;
  readonly day: number;
  readonly v4: readonly number[];
  readonly v6: readonly bigint[];
}

/**
 * Each list of this build with its days, from the lists before (by name),
 * `today` the build's own day. A download's day is at most `today` (a file
 * dated ahead); one before the list's last download (a clock set back) or
 * before `FIRST_DAY` is refused, the list's days kept as they were, and
 * `warn` says so: days never go backwards. A list left out of this build
 * (a feed taken out of the configuration, or one that failed) keeps its
 * days for `KEEP_DAYS` after its last download, so that it picks them up
 * again when it comes back.
 */
export function carryForward(
  before: ReadonlyMap<string, SeenList>,
  held: readonly Held[],
  today: number,
  warn: (line: string) => void = (line) => process.emitWarning(line, { code: 'IPRECORD_SEEN_CLOCK' }),
): SeenList[] {
  const out = held.flatMap((h): SeenList[] => {
    const old = before.get(h.name);
    const day = Math.min(h.day, today);
    if (day < FIRST_DAY || (old !== undefined && day < old.latest)) {
      const bound = day < FIRST_DAY ? `before ${dayText(FIRST_DAY)}` : `before its last download, ${dayText(old!.latest)}`;
      warn(
        `${h.name}: its download is dated ${dayText(day)}, ${bound} (is the clock right?); its first and last seen are kept as they were`,
      );
      return old === undefined ? [] : [old];
    }
    return [
      { name: h.name, latest: day, v4: sweep4(old?.v4 ?? new Uint32Array(0), h.v4, day), v6: sweep6(old?.v6 ?? [], pairs(h.v6), day) },
    ];
  });
  const named = new Set(out.map((l) => l.name));
  for (const [name, old] of before) if (!named.has(name) && today - old.latest <= KEEP_DAYS) out.push(old);
  return out;
}

function pairs<T>(flat: readonly T[]): [T, T][] {
  const out: [T, T][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** `sweep6` of IPv4 ranges, flat: `old` four numbers a range (start, end, first, last), `now` two (start, end). */
function sweep4(old: Uint32Array, now: readonly number[], day: number): Uint32Array {
  const out = new Uint32Array(4 * (old.length / 2 + now.length));
  let n = 0;
  // The next edge of each input (a start, or an end plus one), by its index: 2k a start, 2k + 1 an end.
  const edgeOld = (k: number) => (k & 1 ? old[(k >> 1) * 4 + 1] + 1 : old[(k >> 1) * 4]);
  const edgeNow = (k: number) => (k & 1 ? now[k] + 1 : now[k]);
  const oldEdges = old.length / 2;
  let x = 0;
  let y = 0;
  let from = -1;
  let i = 0;
  let j = 0;
  while (x < oldEdges || y < now.length) {
    const next = y >= now.length || (x < oldEdges && edgeOld(x) <= edgeNow(y)) ? edgeOld(x++) : edgeNow(y++);
    if (from >= 0 && next > from) {
      while (i < old.length && old[i + 1] < from) i += 4;
      while (j < now.length && now[j + 1] < from) j += 2;
      const before = i < old.length && old[i] <= from;
      const held = j < now.length && now[j] <= from;
      let first = -1;
      let last = -1;
      if (held) [first, last] = [before ? Math.min(old[i + 2], day) : day, day];
      else if (before && day - old[i + 3] <= KEEP_DAYS) [first, last] = [old[i + 2], old[i + 3]];
      if (first >= 0) {
        if (n > 0 && out[n - 2] === first && out[n - 1] === last && out[n - 3] + 1 === from) out[n - 3] = next - 1;
        else {
          out.set([from, next - 1, first, last], n);
          n += 4;
        }
      }
    }
    from = next;
  }
  return out.slice(0, n);
}

/**
 * The IPv6 ranges with days after a download on `day` that holds `now`:
 * both inputs sorted and disjoint; cut at every edge of either, each piece
 * given its days, neighbours with the same days joined (`sweep4`, on
 * bigints: IPv6 lists are a tenth of the ranges).
 */
function sweep6(
  old: readonly (readonly [bigint, bigint, number, number])[],
  now: readonly (readonly [bigint, bigint])[],
  day: number,
): [bigint, bigint, number, number][] {
  // Each input's edges (start, end + 1, ...) are in order already: merged, not sorted.
  const a: bigint[] = [];
  for (const [s, e] of old) a.push(s, e + 1n);
  const b: bigint[] = [];
  for (const [s, e] of now) b.push(s, e + 1n);
  const edges: bigint[] = [];
  for (let x = 0, y = 0; x < a.length || y < b.length;) edges.push(y >= b.length || (x < a.length && a[x] <= b[y]) ? a[x++] : b[y++]);
  const out: [bigint, bigint, number, number][] = [];
  let i = 0;
  let j = 0;
  for (let k = 0; k + 1 < edges.length; k++) {
    const from = edges[k];
    const next = edges[k + 1];
    if (next === from) continue;
    const to = next - 1n;
    while (i < old.length && old[i][1] < from) i++;
    while (j < now.length && now[j][1] < from) j++;
    const before = i < old.length && old[i][0] <= from ? old[i] : null;
    const held = j < now.length && now[j][0] <= from;
    let days: [number, number] | null = null;
    if (held) days = [before === null ? day : Math.min(before[2], day), day];
    else if (before !== null && day - before[3] <= KEEP_DAYS) days = [before[2], before[3]];
    if (days === null) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last[2] === days[0] && last[3] === days[1] && last[1] + 1n === from) last[1] = to;
    else out.push([from, to, days[0], days[1]]);
  }
  return out;
}

/** The ranges a prepared list covers, IPv4 and IPv6, sorted and joined, as start and end pairs. */
export function coveredBy(p: Prepared & { ok: true }): { v4: number[]; v6: bigint[] } {
  const four: [number, number][] = [];
  for (const layer of p.v4) for (let i = 0; i < layer.start.length; i++) four.push([layer.start[i], layer.end[i]]);
  const six: [bigint, bigint][] = [];
  const w = p.v6.words;
  const word = (at: number) => (BigInt(w[at]) << 96n) | (BigInt(w[at + 1]) << 64n) | (BigInt(w[at + 2]) << 32n) | BigInt(w[at + 3]);
  for (let at = 0; at + 8 <= w.length; at += 8) six.push([word(at), word(at + 4)]);
  return { v4: joined(four, 1), v6: joined(six, 1n) };
}

/** Ranges sorted and joined where they overlap or touch, flat. */
function joined<T extends number | bigint>(ranges: [T, T][], one: T): T[] {
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: T[] = [];
  for (const [s, e] of ranges) {
    const n = out.length;
    if (n > 0 && s <= plus(out[n - 1], one)) {
      if (e > out[n - 1]) out[n - 1] = e;
    } else out.push(s, e);
  }
  return out;
}

/** The lists of the build before, or none (none kept, or damaged: said as a warning). */
export function seenBefore(previous: string | null | undefined): Map<string, SeenList> {
  if (previous == null) return new Map();
  const path = join(previous, SEEN_FILE);
  // A damaged record does not stop the build: the days start again from it, and it says so.
  const restart = (why: string) => {
    process.emitWarning(`${why} First and last seen start again from this build.`, { code: 'IPRECORD_SEEN_DAMAGED' });
    return new Map<string, SeenList>();
  };
  let bytes: Buffer;
  try {
    // Opened as a regular file of a bounded size: a FIFO or a link to a device is refused, never read.
    bytes = readRegular(path, SEEN_MAX_BYTES);
  } catch (e) {
    // A build made before seen.bin was written: everything is first seen now.
    const { code, message } = e as NodeJS.ErrnoException;
    if (code === 'ENOENT') return new Map();
    return restart(code === 'ENOTREG' || code === 'ETOOBIG' ? `${message}.` : `${path} cannot be read: ${unreadableReason(e)}.`);
  }
  try {
    return decodeSeen(bytes, path);
  } catch (e) {
    return restart((e as Error).message);
  }
}
