/**
 * A MaxMind DB (format 2.0) writer: networks with data in, one IPv6 MMDB
 * file out (IPv4 networks live at ::/96, as in MaxMind's own databases).
 *
 * Networks are inserted into a binary trie of typed arrays. A network
 * inserted inside an existing one splits it (the inner network wins on its
 * range); a network inserted over existing smaller ones replaces them;
 * halves that end up with the same data are written as one network.
 * Equal data values are stored once, and map keys and repeated strings are
 * written once and referenced by pointers, as the format intends. Records
 * only the tree points to (`record()`) go after the values they point to,
 * and may stream to a file (`spillTo`) rather than be held.
 */

import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import type { IpVersion } from '../ip/parse.js';
import { nextTurn, Pacer } from '../platform/threads.js';
import { Trie } from './trie.js';
import { METADATA_MARKER } from './metadata.js';
import { DataEncoder, Pointer, Typed, Unshared, type WritableValue } from './encoder.js';

export { Pointer, Typed, Unshared, type WritableValue } from './encoder.js';

export interface WriterOptions {
  /** `database_type` in the metadata. */
  databaseType: string;
  /** `description` in the metadata, by language. */
  description?: Record<string, string>;
  languages?: string[];
  /** Seconds since the epoch; defaults to now. */
  buildEpoch?: number;
  /**
   * A file to stream the records written by `record()` to as they come
   * (removed once `writeFile` has copied it), so that they are not held in
   * memory; without it they are held whole.
   */
  spillTo?: string;
}

const DATA_SECTION_SEPARATOR_SIZE = 16;
/** Where `record()`'s handles start: a handle past it is a record's offset among the records. */
const RECORDS = 2 ** 30;

export class MmdbWriter {
  private readonly trie = new Trie();
  /** The data section's values, written as they come (equal values by `insert` and `shared` once). */
  private readonly data = new DataEncoder();
  /**
   * Records only the tree points to (`record()`), placed after `data` in
   * the data section: kept apart, the values records point to stay near the
   * section's start, where pointers to them are short.
   */
  private readonly records: DataEncoder;
  private readonly offsets = new Map<string, number>();
  private readonly options: WriterOptions;
  /** The file `records` streams to (`spillTo`), or null. */
  private readonly spill: number | null;

  constructor(options: WriterOptions) {
    this.options = options;
    const fd = options.spillTo === undefined ? null : openSync(options.spillTo, 'w');
    this.spill = fd;
    this.records = fd === null ? new DataEncoder() : new DataEncoder((chunk) => writeAll(fd, chunk));
  }

  /** Number of trie nodes so far. */
  get nodeCount(): number {
    return this.trie.nodeCount;
  }

  /**
   * Makes a network the same node as another of the same size (MaxMind's
   * aliases: ::ffff:0:0/96 and 2002::/16 lead to the IPv4 tree at ::/96),
   * so that both find the same records. Call it after every insert under
   * the target.
   * @throws RangeError when the target holds no networks
   */
  alias(from: ArrayLike<number>, to: ArrayLike<number>, prefix: number): void {
    this.trie.alias(from, to, prefix);
  }

  /**
   * Inserts a network. `words` are the four words of the address (an IPv4
   * address in `words[3]`); `prefix` counts within its family.
   */
  insert(version: IpVersion, words: ArrayLike<number>, prefix: number, value: WritableValue): void {
    this.insertAt(version, words, prefix, this.valueOnce(value));
  }

  /**
   * Writes a value into the data section now, and returns its offset: for
   * `insertAt`, or inside other values as a `Pointer` (a map many records
   * share). Unlike `insert`, equal values are not looked for.
   */
  value(value: WritableValue): number {
    return this.data.write(value);
  }

  /**
   * The offset of a value equal to this one, written once (a value many
   * records point to); a string is the one map keys point to.
   */
  shared(value: WritableValue): number {
    return typeof value === 'string' ? this.data.stringAt(value) : this.valueOnce(value);
  }

  /** Writes bytes already encoded (`encoder.ts`'s byte helpers; pointers to values of `value` or `shared`) as a value others may point to, and returns its offset. */
  raw(...parts: (Uint8Array | readonly number[])[]): number {
    return this.data.raw(...parts);
  }

  /**
   * Writes a record nothing but the tree points to, encoded
   * (`encoder.ts`'s byte helpers; pointers to values of `value`, `shared`
   * or `raw`), and returns what `insertAt` takes for it.
   */
  record(...parts: (Uint8Array | readonly number[])[]): number {
    const at = this.records.raw(...parts);
    if (at >= RECORDS) throw new RangeError('The records are past 1 GiB.');
    return RECORDS + at;
  }

