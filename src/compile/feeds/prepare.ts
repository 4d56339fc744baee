/**
 * One feed made ready for the compiler: read, parsed, its IPv4 ranges
 * sorted and joined into one union per hit count, its coverage counted.
 * The work of a feed depends on no other feed, so the builder runs it in
 * worker threads (`worker.ts`); the result is plain data and typed arrays
 * that move between threads without copying.
 */

import { refusal, tooWide, type Widest } from './widest.js';
import { statSync } from 'node:fs';
import { readFileRange, readRegular } from '../../files/read.js';
import { parseFeed, type BadLine, type FeedFormat, type ParseOptions } from './parse.js';
import { byValue, RangeList, span, union } from './ranges.js';
import { compareWords, RangeList6, Ranks6 } from './ranges6.js';

export interface PrepareTask {
  /** The file to read (a local feed, or the download of a URL feed). */
  readonly file: string;
  readonly format: FeedFormat;
  readonly options?: ParseOptions;
  /** Whether to report the file's modification time (downloads). */
  readonly fetched: boolean;
  /** A part of a large list: bytes `from` to `to` (whole lines). */
  readonly part?: { readonly from: number; readonly to: number };
  /** The widest entry taken (`widest.ts`): a wider one refuses the list. */
  readonly widest: Widest;
}

/** Sorted, disjoint IPv4 ranges of one hit count. */
export interface Layer4 {
  readonly hits: number;
  readonly start: Uint32Array;
  readonly end: Uint32Array;
}

export type Prepared =
  | {
      readonly ok: true;
      readonly v4: readonly Layer4[];
      /** IPv6 ranges as parsed (four words of start and four of end each), with hit counts. */
      readonly v6: { readonly words: Uint32Array; readonly value: Uint32Array };
      readonly entries: number;
      readonly skipped: number;
      readonly badLines: readonly BadLine[];
      readonly dataDate: string | null;
      readonly fetchedAt: string | null;
      /** Distinct addresses covered, IPv4 and IPv6 together, in decimal; '' for a list in parts (the compiler counts it). */
      readonly addresses: string;
      /** Lines read. */
      readonly lines: number;
    }
  | { readonly ok: false; readonly missing: boolean; readonly error: string };

/** Whether IPv6 ranges are in order of their starts (most published lists are). */
function sorted6(list: RangeList6): boolean {
  const w = list.words;
  for (let i = 1; i < list.length; i++) if (compareWords(w, w, i * 8, (i - 1) * 8) < 0) return false;
  return true;
}

/** The union of IPv6 ranges in order of their starts, in one sweep. */
function joinSorted6(list: RangeList6): RangeList6 {
  const out = new RangeList6(Math.max(1, list.length));
  const w = list.words;
  const o = out.words;
  let n = 0;
  for (let i = 0; i < list.length; i++) {
    const at = i * 8;
    const last = (n - 1) * 8 + 4;
    // Range i joins the last joined range when it starts at or before its end, plus one.
    if (n > 0 && (compareWords(w, o, at, last) <= 0 || followsOn(o, last, w, at))) {
      if (compareWords(w, o, at + 4, last) > 0) for (let k = 0; k < 4; k++) o[last + k] = w[at + 4 + k];
    } else {
      for (let k = 0; k < 8; k++) o[n * 8 + k] = w[at + k];
      n++;
    }
  }
  out.length = n;
  return out;
}

/** Whether the address at `b[bt..bt+3]` is the one after `a[at..at+3]`. */
function followsOn(a: Uint32Array, at: number, b: Uint32Array, bt: number): boolean {
  let carry = 1;
  for (let k = 3; k >= 0; k--) {
    const v = a[at + k] + carry;
    carry = v > 0xffffffff ? 1 : 0;
    if (v >>> 0 !== b[bt + k]) return false;
  }
  return carry === 0;
}

