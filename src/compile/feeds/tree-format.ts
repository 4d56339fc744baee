/**
 * `threat.bin`: the compiled threat feeds. This file states its format;
 * `tree-encode.ts` writes it and `tree.ts` reads it.
 *
 * The compiler (`compile.ts`) reduces every feed to one partition of the
 * address space: merged ranges, each with the label of the feeds that list
 * all of its addresses (the union of every covering entry, pushed down).
 * This file stores that partition as a radix tree of two levels: the first
 * 20 bits of an IPv4 address index a bucket of 4 096 addresses, and a
 * bucket holds its merged ranges in order, keyed by the last 12 bits. A
 * lookup is one index read and a scan of a few keys (a binary search in
 * long buckets); the label it finds answers every threat question at once.
 *
 * An IPv4 entry is one u32: a 16-bit key, (address bits within the
 * bucket) << 1 | kind, above a 16-bit label (past 65 536 labels, the wide
 * form: zero there, and the labels in an array of their own), so that the
 * entry a search ends on holds its label. A range of one address
 * is one entry of kind END (1); a longer range is a START entry (0) at its
 * first address and an END entry at its last. For an address x the last
 * entry with key <= (x << 1 | 1) decides: START means x is inside, END
 * means x is inside only when its key is x's. Ranges that cross a bucket's
 * edge are cut there. IPv6 entries are the same with 128-bit keys (four
 * u32) and a u32 of kind (top bit) and label, in one sorted array.
 *
 * File layout (little-endian; every section a multiple of 4 bytes, read as
 * typed arrays without parsing):
 *
 *     0  magic "IPRTHRT1" (8 bytes)
 *     8  u32 format version (4)
 *    12  u32 IPv4 entries E4         16  u32 IPv6 entries E6
 *    20  u32 labels L                24  u32 blocklist references B
 *    28  u32 metadata bytes M        32  u32 flags (bit 0: wide IPv4 labels)
 *    36  u32 CRC-32 of bytes 64..end, continued over bytes 0..35 and 40..63
 *    40  u32 IPv4 merged ranges      44  u32 IPv6 merged ranges
 *    48  reserved (zeros) to 64
 *    64  IPv4 bucket index: 1 048 577 × u32 (bucket b: entries index[b] to index[b+1])
 *        IPv4 entries: E4 × u32 (wide: then E4 × u32 labels)
 *        IPv6 keys: E6 × 4 u32; IPv6 kinds and labels: E6 × u32
 *        labels: L × 6 u32: flags, first blocklist reference, blocklist
 *        count, highest hit count, evidence counts (8 × u8: bogon,
 *        datacenter, tor, vpn, proxy, icloud_relay, attacker, abuser)
 *        blocklist references: B × u32 (indexes into the metadata's list)
 *        metadata: M bytes of JSON (feeds, blocklists, build time), padded
 *        with spaces to a multiple of 4.
 */

import { endianness } from 'node:os';
import { InvalidDatasetError } from '../../contract/errors.js';
import type { RangeList6 } from './ranges6.js';
import type { ThreatMeta } from '../../dataset/threat-meta.js';

export const THREAT_MAGIC = 'IPRTHRT1';
export const THREAT_FORMAT_VERSION = 5;
export const HEADER = 64;
/** Where the header keeps the checksum (`files/checksum.ts`): every byte of the file but its own. */
export const CRC_AT = 36;
/** Buckets of 4096 addresses (an IPv4 address's first 20 bits). */
export const SHIFT = 12;
export const BUCKETS = 1 << (32 - SHIFT);
export const INDEX_WORDS = BUCKETS + 1;
/** Words of a label record. */
export const LABEL_WORDS = 6;
/** Labels that fit the 15 bits of a compact IPv4 entry. */
export const COMPACT_LABELS = 0x10000;
/** The low bit of an IPv4 key: an END entry. */
export const END4 = 1;
/** Addresses per block of `find4Many`. */
export const BLOCK = 64;
/** The address bits within a bucket. */
export const LOW = (1 << SHIFT) - 1;
export const END6 = 0x80000000;
export const WIDE = 1;

/** A slice of the IPv4 part of the file: buckets `from` to `to` (exclusive), encoded. */
export interface Slice4 {
  /** Entry offsets within the slice, one per bucket and one past the last. */
  readonly index: Uint32Array;
  readonly keys: Uint16Array;
  /** Labels as the slice's own table numbers them. */
  readonly labels: Uint32Array;
  /** Merged ranges. */
  readonly ranges: number;
  /** The first range's start and the last range's end with their labels, to join ranges across slices (null: no range). */
  readonly head: { readonly at: number; readonly label: number } | null;
  readonly tail: { readonly at: number; readonly label: number } | null;
}

/** What the compiler hands the file. */
export interface ThreatTables {
  /**
   * IPv4: the bucket index, the number of entries, and `fill`, which writes
   * them (key << 16 | label, or key << 16 alone with their labels apart
   * when `wide`: more labels than 16 bits hold) into the file's bytes; the
   * merged ranges.
   */
  readonly v4: {
    readonly index: Uint32Array;
    readonly count: number;
    readonly wide: boolean;
    readonly fill: (entries: Uint32Array, labels: Uint32Array | null) => void;
    readonly ranges: number;
  };
  /** Sorted, disjoint IPv6 ranges; each value a label (1 and up). */
  readonly v6: RangeList6;
  /** `LABEL_WORDS` words per label; label 0 is "no feed". */
  readonly labels: Uint32Array;
  readonly refs: Uint32Array;
  readonly meta: ThreatMeta;
}

export function requireLittleEndian(): void {
  if (endianness() !== 'LE') throw new InvalidDatasetError('threat.bin is read and written on little-endian machines only.');
}
