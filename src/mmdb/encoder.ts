/**
 * The data section of a MaxMind DB (format 2.0): values encoded as they
 * come, strings and map keys written once and referenced by pointers.
 */

/** A value forced to one MMDB type (the metadata needs uint16 and uint64). */
export class Typed {
  constructor(
    readonly type: 'uint16' | 'uint32' | 'uint64' | 'int32' | 'float' | 'double',
    readonly value: number | bigint,
  ) {}
}

/** A value already in the data section (`MmdbWriter.value`), written as a pointer to it. */
export class Pointer {
  constructor(readonly offset: number) {}
}

/** A string written where it stands, not kept for pointers (one of millions that never repeat, such as a route). */
export class Unshared {
  constructor(readonly text: string) {}
}

export type WritableValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | Typed
  | Pointer
  | Unshared
  | readonly WritableValue[]
  | { readonly [key: string]: WritableValue };

/** Type numbers of the format. */
const T = {
  pointer: 1,
  string: 2,
  double: 3,
  bytes: 4,
  uint16: 5,
  uint32: 6,
  map: 7,
  int32: 8,
  uint64: 9,
  uint128: 10,
  array: 11,
  boolean: 14,
  float: 15,
} as const;

/** The bytes of a control byte (and its size bytes) for a value of a type and size. */
export function controlBytes(type: number, size: number): number[] {
  const ext = type > 7;
  const typeBits = ext ? 0 : type << 5;
  const head: number[] = [];
  let first: number;
  if (size < 29) first = typeBits | size;
  else if (size < 285) {
    first = typeBits | 29;
    head.push(size - 29);
  } else if (size < 65_821) {
    first = typeBits | 30;
    const s = size - 285;
    head.push(s >>> 8, s & 255);
  } else {
    first = typeBits | 31;
    const s = size - 65_821;
    head.push((s >>> 16) & 255, (s >>> 8) & 255, s & 255);
  }
  return ext ? [first, type - 7, ...head] : [first, ...head];
}

/** The bytes of a pointer to a data section offset (2 to 5 bytes: the smaller the offset, the shorter). */
export function pointerBytes(target: number): number[] {
  if (target < 2048) return [0x20 | (target >>> 8), target & 255];
  if (target < 526_336) {
    const p = target - 2048;
    return [0x28 | (p >>> 16), (p >>> 8) & 255, p & 255];
  }
  if (target < 134_744_064) {
    const p = target - 526_336;
    return [0x30 | (p >>> 24), (p >>> 16) & 255, (p >>> 8) & 255, p & 255];
  }
  return [0x38, (target >>> 24) & 255, (target >>> 16) & 255, (target >>> 8) & 255, target & 255];
}

/** The bytes of a string written where it stands. */
export function stringBytes(s: string): Buffer {
  const text = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from(controlBytes(T.string, text.length)), text]);
}

/** The bytes of a map's control byte for `entries` members (its keys and values follow). */
export const mapHeader = (entries: number): number[] => controlBytes(T.map, entries);

export class DataEncoder {
  /** The section since the last spill: `length` bytes of `buf`, which doubles as it fills. */
  private buf = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  /** Bytes of the section already handed to `spill`. */
  private spilled = 0;
  /** Offsets of strings already written, for pointers. */
  private readonly strings = new Map<string, number>();

  /**
   * @param spill when given, takes the section's bytes in order each time
   *   about `spillAt` bytes are held (a file the section is streamed to), so
   *   that a section of any size is held a chunk at a time; `finish()` hands
   *   it the rest. A chunk is lent for the call (write it synchronously).
   */
  constructor(
    private readonly spill?: (chunk: Buffer) => void,
    private readonly spillAt = 8 << 20,
  ) {}

  /** The section's size so far. */
  get size(): number {
    return this.spilled + this.length;
  }

  /** The whole section, when nothing was spilled. */
  toBuffer(): Buffer {
    if (this.spilled > 0) throw new Error('the data section was spilled: finish() hands out the rest');
    return Buffer.from(this.buf.subarray(0, this.length));
  }

  /** Hands `spill` the bytes not yet handed. */
  finish(): void {
    if (this.spill === undefined) throw new Error('finish() is for a section that spills');
    this.spill(this.buf.subarray(0, this.length));
    this.spilled += this.length;
    this.length = 0;
  }