/** Addresses that IPv6 ranges cover: their union (in one sweep when sorted, else on ranks), sizes summed word by word. */
export function span6(list: RangeList6): bigint {
  let merged: RangeList6;
  if (sorted6(list)) merged = joinSorted6(list);
  else {
    const ranks = new Ranks6([list]);
    const part = union(ranks.lists[0], 0);
    merged = new RangeList6(Math.max(1, part.length));
    for (let i = 0; i < part.length; i++) ranks.pushRange(merged, part.start[i], part.end[i], 0);
  }
  // Each word's sum stays below 2^53 for fewer than 2^21 ranges; carries are settled once, in BigInt.
  const sum = [0, 0, 0, merged.length];
  const w = merged.words;
  for (let i = 0; i < merged.length; i++) {
    const at = i * 8;
    let borrow = 0;
    for (let k = 3; k >= 0; k--) {
      let d = w[at + 4 + k] - w[at + k] - borrow;
      borrow = d < 0 ? 1 : 0;
      if (d < 0) d += 0x100000000;
      sum[k] += d;
    }
  }
  return sum.reduce((total, s) => (total << 32n) + BigInt(s), 0n);
}

/** Distinct addresses that ranges cover, per family (IPv6 counts pass 2^53). */
export function coveredAddresses(v4: RangeList, v6: RangeList6): { v4: number; v6: bigint } {
  return { v4: span(union(v4, 0)), v6: span6(v6) };
}

/** The IPv4 layers of parsed ranges: a union per hit count. `consume`: `list` is not used again (its arrays are reused). */
export function layers4(list: RangeList, consume = false): Layer4[] {
  const out: Layer4[] = [];
  for (const [hits, l] of byValue(list, () => new RangeList())) {
    // A list of one hit count is the list itself; split, each part is new.
    const u = union(l, hits, consume || l !== list);
    out.push({ hits, start: u.start.subarray(0, u.length), end: u.end.subarray(0, u.length) });
  }
  return out;
}

/** Addresses that two sorted, disjoint lists both cover. */
function common(a: Layer4, b: Layer4): number {
  let total = 0;
  let i = 0;
  let j = 0;
  while (i < a.start.length && j < b.start.length) {
    const lo = Math.max(a.start[i], b.start[j]);
    const hi = Math.min(a.end[i], b.end[j]);
    if (lo <= hi) total += hi - lo + 1;
    if (a.end[i] < b.end[j]) i++;
    else j++;
  }
  return total;
}

/** Distinct addresses that a feed's IPv4 layers and IPv6 ranges cover together, in decimal. */
export function layerCoverage(v4: readonly Layer4[], v6: RangeList6): string {
  return (BigInt(coverage4(v4)) + span6(v6)).toString();
}

/** The union of two layers (sorted, disjoint ranges): one merge, touching ranges joined; the hits of `a`. */
export function join4(a: Layer4, b: Layer4): Layer4 {
  const na = a.start.length;
  const nb = b.start.length;
  const start = new Uint32Array(na + nb);
  const end = new Uint32Array(na + nb);
  let k = 0;
  let i = 0;
  let j = 0;
  while (i < na || j < nb) {
    let s: number;
    let e: number;
    if (j === nb || (i < na && a.start[i] <= b.start[j])) {
      s = a.start[i];
      e = a.end[i++];
    } else {
      s = b.start[j];
      e = b.end[j++];
    }
    // Ends are at most 2^32 - 1, so end + 1 is exact in a double.
    if (k > 0 && s <= end[k - 1] + 1) {
      if (e > end[k - 1]) end[k - 1] = e;
    } else {
      start[k] = s;
      end[k++] = e;
    }
  }
  return { hits: a.hits, start: start.subarray(0, k), end: end.subarray(0, k) };
}

/** Distinct addresses that IPv4 layers (each sorted and disjoint) cover together. */
export function coverage4(v4: readonly Layer4[]): number {
  // The first layers joined, then the last one counted against them without building their union.
  let head: Layer4 | null = v4.length > 0 ? v4[0] : null;
  for (let i = 1; i < v4.length - 1; i++) head = join4(head as Layer4, v4[i]);
  const size = (l: Layer4) => span({ start: l.start, end: l.end, length: l.start.length });
  let total = head === null ? 0 : size(head);
  if (v4.length > 1) {
    const last = v4[v4.length - 1];
    total += size(last) - common(head as Layer4, last);
  }
  return total;
}

