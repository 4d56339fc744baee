/**
 * Range and CIDR arithmetic for the builders (not the lookup path): an
 * inclusive range of addresses split into the fewest CIDR blocks.
 */

import type { Address } from './address.js';
import type { IpVersion } from './parse.js';

/** The address as an unsigned integer within its family. */
export function toBigInt(a: Address): bigint {
  if (a.version === 4) return BigInt(a.words[3]);
  return (BigInt(a.words[0]) << 96n) | (BigInt(a.words[1]) << 64n) | (BigInt(a.words[2]) << 32n) | BigInt(a.words[3]);
}

/** Four words of an integer within a family. */
export function fromBigInt(version: IpVersion, n: bigint): [number, number, number, number] {
  if (version === 4) return [0, 0, 0, Number(n)];
  return [Number((n >> 96n) & 0xffffffffn), Number((n >> 64n) & 0xffffffffn), Number((n >> 32n) & 0xffffffffn), Number(n & 0xffffffffn)];
}

export interface Cidr {
  version: IpVersion;
  words: [number, number, number, number];
  prefix: number;
}

/**
 * Splits the inclusive range [start, end] into CIDR blocks, in address order.
 * @throws RangeError when the ends are of different families or reversed.
 */
export function rangeToCidrs(start: Address, end: Address): Cidr[] {
  if (start.version !== end.version) throw new RangeError('Range ends are of different address families.');
  const version = start.version;
  if (version === 4) return rangeToCidrsV4(start.words[3], end.words[3]);
  const width = 128;
  let lo = toBigInt(start);
  const hi = toBigInt(end);
  if (lo > hi) throw new RangeError('Range start is after its end.');
  const out: Cidr[] = [];
  while (lo <= hi) {
    // Largest block aligned at `lo` that does not pass `hi`.
    const size = Math.min(lo === 0n ? width : bitLength(lo & -lo) - 1, bitLength(hi - lo + 1n) - 1);
    out.push({ version, words: fromBigInt(version, lo), prefix: width - size });
    lo += 1n << BigInt(size);
  }
  return out;
}

/** The number of bits of a positive integer. */
function bitLength(n: bigint): number {
  return n.toString(2).length;
}

/** IPv4 on plain numbers (exact below 2^53). */
function rangeToCidrsV4(lo: number, hi: number): Cidr[] {
  if (lo > hi) throw new RangeError('Range start is after its end.');
  const out: Cidr[] = [];
  while (lo <= hi) {
    let size = 0;
    while (size < 32 && lo % 2 ** (size + 1) === 0 && lo + 2 ** (size + 1) - 1 <= hi) size++;
    out.push({ version: 4, words: [0, 0, 0, lo], prefix: 32 - size });
    lo += 2 ** size;
  }
  return out;
}
