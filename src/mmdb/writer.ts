/**
 * A MaxMind DB (format 2.0) writer: networks with data in, one IPv6 MMDB
 * file out (IPv4 networks live at ::/96, as in MaxMind's own databases).
 *
 * Networks are inserted into a binary trie of typed arrays. A network
 * inserted inside an existing one splits it (the inner network wins on its
 * range); a network inserted over existing smaller ones replaces them.
 * Equal data values are stored once, and map keys and repeated strings are
 * written once and referenced by pointers, as the format intends.
 */

import type { IpVersion } from '../ip/parse.js';
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
}

const DATA_SECTION_SEPARATOR_SIZE = 16;
const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
const EMPTY = 0;

export class MmdbWriter {
  private left = new Int32Array(1024);
  private right = new Int32Array(1024);
  private nodes = 1; // node 0 is the root
  /** The data section, written as values come (equal values by `insert` once). */
  private readonly data = new DataEncoder();
  private readonly offsets = new Map<string, number>();
  private readonly options: WriterOptions;

  constructor(options: WriterOptions) {
    this.options = options;
  }

  /** Number of trie nodes so far. */
  get nodeCount(): number {
    return this.nodes;
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

  /** Inserts a network whose data is the value at a data section offset (`value`). */
  insertAt(version: IpVersion, words: ArrayLike<number>, prefix: number, offset: number): void {
    const bits = version === 4 ? prefix + 96 : prefix;
    if (bits < 0 || bits > 128 || !Number.isInteger(prefix)) throw new RangeError(`Invalid prefix length ${prefix}.`);
    const ref = -(offset + 1); // records < 0 are data references
    if (bits === 0) throw new RangeError('Cannot insert the whole address space as one network.');
    let node = 0;
    for (let depth = 0; depth < bits - 1; depth++) {
      const bit = (words[depth >>> 5] >>> (31 - (depth & 31))) & 1;
      const side = bit === 0 ? this.left : this.right;
      let next = side[node];
      if (next <= 0) {
        // Empty or a data leaf: make a node, both halves inheriting the leaf.
        const created = this.newNode();
        this.left[created] = next;
        this.right[created] = next;
        (bit === 0 ? this.left : this.right)[node] = created;
        next = created;
      }
      node = next;
    }
    const last = bits - 1;
    const bit = (words[last >>> 5] >>> (31 - (last & 31))) & 1;
    (bit === 0 ? this.left : this.right)[node] = ref;
  }

  private newNode(): number {
    if (this.nodes === this.left.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.left = grow(this.left);
      this.right = grow(this.right);
    }
    const n = this.nodes++;
    this.left[n] = EMPTY;
    this.right[n] = EMPTY;
    return n;
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

  /**
   * Makes a network the same node as another of the same size (MaxMind's
   * aliases: ::ffff:0:0/96 and 2002::/16 lead to the IPv4 tree at ::/96),
   * so that both find the same records. Call it after every insert under
   * the target.
   * @throws RangeError when the target holds no networks
   */
  alias(from: ArrayLike<number>, to: ArrayLike<number>, prefix: number): void {
    const bit = (w: ArrayLike<number>, d: number) => (w[d >>> 5] >>> (31 - (d & 31))) & 1;
    let target = 0;
    for (let d = 0; d < prefix; d++) {
      target = (bit(to, d) === 0 ? this.left : this.right)[target];
      if (target <= 0) throw new RangeError('An alias needs networks under its target.');
    }
    let node = 0;
    for (let d = 0; d < prefix - 1; d++) {
      const side = bit(from, d) === 0 ? this.left : this.right;
      if (side[node] <= 0) {
        const created = this.newNode();
        this.left[created] = side[node];
        this.right[created] = side[node];
        side[node] = created;
      }
      node = side[node];
    }
    (bit(from, prefix - 1) === 0 ? this.left : this.right)[node] = target;
  }

  /** Serialises the database. */
  toBuffer(): Buffer {
    // Renumber the reachable nodes breadth-first (node 0 stays the root).
    const count = this.nodes;
    const order = new Int32Array(count).fill(-1);
    const queue = new Int32Array(count);
    let head = 0;
    let tail = 0;
    queue[tail++] = 0;
    order[0] = 0;
    let numbered = 1;
    while (head < tail) {
      const n = queue[head++];
      for (const child of [this.left[n], this.right[n]]) {
        if (child > 0 && order[child] < 0) {
          order[child] = numbered++;
          queue[tail++] = child;
        }
      }
    }
    const nodeCount = numbered;

    const dataBuf = this.data.toBuffer();

    const maxRecord = nodeCount + DATA_SECTION_SEPARATOR_SIZE + dataBuf.length;
    const recordSize = maxRecord < 2 ** 24 ? 24 : maxRecord < 2 ** 28 ? 28 : 32;
    const nodeBytes = recordSize / 4;
    const tree = Buffer.alloc(nodeCount * nodeBytes);
    const recordOf = (r: number): number => {
      if (r === EMPTY) return nodeCount;
      if (r > 0) return order[r];
      return nodeCount + DATA_SECTION_SEPARATOR_SIZE + (-r - 1);
    };
    for (let i = 0; i < tail; i++) {
      const n = queue[i];
      const o = order[n] * nodeBytes;
      const l = recordOf(this.left[n]);
      const r = recordOf(this.right[n]);
      if (recordSize === 24) {
        tree.writeUIntBE(l, o, 3);
        tree.writeUIntBE(r, o + 3, 3);
      } else if (recordSize === 28) {
        tree.writeUIntBE(l & 0xffffff, o, 3);
        tree[o + 3] = ((l >>> 24) << 4) | (r >>> 24);
        tree.writeUIntBE(r & 0xffffff, o + 4, 3);
      } else {
        tree.writeUInt32BE(l, o);
        tree.writeUInt32BE(r, o + 4);
      }
    }

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
    return Buffer.concat([tree, Buffer.alloc(DATA_SECTION_SEPARATOR_SIZE), dataBuf, METADATA_MARKER, meta.toBuffer()]);
  }
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
