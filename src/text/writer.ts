/**
 * Output bytes written in place into one buffer, for writers of many
 * records (`iprecord enrich`, the server's bodies). Pieces of records kept
 * as UTF-8 bytes are copied as they are; per-record text (an address, the
 * current time, a CSV cell) is written a character at a time, or by one
 * native call when long. Nothing is joined into strings per record, so
 * nothing is flattened and copied again when the output is written.
 */

import { csvField } from './csv.js';
import { group, zeroRun } from '../ip/format.js';
import type { Words } from './words.js';
import { allocBytes, copyBytes, utf8Text, writeLatin1, writeUtf8 } from '../platform/bytes.js';

/** Text up to this length is written by a loop here rather than by a native call (which costs about as much as 60 characters). */
const SHORT = 48;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const BRACE = 0x7b;
const BRACKET = 0x5b;
/** The first byte of `null`. */
const NULL_N = 0x6e;
const COLON = 0x3a;
const HEX_DIGITS = new Uint8Array([...'0123456789abcdef'].map((c) => c.charCodeAt(0)));
const EMPTY_BUFFER = new Uint8Array(0);
const EMPTY_VIEW = new DataView(EMPTY_BUFFER.buffer, 0, 0);

/** Whether a JSON text holds a quote or a comma: its CSV cell is quoted (JSON has line breaks only as escapes). */
function quoted(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] === QUOTE || b[i] === COMMA) return true;
  return false;
}

export class ByteWriter {
  /** The buffer written to (`into`): replaced by a larger one when full. */
  buf: Uint8Array = EMPTY_BUFFER;
  /** A view of `buf`, through which parts are written (`part`). */
  private view: DataView<ArrayBufferLike> = EMPTY_VIEW;
  /** Bytes written. */
  used = 0;

  /** `spare`: a buffer whose bytes were written out, to fill again (fresh memory costs a page fault per 4 KiB). */
  constructor(capacity: number, spare?: ArrayBuffer | null) {
    this.into(spare != null ? new Uint8Array(spare) : allocBytes(capacity), 0);
  }

  /**
   * Writes into `buf` from `at` on. The view of its memory is made when
   * the memory changes, not per call (a writer into one buffer, as the
   * server's, makes it once): it holds that memory until another is given.
   */
  into(buf: Uint8Array, at: number): void {
    if (buf !== this.buf) {
      this.buf = buf;
      const v = this.view;
      if (v.buffer !== buf.buffer || v.byteOffset !== buf.byteOffset || v.byteLength !== buf.length)
        this.view = new DataView(buf.buffer, buf.byteOffset, buf.length);
    }
    this.used = at;
  }

  /** What was written, as text. */
  toString(): string {
    return utf8Text(this.buf, 0, this.used);
  }