/** The bytes of a task: its file, or its part of the file. */
function read(task: PrepareTask): Buffer {
  if (task.part === undefined) return readRegular(task.file);
  return readFileRange(task.file, Buffer.allocUnsafe, task.part.from, task.part.to);
}

/** Reads, parses and prepares one feed (or part of one); a file that cannot be read is an answer, not an exception. */
export function prepareFeed(task: PrepareTask): Prepared {
  let bytes: Buffer;
  let fetchedAt: string | null = null;
  try {
    bytes = read(task);
    // When the data last changed: its download's time, or a local file's modification time (a list kept by hand and
    // forgotten is called stale like a download that stopped).
    fetchedAt = statSync(task.file).mtime.toISOString();
  } catch (e) {
    return { ok: false, missing: (e as NodeJS.ErrnoException).code === 'ENOENT', error: (e as Error).message };
  }
  const parsed = parseFeed(bytes, task.format, task.options);
  const wide = tooWide(parsed.v4, parsed.v6, task.widest);
  if (wide !== null) return { ok: false, missing: false, error: refusal(wide) };
  const v4 = layers4(parsed.v4, true);
  return {
    ok: true,
    v4,
    v6: { words: parsed.v6.words.slice(0, parsed.v6.length * 8), value: parsed.v6.value.slice(0, parsed.v6.length) },
    entries: parsed.entries,
    skipped: parsed.skipped,
    badLines: parsed.badLines,
    dataDate: parsed.dataDate,
    fetchedAt,
    // A part's coverage is counted once the parts are joined.
    addresses: task.part === undefined ? layerCoverage(v4, parsed.v6) : '',
    lines: parsed.lines,
  };
}

/**
 * Joins the results of a large list's parts (in file order) into the
 * list's result. Its coverage is left to the compiler (`addresses` is ''),
 * which counts it per part of the IPv4 space on both threads.
 */
export function joinParts(parts: readonly Prepared[]): Prepared {
  const failed = parts.find((p) => !p.ok);
  if (failed !== undefined) return failed;
  const ok = parts as readonly Extract<Prepared, { ok: true }>[];
  // The parts' layers side by side: the compiler joins layers of one feed as it joins feeds.
  const v4 = ok.flatMap((p) => p.v4);
  const v6 = RangeList6.over(concat(ok.map((p) => p.v6.words)), concat(ok.map((p) => p.v6.value)));
  const badLines: BadLine[] = [];
  let before = 0;
  for (const p of ok) {
    for (const b of p.badLines) badLines.push({ ...b, line: b.line + before });
    before += p.lines;
  }
  return {
    ok: true,
    v4,
    v6: { words: v6.words, value: v6.value },
    entries: ok.reduce((a, p) => a + p.entries, 0),
    skipped: ok.reduce((a, p) => a + p.skipped, 0),
    badLines,
    dataDate: ok.reduce<string | null>(
      (newest, p) => (p.dataDate !== null && (newest === null || p.dataDate > newest) ? p.dataDate : newest),
      null,
    ),
    fetchedAt: ok[0].fetchedAt,
    addresses: '',
    lines: before,
  };
}

function concat(arrays: readonly Uint32Array[]): Uint32Array {
  const out = new Uint32Array(arrays.reduce((a, x) => a + x.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

/** A layer as a range list (values unused). */
export function fromLayer(l: Layer4): RangeList {
  const r = new RangeList(0);
  r.start = l.start;
  r.end = l.end;
  r.value = new Uint32Array(l.start.length);
  r.length = l.start.length;
  return r;
}

/** The typed arrays of a result, to move to another thread without copying. */
export function transferables(p: Prepared): ArrayBuffer[] {
  if (!p.ok) return [];
  const out = new Set<ArrayBuffer>();
  for (const l of p.v4) out.add(l.start.buffer as ArrayBuffer).add(l.end.buffer as ArrayBuffer);
  out.add(p.v6.words.buffer as ArrayBuffer).add(p.v6.value.buffer as ArrayBuffer);
  return [...out];
}
