/**
 * One parser for every textual address form iprecord accepts, into numbers.
 *
 * An address is four uint32 words, most significant first (`words[0]` holds
 * bits 0-31 of an IPv6 address). An IPv4 address, and an IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`), parse as version 4 with the address in
 * `words[3]` and zeros elsewhere, so that both answer as IPv4.
 *
 * Accepted: dotted-quad IPv4 without leading zeros (`010.0.0.1` looks octal
 * to some parsers and decimal to others, so it is refused, as `node:net`
 * refuses it); IPv6 in full, compressed (`::`) and mixed (`::1.2.3.4`) forms,
 * any case. Refused: hostnames, CIDRs, zone ids (`%eth0`), brackets, ports,
 * whitespace, empty strings.
 */

/** Character codes of the address forms (the feed parsers read bytes with them too). */
export const CH_0 = 48;
export const CH_9 = 57;
export const CH_A = 65;
export const CH_F = 70;
export const CH_LA = 97;
export const CH_LF = 102;
export const CH_DOT = 46;
export const CH_COLON = 58;

/** Longest textual IPv6 address: 8 groups of 4 plus 7 colons, or the mixed form. */
const MAX_TEXT_LENGTH = 45;

export type IpVersion = 4 | 6;

/**
 * Parses `text` (its first `len` characters) into `out` (four words).
 * Returns 4 or 6, or 0 when the text is not an address (then `out` holds
 * garbage).
 */
export function parseIpInto(text: string, out: Uint32Array, len = text.length): 0 | IpVersion {
  if (len === 0 || len > MAX_TEXT_LENGTH) return 0;
  const v4 = parseV4(text, 0, len);
  if (v4 >= 0) {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0;
    out[3] = v4;
    return 4;
  }
  // An IPv6 address has a colon within its first five characters.
  for (let i = 0; i < len && i < 5; i++) {
    if (text.charCodeAt(i) === CH_COLON) return parseV6(text, len, out);
  }
  return 0;
}

