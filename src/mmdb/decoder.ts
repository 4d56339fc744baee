/**
 * Decoder of the MMDB data section (MaxMind DB format 2.0, "Output Data
 * Section"), hardened against corrupt files: every read is bounds-checked,
 * nesting is limited, a pointer may not point to a pointer, and a map or array
 * cannot claim more entries than bytes remain, so allocation is bounded by
 * the file size. Any violation throws `InvalidDatasetError`.
 *
 * Values reached through pointers (strings and maps shared between records)
 * are cached by offset: in a city database most keys and many values are
 * pointers, so the cache saves most of the UTF-8 decoding.
 */

import { isUtf8 } from 'node:buffer';
import { InvalidDatasetError } from '../contract/errors.js';

export type MmdbValue = string | number | bigint | boolean | Uint8Array | MmdbValue[] | { [key: string]: MmdbValue };

const enum Type {
  Extended = 0,
  Pointer = 1,
  String = 2,
  Double = 3,
  Bytes = 4,
  Uint16 = 5,
  Uint32 = 6,
  Map = 7,
  Int32 = 8,
  Uint64 = 9,
  Uint128 = 10,
  Array = 11,
  Container = 12,
  EndMarker = 13,
  Boolean = 14,
  Float = 15,
}

/** Deepest nesting of maps and arrays accepted; real databases use 4 or 5. */
export const MAX_DEPTH = 32;
/** Pointed-to values kept decoded; cleared whole when full. */
export const POINTER_CACHE_SIZE = 65_536;

export class Decoder {
  private readonly buf: Buffer;
  /** File offset of the data section start (pointers are relative to it). */
  private readonly base: number;
  /** First byte past the data section. */
  private readonly end: number;
  private readonly cache = new Map<number, MmdbValue>();
  /** Next offset after the last `decodeAt`. */
  private cursor = 0;

  /** `name` (the file's path) begins every error; `section` names the part decoded. */
  constructor(
    buf: Buffer,
    base: number,
    end: number,
    private readonly name = 'MMDB file',
    private readonly section = 'data section',
  ) {
    this.buf = buf;
    this.base = base;
    this.end = end;
  }

  /** Decodes the value at a file offset. */
  decode(offset: number): MmdbValue {
    return this.value(offset, 0);
  }

  /** Decodes the value at an offset relative to the data section start. */
  decodeData(dataOffset: number): MmdbValue {
    return this.value(this.base + dataOffset, 0);
  }

  private fail(what: string, offset: number): never {
    throw new InvalidDatasetError(`${this.name}: corrupt MMDB ${this.section}: ${what} at byte ${offset}.`);
  }

  private need(offset: number, length: number): void {
    if (offset + length > this.end || offset < this.base) this.fail(`value past the end of the ${this.section}`, offset);
  }

  private value(offset: number, depth: number): MmdbValue {
    if (depth > MAX_DEPTH) this.fail('nesting deeper than ' + MAX_DEPTH, offset);
    const buf = this.buf;
    this.need(offset, 1);
    const ctrl = buf[offset++];
    let type = ctrl >> 5;
    if (type === Type.Pointer) return this.followed(ctrl, offset, depth);
    if (type === Type.Extended) {
      this.need(offset, 1);
      type = buf[offset++] + 7;
      if (type < 8 || type > Type.Float) this.fail('unknown extended type ' + type, offset - 1);
    }
    // Payload size: 5 bits, or 1-3 following bytes.
    let size = ctrl & 0x1f;
    if (size >= 29) {
      const extra = size - 28;
      this.need(offset, extra);
      if (size === 29) size = 29 + buf[offset];
      else if (size === 30) size = 285 + ((buf[offset] << 8) | buf[offset + 1]);
      else size = 65_821 + ((buf[offset] << 16) | (buf[offset + 1] << 8) | buf[offset + 2]);
      offset += extra;
    }
    return this.payload(type, offset, size, depth);
  }

  /** A pointer's target, decoded once (then from the cache); the cursor stays after the pointer. */
  private followed(ctrl: number, offset: number, depth: number): MmdbValue {
    const target = this.pointer(ctrl, offset);
    const next = this.cursor;
    let result = this.cache.get(target);
    if (result === undefined) {
      this.need(target, 1);
      if (this.buf[target] >> 5 === Type.Pointer) this.fail('pointer to a pointer', target);
      result = this.value(target, depth + 1);
      if (this.cache.size >= POINTER_CACHE_SIZE) this.cache.clear();
      this.cache.set(target, result);
    }
    this.cursor = next;
    return result;
  }