  /** Inserts a network whose data is the value at a data section offset (`value`, `shared`, `raw`) or a record (`record`). */
  insertAt(version: IpVersion, words: ArrayLike<number>, prefix: number, offset: number): void {
    const bits = version === 4 ? prefix + 96 : prefix;
    if (bits < 0 || bits > 128 || !Number.isInteger(prefix)) throw new RangeError(`Invalid prefix length ${prefix}.`);
    if (offset >= RECORDS * 2) throw new RangeError(`Invalid data offset ${offset}.`);
    if (bits === 0) throw new RangeError('Cannot insert the whole address space as one network.');
    this.trie.insert(bits, words, -(offset + 1)); // leaves < 0 are data references
  }

  /** The offset of a value equal to this one, written once. */
  private valueOnce(value: WritableValue): number {
    const key = stableKey(value);
    let at = this.offsets.get(key);
    if (at === undefined) {
      at = this.data.write(value);
      this.offsets.set(key, at);
    }
    return at;
  }

  /** Serialises the database (a writer whose records are not spilled). */
  toBuffer(): Buffer {
    const records = this.records.toBuffer();
    return Buffer.concat([...this.serialise(() => [records])].map((b) => Buffer.from(b)));
  }

  /**
   * Writes the database to a file, a chunk at a time (spilled records are
   * copied from their file, then removed), letting the event loop turn
   * every 50 ms (a signal is heard); returns its size.
   */
  async writeFile(path: string): Promise<number> {
    const fd = openSync(path, 'w');
    let bytes = 0;
    const pacer = new Pacer();
    try {
      for (const b of this.serialise(() => this.spilled())) {
        writeAll(fd, b);
        bytes += b.length;
        if (pacer.due()) await nextTurn();
      }
    } finally {
      closeSync(fd);
    }
    return bytes;
  }

  /** The records, from their spill file when there is one (removed once read). */
  private *spilled(): Generator<Buffer> {
    if (this.spill === null) {
      yield this.records.toBuffer();
      return;
    }
    this.records.finish();
    closeSync(this.spill);
    const from = openSync(this.options.spillTo!, 'r');
    try {
      const chunk = Buffer.allocUnsafe(8 << 20);
      for (let n; (n = readSync(from, chunk, 0, chunk.length, null)) > 0;) yield chunk.subarray(0, n);
    } finally {
      closeSync(from);
    }
    unlinkSync(this.options.spillTo!);
  }

  /** The database's bytes in order, a chunk at a time (each lent until the next); `records` gives the records. */
  private *serialise(records: () => Iterable<Buffer>): Generator<Buffer> {
    const nodeCount = this.trie.finish();
    const values = this.data.size;
    const dataSize = values + this.records.size;

    const maxRecord = nodeCount + DATA_SECTION_SEPARATOR_SIZE + dataSize;
    const recordSize = maxRecord < 2 ** 24 ? 24 : maxRecord < 2 ** 28 ? 28 : 32;
    if (maxRecord >= 2 ** 32) throw new RangeError("The database is past the format's 4 GiB of tree and data.");
    yield* this.trie.write(recordSize, (at) => nodeCount + DATA_SECTION_SEPARATOR_SIZE + (at >= RECORDS ? values + at - RECORDS : at));
    yield Buffer.alloc(DATA_SECTION_SEPARATOR_SIZE);
    yield this.data.toBuffer();
    yield* records();

    const meta = new DataEncoder();
    meta.write({
      binary_format_major_version: new Typed('uint16', 2),
      binary_format_minor_version: new Typed('uint16', 0),
      build_epoch: new Typed('uint64', BigInt(this.options.buildEpoch ?? Math.floor(Date.now() / 1000))),
      database_type: this.options.databaseType,
      description: this.options.description ?? {},
      ip_version: new Typed('uint16', 6),
      languages: this.options.languages ?? [],
      node_count: new Typed('uint32', nodeCount),
      record_size: new Typed('uint16', recordSize),
    });
    yield METADATA_MARKER;
    yield meta.toBuffer();
  }
}

/** Writes a whole buffer to a file descriptor. */
function writeAll(fd: number, b: Uint8Array): void {
  for (let at = 0; at < b.length;) at += writeSync(fd, b, at, b.length - at);
}

function stableKey(value: WritableValue): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    // Tag every scalar with its type, so that 1 and 1.0 or "1" stay apart.
    if (typeof v === 'bigint') return `n:${v}`;
    if (v instanceof Typed) return `${v.type}:${String(v.value)}`;
    if (v instanceof Pointer) return `p:${v.offset}`;
    if (v instanceof Unshared) return `s:${v.text}`;
    if (v instanceof Uint8Array) return `b:${Buffer.from(v).toString('hex')}`;
    if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? `i:${v}` : `d:${v}`;
    if (typeof v === 'string') return `s:${v}`;
    return v;
  });
}
