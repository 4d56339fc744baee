/**
 * Bytes and their text on Node (and Bun and Deno, which carry Node's
 * Buffer): the one module of the answer path that reaches a runtime's own
 * API. Its functions take any Uint8Array and call Buffer's native slices
 * and writes on it. The `iprecord/bytes` entry is built with
 * `bytes-web.ts` in its place (tsup.config.ts), the same functions over
 * `TextDecoder`, `TextEncoder` and loops, for runtimes without Buffer;
 * test/unit/platform/bytes.test.ts holds the two to the same answers.
 */

import { crc32 as zlibCrc32 } from 'node:zlib';

interface Native {
  latin1Slice(this: Uint8Array, start: number, end: number): string;
  utf8Slice(this: Uint8Array, start: number, end: number): string;
  latin1Write(this: Uint8Array, text: string, at: number, length: number): number;
  utf8Write(this: Uint8Array, text: string, at: number, length: number): number;
  copy(this: Uint8Array, target: Uint8Array, at: number, from: number, to: number): number;
}
const NATIVE = Buffer.prototype as unknown as Native;
const { latin1Slice, utf8Slice, latin1Write, utf8Write, copy } = NATIVE;

/** `n` bytes, not zeroed, in memory of their own (not the pool's: a writer's buffer is kept). */
export function allocBytes(n: number): Uint8Array {
  return Buffer.allocUnsafeSlow(n);
}

/** Bytes `from` to `to` as text of one character per byte (codes below 256). */
export function latin1Text(b: Uint8Array, from: number, to: number): string {
  return latin1Slice.call(b, from, to);
}

/** Bytes `from` to `to` decoded as UTF-8. */
export function utf8Text(b: Uint8Array, from: number, to: number): string {
  return utf8Slice.call(b, from, to);
}

/** Writes text of one byte per character (codes below 256) at `at`, as far as `b`'s end; the bytes written. */
export function writeLatin1(b: Uint8Array, text: string, at: number): number {
  return latin1Write.call(b, text, at, b.length - at);
}

/** Writes text as UTF-8 at `at`, whole characters as far as `b`'s end; the bytes written. */
export function writeUtf8(b: Uint8Array, text: string, at: number): number {
  return utf8Write.call(b, text, at, b.length - at);
}

/** Copies bytes `from` to `to` of `src` into `dst` at `at`; the bytes copied. */
export function copyBytes(src: Uint8Array, dst: Uint8Array, at: number, from: number, to: number): number {
  return copy.call(src, dst, at, from, to);
}

/** The UTF-8 bytes of a text. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

/** The length of a text in UTF-8. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** zlib's CRC-32 of `bytes`, continuing from `crc`. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  return zlibCrc32(bytes, crc);
}
