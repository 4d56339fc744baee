/**
 * `seen.bin`, a build's record of when each list first and last held each
 * address (written by `compile/feeds/seen.ts`), and reading it for one
 * address (`Engine.explain`). Never read by a lookup.
 *
 * The file (little-endian): `IPRSEEN2`, its checksum (u32: `files/checksum.ts`
 * over every other byte), the list count (u32); per list its name (u16
 * length, UTF-8), the day of its latest download (u32), its IPv4 ranges
 * (u32 count, then start, end, first, last: u32 each, 16 bytes a range) and
 * its IPv6 ranges (u32 count, then start and end as 16 bytes big-endian
 * each and first and last as u32: 40 bytes a range). Ranges are sorted and
 * disjoint, and neighbours with the same days are joined. Days are UTC days
 * since 1970, from `FIRST_DAY` on, a range's first at most its last and its
 * last at most its list's latest download. `IPRSEEN1` (written before the
 * checksum: the same without it) is still read, its days checked alone.
 */

import { statSync } from 'node:fs';
import { InvalidDatasetError } from '../contract/errors.js';
import { wholeFileCrc } from '../files/checksum.js';
import { readRegular } from '../files/read.js';
import { memoryMapper } from '../platform/native.js';

/** Days a range stays after the last download that held it. */
export const KEEP_DAYS = 90;

/**
 * The largest seen.bin read (1 GiB): the 90 days of the 70 shared feeds
 * take some tens of MB (16 bytes an IPv4 range, 40 an IPv6 one); a larger
 * file is a mistake, refused before it is read.
 */
export const SEEN_MAX_BYTES = 1 << 30;

const MAGIC = 'IPRSEEN2';
/** The magic of the files written before the checksum. */
const MAGIC_1 = 'IPRSEEN1';
/** Where the checksum is, and where the list count is in each version. */
const CRC_AT = 8;
const HEADER = { [MAGIC]: 16, [MAGIC_1]: 12 } as const;
const DAY_MS = 86_400_000;

/** The UTC day of a time. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** The first day a download may be dated (2020-01-01): a clock before it is a clock that was not set. */
export const FIRST_DAY = dayOf(Date.UTC(2020, 0, 1));

/** A day as `YYYY-MM-DD`. */
export const dayText = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** One list's ranges with the first and last day each was held, and its latest download. */
export interface SeenList {
  readonly name: string;
  readonly latest: number;
  /** Start, end, first and last day of each IPv4 range, four numbers a range. */
  readonly v4: Uint32Array;
  readonly v6: readonly (readonly [bigint, bigint, number, number])[];
}

/** A list's range that holds an address: its bounds (as numbers or bigints), first and last day, and the list's latest download. */
export interface SeenAt {
  readonly list: string;
  readonly start: bigint;
  readonly end: bigint;
  readonly first: number;
  readonly last: number;
  readonly latest: number;
}

/** Where one list lies in a seen.bin: its name, latest download, and its IPv4 and IPv6 ranges' counts and offsets. */
interface ListAt {
  readonly name: string;
  readonly latest: number;
  readonly n4: number;
  readonly v4: number;
  readonly n6: number;
  readonly v6: number;
}

/** A 16-byte big-endian number at `at`. */
const read128 = (buf: Buffer, at: number): bigint => (buf.readBigUInt64BE(at) << 64n) | buf.readBigUInt64BE(at + 8);

/**
 * Each list of a seen.bin as it lies in the bytes, its ranges checked to
 * end within them and the last to end where the file does.
 * @throws InvalidDatasetError when the bytes are not a seen.bin
 */
function listsIn(buf: Buffer, name: string): ListAt[] {
  const bad = invalid(name);
  const magic = buf.length < 12 ? '' : buf.toString('latin1', 0, 8);
  if (magic !== MAGIC && magic !== MAGIC_1) throw bad('bad magic');
  const out: ListAt[] = [];
  let at = HEADER[magic];
  if (buf.length < at) throw bad('it ends within its header');
  try {
    for (let k = buf.readUInt32LE(at - 4); k > 0; k--) {
      const length = buf.readUInt16LE(at);
      const list = buf.toString('utf8', at + 2, at + 2 + length);
      at += 2 + length;
      if (at + 8 > buf.length) throw bad(`the list ${list} ends within its name or counts`);
      const latest = buf.readUInt32LE(at);
      const n4 = buf.readUInt32LE(at + 4);
      const v4 = at + 8;
      // The IPv4 ranges and the IPv6 count after them.
      if (v4 + n4 * 16 + 4 > buf.length) throw bad(`the IPv4 ranges of ${list} run past the end`);
      const n6 = buf.readUInt32LE(v4 + n4 * 16);
      const v6 = v4 + n4 * 16 + 4;
      at = v6 + n6 * 40;
      if (at > buf.length) throw bad(`the IPv6 ranges of ${list} run past the end`);
      if (latest < FIRST_DAY) throw bad(`${list}'s latest download is dated ${dayText(latest)}, before ${dayText(FIRST_DAY)}`);
      out.push({ name: list, latest, n4, v4, n6, v6 });
    }
  } catch (e) {
    if (e instanceof InvalidDatasetError) throw e;
    throw bad((e as Error).message);
  }
  if (at !== buf.length) throw bad(`${buf.length - at} bytes after the last list`);
  return out;
}