/** Dotted quad from `start` to `end`; the address as a uint32, or -1. */
export function parseV4(text: string, start: number, end: number): number {
  let i = start;
  let value = 0;
  for (let part = 0; part < 4; part++) {
    // One to three digits, no leading zero, at most 255; then a dot, but after the last part.
    if (i >= end) return -1;
    let d = text.charCodeAt(i) - CH_0;
    if (d < 0 || d > 9) return -1;
    let v = d;
    i++;
    if (i < end) {
      d = text.charCodeAt(i) - CH_0;
      if (d >= 0 && d <= 9) {
        if (v === 0) return -1;
        v = v * 10 + d;
        i++;
        if (i < end) {
          d = text.charCodeAt(i) - CH_0;
          if (d >= 0 && d <= 9) {
            v = v * 10 + d;
            i++;
            if (v > 255) return -1;
          }
        }
      }
    }
    value = value * 256 + v;
    if (part < 3) {
      if (i >= end || text.charCodeAt(i) !== CH_DOT) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}

/** The value of each hex digit by its character code (below 128), -1 for the others. */
const HEX = new Int8Array(128).fill(-1);
for (let c = CH_0; c <= CH_9; c++) HEX[c] = c - CH_0;
for (let c = CH_LA; c <= CH_LF; c++) HEX[c] = c - CH_LA + 10;
for (let c = CH_A; c <= CH_F; c++) HEX[c] = c - CH_A + 10;

/** The value of a hex digit's character code, or -1. */
export function hexValue(c: number): number {
  return c < 128 ? HEX[c] : -1;
}

const groups = new Uint16Array(8);

/** `HEX` with 16 added to the upper-case digits' values: an IPv6 text's case is told in the same read. */
const HEX_CASED = HEX.map((v, c) => (c >= CH_A && c <= CH_F ? v + 16 : v));

/** Whether the last IPv6 text parsed is spelled as `formatV6` writes its address (`parsedCanonically`). */
const last = { canonical: false };

/**
 * Whether the text of the last IPv6 address parsed (its whole text) is its
 * canonical text, RFC 5952's as `formatV6` writes it: lower case, no
 * leading zeros, no dotted tail, `::` for the first longest run of two
 * zero groups or more and for no other. Addresses in logs mostly are, and
 * their text is then kept rather than made again (`Parsed.text`).
 */
export function parsedCanonically(): boolean {
  return last.canonical;
}

function parseV6(text: string, len: number, out: Uint32Array): 0 | IpVersion {
  let count = 0; // groups written so far
  let gap = -1; // index in `groups` where `::` stands
  let i = 0;
  // No leading zeros so far; 16 in `upper` once a digit was upper case.
  let plain = true;
  let upper = 0;
  last.canonical = false;
  if (text.charCodeAt(0) === CH_COLON) {
    if (len < 2 || text.charCodeAt(1) !== CH_COLON) return 0;
    gap = 0;
    i = 2;
    if (i === len) return compressed(count, gap, out);
  }
  while (i < len) {
    // One group: up to four hex digits, or a dotted IPv4 tail.
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < len) {
      const c = text.charCodeAt(i);
      const h = c < 128 ? HEX_CASED[c] : -1;
      if (h < 0) break;
      upper |= h;
      value = (value << 4) | (h & 15);
      i++;
      if (++digits > 4) return 0;
    }
    if (i < len && text.charCodeAt(i) === CH_DOT) {
      // IPv4 tail: takes two groups and ends the address (never canonical).
      if (count > 6) return 0;
      const v4 = parseV4(text, start, len);
      if (v4 < 0) return 0;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      return wordsOfGroups(groups, count, gap, out);
    }
    if (digits === 0 || count === 8) return 0;
    if (digits > 1 && text.charCodeAt(start) === CH_0) plain = false;
    groups[count++] = value;
    if (i === len) break;
    if (text.charCodeAt(i) !== CH_COLON) return 0;
    i++;
    if (i < len && text.charCodeAt(i) === CH_COLON) {
      if (gap >= 0) return 0;
      gap = count;
      i++;
      if (i === len) break;
    } else if (i === len) {
      return 0; // a trailing single colon
    }
  }
  return plain && upper < 16 ? compressed(count, gap, out) : wordsOfGroups(groups, count, gap, out);
}

/** `wordsOfGroups` of groups spelled plainly, `canonical` set when the `::` (at `gap`, or none) is where `formatV6` puts it. */
function compressed(count: number, gap: number, out: Uint32Array): 0 | IpVersion {
  const version = wordsOfGroups(groups, count, gap, out);
  if (version !== 6) return version;
  // The first longest run of zero groups, of two or more (`zeroRun`), over the groups as `::` filled them in.
  let best = -1;
  let bestLength = 1;
  for (let k = 0; k < 8;) {
    if (groups[k] !== 0) {
      k++;
      continue;
    }
    let j = k;
    while (j < 8 && groups[j] === 0) j++;
    if (j - k > bestLength) {
      best = k;
      bestLength = j - k;
    }
    k = j;
  }
  last.canonical = gap < 0 ? best < 0 : best === gap && bestLength === 8 - count;
  return version;
}

/**
 * The address of `count` parsed 16-bit groups, with `::` before group `gap`
 * (or none: -1), into `out`: 6, or 4 for an IPv4-mapped address (RFC 4291
 * 2.5.5.2, answered as IPv4), or 0 when the groups do not make an address.
 * `g` is overwritten.
 */
export function wordsOfGroups(g: Uint16Array, count: number, gap: number, out: Uint32Array): 0 | IpVersion {
  if (gap < 0) {
    if (count !== 8) return 0;
  } else {
    // `::` stands for at least one zero group.
    if (count > 7) return 0;
    const shift = 8 - count;
    for (let k = count - 1; k >= gap; k--) g[k + shift] = g[k];
    for (let k = gap; k < gap + shift; k++) g[k] = 0;
  }
  const w0 = ((g[0] << 16) | g[1]) >>> 0;
  const w1 = ((g[2] << 16) | g[3]) >>> 0;
  const w2 = ((g[4] << 16) | g[5]) >>> 0;
  const w3 = ((g[6] << 16) | g[7]) >>> 0;
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0;
    out[3] = w3;
    return 4;
  }
  out[0] = w0;
  out[1] = w1;
  out[2] = w2;
  out[3] = w3;
  return 6;
}
