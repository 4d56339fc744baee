/**
 * `bytes.ts` for runtimes without Node's Buffer (Workers, browsers): the
 * same functions over `TextDecoder`, `TextEncoder`, `Uint8Array` and
 * loops. The `iprecord/bytes` entry is built with it (tsup.config.ts).
 */

const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const ENCODER = new TextEncoder();
/** Characters made per `String.fromCharCode` call (its arguments are on the stack). */
const CHARS_PER_CALL = 4096;
/** Text up to this length is decoded by a loop rather than by TextDecoder. */
const SHORT = 32;
/** UTF-8 up to this length is decoded here rather than by TextDecoder (well-formed; else by it). */
const SHORT_UTF8 = 512;

export function allocBytes(n: number): Uint8Array {
  return new Uint8Array(n);
}

export function latin1Text(b: Uint8Array, from: number, to: number): string {
  if (to - from <= SHORT) {
    let s = '';
    for (let i = from; i < to; i++) s += String.fromCharCode(b[i]);
    return s;
  }
  let s = '';
  for (let i = from; i < to; i += CHARS_PER_CALL)
    s += String.fromCharCode.apply(null, b.subarray(i, Math.min(to, i + CHARS_PER_CALL)) as unknown as number[]);
  return s;
}

export function utf8Text(b: Uint8Array, from: number, to: number): string {
  if (to - from > SHORT_UTF8) return UTF8.decode(b.subarray(from, to));
  // Short text (a record's parts, a value) decoded here: a TextDecoder call costs about as much as 200 characters.
  let s = '';
  for (let i = from; i < to;) {
    const c = b[i];
    if (c < 0x80) {
      s += String.fromCharCode(c);
      i++;
      continue;
    }
    const c1 = i + 1 < to ? b[i + 1] : 0;
    if (c >= 0xc2 && c < 0xe0 && (c1 & 0xc0) === 0x80) {
      s += String.fromCharCode(((c & 0x1f) << 6) | (c1 & 0x3f));
      i += 2;
      continue;
    }
    const c2 = i + 2 < to ? b[i + 2] : 0;
    if (c >= 0xe0 && c < 0xf0 && (c1 & 0xc0) === 0x80 && (c2 & 0xc0) === 0x80 && (c !== 0xe0 || c1 >= 0xa0) && (c !== 0xed || c1 < 0xa0)) {
      s += String.fromCharCode(((c & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f));
      i += 3;
      continue;
    }
    const c3 = i + 3 < to ? b[i + 3] : 0;
    if (
      c >= 0xf0 &&
      c < 0xf5 &&
      (c1 & 0xc0) === 0x80 &&
      (c2 & 0xc0) === 0x80 &&
      (c3 & 0xc0) === 0x80 &&
      (c !== 0xf0 || c1 >= 0x90) &&
      (c !== 0xf4 || c1 < 0x90)
    ) {
      s += String.fromCodePoint(((c & 0x07) << 18) | ((c1 & 0x3f) << 12) | ((c2 & 0x3f) << 6) | (c3 & 0x3f));
      i += 4;
      continue;
    }
    // Not well-formed: the decoder's replacements, as Buffer's.
    return UTF8.decode(b.subarray(from, to));
  }
  return s;
}

export function writeLatin1(b: Uint8Array, text: string, at: number): number {
  const n = Math.min(text.length, b.length - at);
  for (let i = 0; i < n; i++) b[at + i] = text.charCodeAt(i);
  return n;
}

export function writeUtf8(b: Uint8Array, text: string, at: number): number {
  return ENCODER.encodeInto(text, b.subarray(at)).written;
}

export function copyBytes(src: Uint8Array, dst: Uint8Array, at: number, from: number, to: number): number {
  const n = Math.max(0, Math.min(to, src.length) - from, 0);
  const m = Math.min(n, dst.length - at);
  // A few bytes (a part's piece) by a loop: a view made for each costs more than the copy.
  if (m <= 32) for (let i = 0; i < m; i++) dst[at + i] = src[from + i];
  else dst.set(src.subarray(from, from + m), at);
  return m;
}

export function utf8Bytes(text: string): Uint8Array {
  return ENCODER.encode(text);
}

export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** CRC-32 (zlib's polynomial, reflected), eight bytes a step from eight tables of 256 (slicing by 8: about 1 GB/s, against 0.2 a byte a step). */
const CRC_TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n] >>> 8) ^ t[t[(k - 1) * 256 + n] & 0xff];
  return t;
})();

export function crc32(bytes: Uint8Array, crc = 0): number {
  const t = CRC_TABLES;
  let c = ~crc;
  let i = 0;
  const whole = bytes.length & ~7;
  for (; i < whole; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      t[1792 + (lo & 0xff)] ^
      t[1536 + ((lo >>> 8) & 0xff)] ^
      t[1280 + ((lo >>> 16) & 0xff)] ^
      t[1024 + (lo >>> 24)] ^
      t[768 + bytes[i + 4]] ^
      t[512 + bytes[i + 5]] ^
      t[256 + bytes[i + 6]] ^
      t[bytes[i + 7]];
  }
  for (; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