const invalid = (name: string) => (why: string) => new InvalidDatasetError(`${name} is not a valid seen.bin: ${why}.`);

/**
 * Checks a seen.bin's checksum (a file written before it has none: its
 * structure and days are what is checked of it, by the readers below).
 * @throws InvalidDatasetError when the bytes are not a seen.bin or do not match their checksum
 */
export function verifySeen(buf: Buffer, name = 'seen.bin'): void {
  listsIn(buf, name);
  if (buf.toString('latin1', 0, 8) !== MAGIC) return;
  if (wholeFileCrc(buf, HEADER[MAGIC], CRC_AT) !== buf.readUInt32LE(CRC_AT)) throw invalid(name)('its checksum does not match its bytes');
}

/** Throws when a range's days are not days a build writes: from FIRST_DAY, first at most last, last at most the list's latest. */
function checkDays(name: string, list: string, first: number, last: number, latest: number): void {
  if (first >= FIRST_DAY && first <= last && last <= latest) return;
  throw invalid(name)(
    `a range of ${list} is first seen ${dayText(first)} and last seen ${dayText(last)}, its list downloaded ${dayText(latest)}`,
  );
}

/**
 * The ranges of every list that hold one address, read from the file's
 * bytes where they are (a binary search a list), without decoding it; the
 * days of each range found are checked (`verifySeen` checks the checksum).
 * @throws InvalidDatasetError when the bytes are not a seen.bin
 */
export function seenAt(buf: Buffer, version: 4 | 6, address: bigint, name = 'seen.bin'): SeenAt[] {
  const out: SeenAt[] = [];
  for (const l of listsIn(buf, name)) {
    const [n, base, width] = version === 4 ? [l.n4, l.v4, 16] : [l.n6, l.v6, 40];
    const start = (i: number) => (version === 4 ? BigInt(buf.readUInt32LE(base + i * width)) : read128(buf, base + i * width));
    const end = (i: number) => (version === 4 ? BigInt(buf.readUInt32LE(base + i * width + 4)) : read128(buf, base + i * width + 16));
    // The last range that starts at or before the address.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (start(mid) <= address) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    if (i < 0 || end(i) < address) continue;
    const days = base + i * width + (version === 4 ? 8 : 32);
    const first = buf.readUInt32LE(days);
    const last = buf.readUInt32LE(days + 4);
    checkDays(name, l.name, first, last, l.latest);
    out.push({ list: l.name, start: start(i), end: end(i), first, last, latest: l.latest });
  }
  return out;
}

/** The bytes of `seen.bin`. */
export function encodeSeen(lists: readonly SeenList[]): Buffer {
  const names = lists.map((l) => Buffer.from(l.name, 'utf8'));
  const size = HEADER[MAGIC] + lists.reduce((n, l, k) => n + 2 + names[k].length + 4 + 4 + l.v4.length * 4 + 4 + l.v6.length * 40, 0);
  const out = Buffer.alloc(size);
  out.write(MAGIC, 0, 'latin1');
  let at = out.writeUInt32LE(lists.length, HEADER[MAGIC] - 4);
  lists.forEach((l, k) => {
    at = out.writeUInt16LE(names[k].length, at);
    at += names[k].copy(out, at);
    at = out.writeUInt32LE(l.latest, at);
    at = out.writeUInt32LE(l.v4.length / 4, at);
    for (const v of l.v4) at = out.writeUInt32LE(v, at);
    at = out.writeUInt32LE(l.v6.length, at);
    for (const [s, e, f, z] of l.v6) {
      at = out.writeBigUInt64BE(s >> 64n, at);
      at = out.writeBigUInt64BE(s & 0xffffffffffffffffn, at);
      at = out.writeBigUInt64BE(e >> 64n, at);
      at = out.writeBigUInt64BE(e & 0xffffffffffffffffn, at);
      at = out.writeUInt32LE(f, at);
      at = out.writeUInt32LE(z, at);
    }
  });
  out.writeUInt32LE(wholeFileCrc(out, HEADER[MAGIC], CRC_AT), CRC_AT);
  return out;
}