  /** Makes room for `n` more bytes. */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = allocBytes(Math.max(this.used + n, this.buf.length * 2));
    copyBytes(this.buf, next, 0, 0, this.used);
    this.into(next, this.used);
  }

  /**
   * Bytes `start` to `end` of `src` (`start` a multiple of 8), as they
   * are: eight at a time as a float64, then four, then one by one (a native
   * copy costs as much as a hundred bytes; a byte at a time, three times as
   * long as this). The bytes are UTF-8 text or zeros, which never hold a
   * NaN's bits at any offset (exponent bits all set need a byte 0x7f or
   * 0xff after one of 0xf0 or more: not UTF-8), so every float64 copied is
   * an ordinary number whose bits are written back as they were read.
   */
  part(src: Words, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    const view = this.view;
    const f64 = src.f64;
    let at = this.used;
    let w = start >>> 3;
    const whole = w + (n >>> 3);
    for (; w < whole; w++, at += 8) view.setFloat64(at, f64[w], true);
    let u = w << 1;
    if ((n & 4) !== 0) {
      view.setUint32(at, src.u32[u++], true);
      at += 4;
    }
    const rest = n & 3;
    if (rest !== 0) {
      const v = src.u32[u];
      const buf = this.buf;
      buf[at] = v;
      if (rest > 1) buf[at + 1] = v >>> 8;
      if (rest > 2) buf[at + 2] = v >>> 16;
    }
    this.used += n;
  }

  /** Bytes, as they are. */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.used);
    this.used += b.length;
  }

  /** Bytes `from` to `to` of `b`, as they are. */
  slice(b: Uint8Array, from: number, to: number): void {
    const n = to - from;
    this.room(n);
    if (n > SHORT) {
      this.used += copyBytes(b, this.buf, this.used, from, to);
      return;
    }
    const buf = this.buf;
    const at = this.used - from;
    for (let i = from; i < to; i++) buf[at + i] = b[i];
    this.used += n;
  }

  /** Text whose every character is below 256, one byte each: ASCII, or byte text (`record/bytes.ts`). */
  latin1(s: string): void {
    const n = s.length;
    this.room(n);
    if (n > SHORT) {
      this.used += writeLatin1(this.buf, s, this.used);
      return;
    }
    const buf = this.buf;
    const at = this.used;
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
    this.used = at + n;
  }

  /** Text, as UTF-8. */
  text(s: string): void {
    const n = s.length;
    if (n <= SHORT) {
      this.room(n);
      const buf = this.buf;
      const at = this.used;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        buf[at + i] = c;
      }
      if (i === n) {
        this.used = at + n;
        return;
      }
    }
    this.room(3 * n);
    this.used += writeUtf8(this.buf, s, this.used);
  }

  /** A string as JSON (`JSON.stringify(s)`), in UTF-8. */
  jsonString(s: string): void {
    const n = s.length;
    if (n <= SHORT) {
      // Printable ASCII without quotes or backslashes needs no escapes.
      this.room(n + 2);
      const buf = this.buf;
      const at = this.used;
      buf[at] = QUOTE;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) break;
        buf[at + 1 + i] = c;
      }
      if (i === n) {
        buf[at + 1 + n] = QUOTE;
        this.used = at + n + 2;
        return;
      }
    }
    this.text(JSON.stringify(s));
  }

  /**
   * The CSV cell (`csvField`) of one JSON value, whose UTF-8 text is `b`
   * from `from` to `to`: nothing for null; a string's characters, quoted
   * when they hold a comma (without escapes a JSON string holds no quote or
   * line break); an object or an array quoted, its quotes doubled, when it
   * holds a quote or a comma; a number or a boolean as it is.
   */
  csvJson(b: Uint8Array, from: number, to: number): void {
    const first = b[from];
    if (first === QUOTE) {
      let comma = false;
      for (let i = from + 1; i < to - 1; i++) {
        const c = b[i];
        if (c === BACKSLASH) {
          this.text(csvField(JSON.parse(utf8Text(b, from, to))));
          return;
        }
        if (c === COMMA) comma = true;
      }
      if (comma) this.slice(b, from, to);
      else this.slice(b, from + 1, to - 1);
    } else if ((first === BRACE || first === BRACKET) && quoted(b, from, to)) {
      this.room(2 * (to - from) + 2);
      const buf = this.buf;
      let at = this.used;
      buf[at++] = QUOTE;
      for (let i = from; i < to; i++) {
        const c = b[i];
        buf[at++] = c;
        if (c === QUOTE) buf[at++] = QUOTE;
      }
      buf[at++] = QUOTE;
      this.used = at;
    } else if (first !== NULL_N) this.slice(b, from, to);
  }

  /** A whole number of 0 to 999 999 in six digits, with leading zeros. */
  digits6(n: number): void {
    this.room(6);
    const buf = this.buf;
    const at = this.used;
    for (let i = 5; i >= 0; i--) {
      buf[at + i] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    }
    this.used = at + 6;
  }

  /** A whole number of 0 to 999, in as many digits as it has. */
  small(n: number): void {
    this.room(3);
    const buf = this.buf;
    let at = this.used;
    if (n >= 100) buf[at++] = 0x30 + Math.floor(n / 100);
    if (n >= 10) buf[at++] = 0x30 + (Math.floor(n / 10) % 10);
    buf[at++] = 0x30 + (n % 10);
    this.used = at;
  }

  /** A uint32 as a dotted quad. */
  dottedQuad(v: number): void {
    this.small(v >>> 24);
    this.latin1('.');
    this.small((v >>> 16) & 255);
    this.latin1('.');
    this.small((v >>> 8) & 255);
    this.latin1('.');
    this.small(v & 255);
  }

  /** Four words as IPv6 text (RFC 5952, as `formatV6`). */
  ipv6(words: ArrayLike<number>): void {
    const [start, length] = zeroRun(words);
    this.room(41);
    if (start < 0) this.groups(words, 0, 8);
    else {
      this.groups(words, 0, start);
      this.buf[this.used++] = COLON;
      this.buf[this.used++] = COLON;
      this.groups(words, start + length, 8);
    }
  }

  /** Groups `from` to `to` of four words in hex without leading zeros, joined by colons (room made by the caller). */
  private groups(words: ArrayLike<number>, from: number, to: number): void {
    const buf = this.buf;
    let at = this.used;
    for (let i = from; i < to; i++) {
      if (i !== from) buf[at++] = COLON;
      const g = group(words, i);
      for (let shift = g >= 0x1000 ? 12 : g >= 0x100 ? 8 : g >= 0x10 ? 4 : 0; shift >= 0; shift -= 4)
        buf[at++] = HEX_DIGITS[(g >>> shift) & 15];
    }
    this.used = at;
  }

  /** The bytes written. */
  result(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}