  /** The value of `type` whose `size` bytes (or entries) start at `offset`, each size checked against the type. */
  private payload(type: number, offset: number, size: number, depth: number): MmdbValue {
    const buf = this.buf;
    switch (type) {
      case Type.Map:
        return this.map(offset, size, depth);
      case Type.String: {
        this.need(offset, size);
        this.cursor = offset + size;
        return this.string(offset, size);
      }
      case Type.Double:
        if (size !== 8) this.fail('double of size ' + size, offset);
        this.need(offset, 8);
        this.cursor = offset + 8;
        return buf.readDoubleBE(offset);
      case Type.Float:
        if (size !== 4) this.fail('float of size ' + size, offset);
        this.need(offset, 4);
        this.cursor = offset + 4;
        return buf.readFloatBE(offset);
      case Type.Uint16:
      case Type.Uint32:
        if (size > (type === Type.Uint16 ? 2 : 4)) this.fail('unsigned integer of size ' + size, offset);
        return this.uint(offset, size);
      case Type.Int32: {
        if (size > 4) this.fail('int32 of size ' + size, offset);
        const v = this.uint(offset, size);
        return size === 4 ? v | 0 : v;
      }
      case Type.Uint64:
      case Type.Uint128:
        if (size > (type === Type.Uint64 ? 8 : 16)) this.fail('big unsigned integer of size ' + size, offset);
        return this.bigUint(offset, size);
      case Type.Array:
        return this.array(offset, size, depth);
      case Type.Boolean:
        if (size > 1) this.fail('boolean of size ' + size, offset);
        this.cursor = offset;
        return size === 1;
      case Type.Bytes:
        this.need(offset, size);
        this.cursor = offset + size;
        return Uint8Array.prototype.slice.call(buf, offset, offset + size);
      default:
        return this.fail('value of type ' + type, offset);
    }
  }

  private pointer(ctrl: number, offset: number): number {
    const buf = this.buf;
    const ss = (ctrl >> 3) & 3;
    const vvv = ctrl & 7;
    this.need(offset, ss + 1);
    let p: number;
    if (ss === 0) p = (vvv << 8) | buf[offset];
    else if (ss === 1) p = ((vvv << 16) | (buf[offset] << 8) | buf[offset + 1]) + 2048;
    else if (ss === 2) p = vvv * 0x1000000 + ((buf[offset] << 16) | (buf[offset + 1] << 8) | buf[offset + 2]) + 526_336;
    else p = buf.readUInt32BE(offset);
    this.cursor = offset + ss + 1;
    const target = this.base + p;
    if (target >= this.end) this.fail(`pointer past the end of the ${this.section}`, offset - 1);
    return target;
  }

  private string(offset: number, size: number): string {
    const s = this.buf.toString('utf8', offset, offset + size);
    // Node replaces invalid UTF-8 with U+FFFD; tell that from a real U+FFFD.
    if (s.includes('\ufffd') && !isUtf8(this.buf.subarray(offset, offset + size))) {
      this.fail('invalid UTF-8', offset);
    }
    return s;
  }

  private uint(offset: number, size: number): number {
    this.need(offset, size);
    let v = 0;
    for (let i = 0; i < size; i++) v = v * 256 + this.buf[offset + i];
    this.cursor = offset + size;
    return v;
  }

  private bigUint(offset: number, size: number): number | bigint {
    this.need(offset, size);
    if (size <= 6) return this.uint(offset, size);
    let v = 0n;
    for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(this.buf[offset + i]);
    this.cursor = offset + size;
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }

  private map(offset: number, size: number, depth: number): { [key: string]: MmdbValue } {
    // Each pair needs at least two bytes.
    if (size * 2 > this.end - offset) this.fail(`map of ${size} entries`, offset);
    const out: { [key: string]: MmdbValue } = {};
    for (let i = 0; i < size; i++) {
      const key = this.value(offset, depth + 1);
      if (typeof key !== 'string') this.fail('map key that is not a string', offset);
      offset = this.cursor;
      const v = this.value(offset, depth + 1);
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      offset = this.cursor;
    }
    this.cursor = offset;
    return out;
  }

  private array(offset: number, size: number, depth: number): MmdbValue[] {
    if (size > this.end - offset) this.fail(`array of ${size} entries`, offset);
    const out: MmdbValue[] = new Array(size);
    for (let i = 0; i < size; i++) {
      out[i] = this.value(offset, depth + 1);
      offset = this.cursor;
    }
    this.cursor = offset;
    return out;
  }

  /** Forgets the cached values (on reload). */
  clear(): void {
    this.cache.clear();
  }
}