/**
 * The lists of a `seen.bin`, by name, its checksum and every range checked
 * (sorted, disjoint, days as `checkDays` says).
 * @throws InvalidDatasetError when the bytes are not one
 */
export function decodeSeen(buf: Buffer, name = 'seen.bin'): Map<string, SeenList> {
  verifySeen(buf, name);
  const out = new Map<string, SeenList>();
  const unsorted = (list: string, family: string) => invalid(name)(`the ${family} ranges of ${list} are not sorted and disjoint`);
  for (const l of listsIn(buf, name)) {
    const v4 = new Uint32Array(l.n4 * 4);
    for (let i = 0; i < v4.length; i++) v4[i] = buf.readUInt32LE(l.v4 + i * 4);
    for (let i = 0; i < v4.length; i += 4) {
      if (v4[i] > v4[i + 1] || (i > 0 && v4[i] <= v4[i - 3])) throw unsorted(l.name, 'IPv4');
      checkDays(name, l.name, v4[i + 2], v4[i + 3], l.latest);
    }
    const v6: [bigint, bigint, number, number][] = [];
    for (let i = 0, at = l.v6; i < l.n6; i++, at += 40) {
      const range: [bigint, bigint, number, number] = [
        read128(buf, at),
        read128(buf, at + 16),
        buf.readUInt32LE(at + 32),
        buf.readUInt32LE(at + 36),
      ];
      if (range[0] > range[1] || (i > 0 && range[0] <= v6[i - 1][1])) throw unsorted(l.name, 'IPv6');
      checkDays(name, l.name, range[2], range[3], l.latest);
      v6.push(range);
    }
    out.set(l.name, { name: l.name, latest: l.latest, v4, v6 });
  }
  return out;
}

const warned = new Set<string>();
/** A process warning (code `IPRECORD_SEEN_DAMAGED`), once per text. */
function warnOnce(text: string): void {
  if (warned.has(text)) return;
  warned.add(text);
  process.emitWarning(text, { code: 'IPRECORD_SEEN_DAMAGED' });
}

/**
 * What an explanation does when the build's seen.bin cannot be read or is
 * damaged: `warn` answers `lists: null` with a process warning (code
 * `IPRECORD_SEEN_DAMAGED`, once per file and reason), `throw` throws an
 * `InvalidDatasetError` that says why.
 */
export type DamagedHistory = 'warn' | 'throw';

/**
 * The seen.bin whose checksum was checked last (its path and identity:
 * device, inode, size and times) and what the check found. A cache of one
 * entry, because the checksum covers the whole file (tens of MB with the
 * shared feeds) where an explanation reads a few of its pages: a build's
 * files are written once, and a file changed in place has new times.
 */
let checked: { readonly id: string; readonly error: Error | null } | null = null;

/**
 * The ranges of the lists in the seen.bin at `path` that hold `address`
 * (`explain`), or null (said by `damaged`) when it cannot be read or is
 * damaged.
 */
export function seenHistory(path: string, version: 4 | 6, address: bigint, damaged: DamagedHistory): ReturnType<typeof seenAt> | null {
  const fail = (e: unknown) => {
    const reason = e instanceof InvalidDatasetError ? e.message : `${path}: ${(e as Error).message}.`;
    if (damaged === 'throw') throw new InvalidDatasetError(`the lists' history cannot be read: ${reason}`);
    warnOnce(`The lists' history cannot be read: ${reason} explain answers without it (lists: null).`);
    return null;
  };
  try {
    // A regular file of a bounded size (a FIFO or a device is refused, never read); mapped where the addon is: a binary
    // search a list touches a few of its pages, not the whole file (but for its checksum, once: `checked`).
    const stat = statSync(path);
    if (!stat.isFile()) throw new Error('it is not a regular file');
    if (stat.size > SEEN_MAX_BYTES) throw new Error(`it holds ${stat.size} bytes, more than the ${SEEN_MAX_BYTES} it may`);
    const mapper = memoryMapper();
    const bytes = 'map' in mapper ? mapper.map(path) : readRegular(path, SEEN_MAX_BYTES);
    const id = `${path}\0${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
    if (checked?.id !== id) {
      let error: Error | null = null;
      try {
        verifySeen(bytes, path);
      } catch (e) {
        error = e as Error;
      }
      checked = { id, error };
    }
    if (checked.error !== null) throw checked.error;
    return seenAt(bytes, version, address, path);
  } catch (e) {
    return fail(e);
  }
}