  /** Writes a value; returns its offset in the section. */
  write(value: WritableValue): number {
    const at = this.size;
    this.value(value);
    this.maybeSpill();
    return at;
  }

  /** Writes bytes already encoded, one value in parts (pointers into the section where it lies); returns its offset. */
  raw(...parts: (Uint8Array | readonly number[])[]): number {
    const at = this.size;
    for (const p of parts) this.push(p);
    this.maybeSpill();
    return at;
  }

  /** The offset of a string in the section, written now if it is not there yet (a map key or a value to point to). */
  stringAt(s: string): number {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    const at = this.size;
    this.strings.set(s, at);
    this.push(stringBytes(s));
    this.maybeSpill();
    return at;
  }

  private maybeSpill(): void {
    if (this.spill !== undefined && this.length >= this.spillAt) this.finish();
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  private push(b: Uint8Array | readonly number[]): void {
    this.room(b.length);
    if (b instanceof Uint8Array) this.buf.set(b, this.length);
    else for (let i = 0; i < b.length; i++) this.buf[this.length + i] = b[i];
    this.length += b.length;
  }

  private control(type: number, size: number): void {
    this.push(controlBytes(type, size));
  }

  private pointer(target: number): void {
    this.push(pointerBytes(target));
  }

  private string(s: string): void {
    const known = this.strings.get(s);
    const bytes = Buffer.from(s, 'utf8');
    // A pointer costs 2-5 bytes; only worth it past that.
    if (known !== undefined && bytes.length > 3) {
      this.pointer(known);
      return;
    }
    if (known === undefined) this.strings.set(s, this.size);
    this.control(T.string, bytes.length);
    this.push(bytes);
  }

  private uint(type: number, v: bigint | number, maxBytes: number): void {
    let n = BigInt(v);
    if (n < 0n) throw new RangeError('Negative value for an unsigned type.');
    const bytes: number[] = [];
    while (n > 0n) {
      bytes.unshift(Number(n & 255n));
      n >>= 8n;
    }
    if (bytes.length > maxBytes) throw new RangeError('Value too large for its type.');
    this.control(type, bytes.length);
    this.push(bytes);
  }

  private value(v: WritableValue): void {
    if (typeof v === 'string') return this.string(v);
    if (typeof v === 'boolean') return this.control(T.boolean, v ? 1 : 0);
    if (typeof v === 'bigint') return this.uint(v < 2n ** 64n ? T.uint64 : T.uint128, v, 16);
    if (typeof v === 'number') {
      if (Number.isInteger(v) && v >= 0 && v < 2 ** 32) return this.uint(T.uint32, v, 4);
      if (Number.isInteger(v) && v < 0 && v >= -(2 ** 31)) return this.typed(new Typed('int32', v));
      return this.typed(new Typed('double', v));
    }
    if (v instanceof Typed) return this.typed(v);
    if (v instanceof Pointer) return this.pointer(v.offset);
    if (v instanceof Unshared) {
      const bytes = Buffer.from(v.text, 'utf8');
      this.control(T.string, bytes.length);
      return this.push(bytes);
    }
    if (v instanceof Uint8Array) {
      this.control(T.bytes, v.length);
      this.push(Buffer.from(v));
      return;
    }
    if (Array.isArray(v)) {
      this.control(T.array, v.length);
      for (const item of v) this.value(item);
      return;
    }
    const entries = Object.entries(v as Record<string, WritableValue>);
    this.control(T.map, entries.length);
    for (const [k, item] of entries) {
      this.string(k);
      this.value(item);
    }
  }

  private typed(t: Typed): void {
    switch (t.type) {
      case 'uint16':
        return this.uint(T.uint16, t.value, 2);
      case 'uint32':
        return this.uint(T.uint32, t.value, 4);
      case 'uint64':
        return this.uint(T.uint64, t.value, 8);
      case 'int32': {
        const b = Buffer.alloc(4);
        b.writeInt32BE(Number(t.value));
        this.control(T.int32, 4);
        return this.push(b);
      }
      case 'float': {
        const b = Buffer.alloc(4);
        b.writeFloatBE(Number(t.value));
        this.control(T.float, 4);
        return this.push(b);
      }
      case 'double': {
        const b = Buffer.alloc(8);
        b.writeDoubleBE(Number(t.value));
        this.control(T.double, 8);
        return this.push(b);
      }
    }
  }
}
