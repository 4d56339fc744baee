/**
 * The search tree of an MMDB file: reading its records, and walking it
 * bit by bit (`MmdbFile`).
 *
 * Search tree layout (MaxMind DB format 2.0): `nodeCount` nodes of two records
 * each, `recordSize` bits per record. 24: bytes 0-2 left, 3-5 right. 28: left
 * is the high nibble of byte 3 then bytes 0-2; right is the low nibble of
 * byte 3 then bytes 4-6. 32: bytes 0-3 left, 4-7 right. A record below
 * `nodeCount` is a node, equal to it means "no data", above it points to data
 * at `record - nodeCount - 16` in the data section.
 */

export type Walk = (
  buf: Buffer,
  node: number,
  words: ArrayLike<number>,
  firstWord: number,
  depth: number,
  bits: number,
  nodeCount: number,
  leaf: number,
) => number;

/**
 * Where the last walk ended: the depth reached, and its last step (node
 * and branch: `node * 2 + bit`, unique per network).
 */
export const walked = { depth: 0, leaf: 0 };

/**
 * Walks the words from bit `depth` (counted from `words[firstWord]`) until
 * bit `bits` or a record that is not a node. Returns the final record;
 * where it ended is left in `walked`.
 */
function makeWalk(read: (buf: Buffer, node: number, bit: number) => number): Walk {
  return (buf, node, words, firstWord, depth, bits, nodeCount, leaf) => {
    let word = words[firstWord + (depth >>> 5)];
    while (depth < bits && node < nodeCount) {
      const bit = (word >>> (31 - (depth & 31))) & 1;
      leaf = node * 2 + bit;
      node = read(buf, node, bit);
      depth++;
      if ((depth & 31) === 0 && depth < bits) word = words[firstWord + (depth >>> 5)];
    }
    walked.depth = depth;
    walked.leaf = leaf;
    return node;
  };
}

/** Bits resolved by a `Jump` table. */
export const JUMP_BITS = 16;

/**
 * Where the walk stands after the first 16 bits of an address, per value of
 * those bits, filled on first use: a lookup walks only the remaining bits
 * (8 more for most IPv4 networks instead of 24). `node` holds the node at
 * depth 16, or the final record when the walk ended sooner (then `depth`
 * and `leaf` say where); 0 marks an entry not filled yet (no walk of one
 * step or more ends at the root of a valid tree).
 */
export class Jump {
  readonly node = new Uint32Array(1 << JUMP_BITS);
  readonly depth = new Uint8Array(1 << JUMP_BITS);
  readonly leaf = new Float64Array(1 << JUMP_BITS);
}

const read24 = (buf: Buffer, node: number, bit: number): number => {
  const o = node * 6 + bit * 3;
  return (buf[o] << 16) | (buf[o + 1] << 8) | buf[o + 2];
};
const read28 = (buf: Buffer, node: number, bit: number): number => {
  const o = node * 7;
  if (bit === 0) return ((buf[o + 3] & 0xf0) << 20) | (buf[o] << 16) | (buf[o + 1] << 8) | buf[o + 2];
  return ((buf[o + 3] & 0x0f) << 24) | (buf[o + 4] << 16) | (buf[o + 5] << 8) | buf[o + 6];
};
const read32 = (buf: Buffer, node: number, bit: number): number => {
  const o = node * 8 + bit * 4;
  return buf.readUInt32BE(o);
};

export const WALKS: Record<24 | 28 | 32, Walk> = { 24: makeWalk(read24), 28: makeWalk(read28), 32: makeWalk(read32) };
export const READS = { 24: read24, 28: read28, 32: read32 } as const;
