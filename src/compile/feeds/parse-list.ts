/**
 * A list feed read from its bytes: lines of the commonest forms
 * (`a.b.c.d`, `a.b.c.d/n`, `a.b.c.d<TAB>hits`, an IPv6 address or block
 * alone) without making a string of them; any other line by `listLine`.
 */

import { CH_0, CH_9, CH_A, CH_COLON, CH_DOT, CH_F, CH_LA, CH_LF, hexValue, wordsOfGroups } from '../../ip/parse.js';
import { Collector, listLine, toBlock, type ParsedFeed, type ParseOptions } from './collect.js';

const NL = 10;
const CR = 13;
const TAB = 9;
const SLASH = 47;

/** Whether bytes `from` to `to` are only hex digits, colons (two or more) and slashes. */
function bareV6(buf: Buffer, from: number, to: number): boolean {
  let colons = 0;
  for (let i = from; i < to; i++) {
    const ch = buf[i];
    if (ch === CH_COLON) colons++;
    else if (!((ch >= CH_0 && ch <= CH_9) || (ch >= CH_LA && ch <= CH_LF) || (ch >= CH_A && ch <= CH_F) || ch === SLASH)) return false;
  }
  return colons >= 2;
}

/** Groups of the IPv6 address `v6FromBytes` reads, and its first and last addresses. */
const groups6 = new Uint16Array(8);
const first6 = new Uint32Array(4);
const last6 = new Uint32Array(4);

/**
 * A bare IPv6 address or block (a `bareV6` line) read from the bytes into
 * `c`, as the text reader reads it; false, with nothing added, for any line
 * that is not a valid one (the text reader then says why).
 */
function v6FromBytes(buf: Buffer, from: number, to: number, c: Collector): boolean {
  let i = from;
  let count = 0;
  let gap = -1;
  if (buf[i] === CH_COLON) {
    if (i + 1 >= to || buf[i + 1] !== CH_COLON) return false;
    gap = 0;
    i += 2;
  }
  while (i < to && buf[i] !== SLASH) {
    let value = 0;
    let digits = 0;
    for (; i < to; i++) {
      const h = hexValue(buf[i]);
      if (h < 0) break;
      value = (value << 4) | h;
      if (++digits > 4) return false;
    }
    if (digits === 0 || count === 8) return false;
    groups6[count++] = value;
    if (i === to || buf[i] === SLASH) break;
    // A colon (the only other byte of a bare line), then a group, or a second colon.
    i++;
    if (i < to && buf[i] === CH_COLON) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i === to || buf[i] === SLASH) return false;
  }
  let prefix = 128;
  if (i < to) {
    // `/` and one to three digits, at most 128.
    const digits = to - i - 1;
    if (digits < 1 || digits > 3) return false;
    prefix = 0;
    for (let k = i + 1; k < to; k++) {
      const d = buf[k] - CH_0;
      if (d < 0 || d > 9) return false;
      prefix = prefix * 10 + d;
    }
    if (prefix > 128) return false;
  }
  // An IPv4-mapped address is IPv4 to the text reader, with prefixes up to 32.
  if (wordsOfGroups(groups6, count, gap, first6) !== 6) return false;
  toBlock(first6, last6, prefix);
  c.v6.push(first6, last6, 1);
  c.entries++;
  return true;
}

function isAscii(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] > 127) return false;
  return true;
}

/**
 * A line of the commonest IPv4 forms (`a.b.c.d`, `a.b.c.d/n`,
 * `a.b.c.d<TAB>hits`; 1 to 3 digits a part, no leading zeros, each at most
 * 255), read from its bytes at `pos` into `c`: where the next line starts,
 * or -1 for any other line (read by the caller).
 */
function quadLine(buf: Buffer, pos: number, n: number, c: Collector, minHits: number): number {
  // Dotted quad: 1 to 3 digits per part, no leading zeros, each at most 255.
  let p = pos;
  let value = 0;
  for (let part = 0; part < 4; part++) {
    const d0 = buf[p];
    if (!(d0 >= CH_0 && d0 <= CH_9)) return -1;
    let v = d0 - CH_0;
    let ch = buf[++p];
    if (ch >= CH_0 && ch <= CH_9) {
      if (v === 0) return -1;
      v = v * 10 + ch - CH_0;
      ch = buf[++p];
      if (ch >= CH_0 && ch <= CH_9) {
        v = v * 10 + ch - CH_0;
        ch = buf[++p];
        if (v > 255) return -1;
      }
    }
    value = (value << 8) | v;
    if (part < 3) {
      if (ch !== CH_DOT) return -1;
      p++;
    }
  }
  let ch = buf[p];
  let prefix = 32;
  if (ch === SLASH) {
    const d0 = buf[++p];
    if (!(d0 >= CH_0 && d0 <= CH_9)) return -1;
    prefix = d0 - CH_0;
    ch = buf[++p];
    if (ch >= CH_0 && ch <= CH_9) {
      if (prefix === 0) return -1;
      prefix = prefix * 10 + ch - CH_0;
      ch = buf[++p];
      if (prefix > 32) return -1;
    }
  }
  let hits = 1;
  let counted = false;
  if (ch === TAB && prefix === 32) {
    counted = true;
    const d0 = buf[++p];
    if (!(d0 >= CH_0 && d0 <= CH_9)) return -1;
    hits = d0 - CH_0;
    ch = buf[++p];
    for (let k = 0; ch >= CH_0 && ch <= CH_9; k++) {
      if (k === 8) return -1;
      hits = hits * 10 + ch - CH_0;
      ch = buf[++p];
    }
  }
  if (ch === CR) ch = buf[++p];
  if (!(ch === NL || p >= n)) return -1;
  if (counted && hits < minHits) {
    c.skipped++;
    return p + 1;
  }
  const host = prefix === 0 ? 0xffffffff : prefix === 32 ? 0 : 0xffffffff >>> prefix;
  const first = (value & ~host) >>> 0;
  c.v4.push(first, (first | host) >>> 0, hits);
  c.entries++;
  return p + 1;
}

/**
 * A list, read from its bytes. Lines of the commonest forms (`a.b.c.d`,
 * `a.b.c.d/n`, `a.b.c.d<TAB>hits`, an IPv6 address or block alone) are
 * read from the bytes directly; any
 * other line is read from its text by `listLine`, which gives the same
 * answer for those forms (a property test holds the two to that).
 */
export function parseList(bytes: Uint8Array, options: ParseOptions): ParsedFeed {
  // Most lines of a large list are IPv4 addresses of 12 to 16 bytes.
  const c = new Collector(Math.max(256, Math.ceil(bytes.length / 12)));
  const minHits = options.minHits ?? 0;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = buf.length;
  let pos = 0;
  let line = 0;
  while (pos < n) {
    line++;
    const next = quadLine(buf, pos, n, c, minHits);
    if (next >= 0) {
      pos = next;
      continue;
    }
    let end = buf.indexOf(NL, pos);
    if (end < 0) end = n;
    const stop = end > pos && buf[end - 1] === CR ? end - 1 : end;
    // An IPv6 address or block alone on its line (hex digits, two colons or more, a slash) is read from the bytes.
    const bare = bareV6(buf, pos, stop);
    if (bare && v6FromBytes(buf, pos, stop, c)) {
      pos = end + 1;
      continue;
    }
    const raw = buf.toString('latin1', pos, stop);
    if (bare) c.add(line, raw, raw);
    else listLine(c, line, isAscii(buf, pos, stop) ? raw : buf.toString('utf8', pos, stop), minHits);
    pos = end + 1;
  }
  c.lines = line;
  return c.result();
}
