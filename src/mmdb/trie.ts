/**
 * The search tree of a MaxMind DB writer: a binary trie of typed arrays,
 * each node's two halves either a node (> 0), empty (0) or a data leaf
 * (< 0, the writer's reference). Written breadth first, node 0 the root.
 */

const EMPTY = 0;

export class Trie {
  private left = new Int32Array(1024);
  private right = new Int32Array(1024);
  private nodes = 1; // node 0 is the root
  /** After `finish()`: each node's number (-1 when unreachable), and the reachable nodes in that order. */
  private order = new Int32Array(0);
  private queue = new Int32Array(0);
  private reachable = 0;

  /** Number of nodes so far. */
  get nodeCount(): number {
    return this.nodes;
  }

  /**
   * Sets the network of the first `bits` bits of `words` (four 32-bit
   * words) to a leaf: a network inside an existing one splits it (the inner
   * one wins on its range); one over existing smaller ones replaces them.
   */
  insert(bits: number, words: ArrayLike<number>, leaf: number): void {
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
    (bit === 0 ? this.left : this.right)[node] = leaf;
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

  /**
   * Makes the network `from`/`prefix` the node of `to`/`prefix`.
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

  /**
   * Replaces each node whose halves hold the same data (or are both empty)
   * by that data in its parent, bottom up: networks inserted in pieces come
   * out as the fewest that say the same. A node is made after its parent
   * (an alias's target before it, and kept), so one pass from the last
   * node up sees children first.
   */
  private collapse(): void {
    const left = this.left;
    const right = this.right;
    const leaf = (c: number, n: number) => c > n && left[c] === right[c] && left[c] <= 0;
    for (let n = this.nodes - 1; n >= 0; n--) {
      if (leaf(left[n], n)) left[n] = left[left[n]];
      if (leaf(right[n], n)) right[n] = left[right[n]];
    }
  }

  /** Merges what says the same (`collapse`), then numbers the reachable nodes breadth first; returns how many there are. */
  finish(): number {
    this.collapse();
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
    this.order = order;
    this.queue = queue;
    this.reachable = tail;
    return numbered;
  }

  /**
   * The numbered nodes (`finish()`) in records of `recordSize` bits, a
   * block of nodes at a time (each lent until the next): an empty half as
   * the node count, a leaf as `leafRecord` of its reference.
   */
  *write(recordSize: 24 | 28 | 32, leafRecord: (leaf: number) => number): Generator<Buffer> {
    const nodeCount = this.reachable;
    const order = this.order;
    const queue = this.queue;
    const tail = this.reachable;
    const nodeBytes = recordSize / 4;
    const recordOf = (r: number): number => {
      if (r === EMPTY) return nodeCount;
      if (r > 0) return order[r];
      return leafRecord(-r - 1);
    };
    // The tree a block of nodes at a time (nodes are in queue order, numbered 0, 1, ...).
    const block = 1 << 16;
    const tree = Buffer.alloc(block * nodeBytes);
    for (let from = 0; from < tail; from += block) {
      const to = Math.min(tail, from + block);
      for (let i = from; i < to; i++) {
        const n = queue[i];
        const o = (i - from) * nodeBytes;
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
      yield tree.subarray(0, (to - from) * nodeBytes);
    }
  }
}
