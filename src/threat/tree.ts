/**
 * One radix tree over IPv4 and IPv6 for every threat feed, and its file,
 * `threat.bin`.
 *
 * Building: each feed's networks are inserted into a binary trie with the
 * feed's id. Then one pass pushes the union of every covering prefix's
 * feeds down to the leaves, drops a feed where its `except` categories also
 * list the address, turns each distinct set into a label (flags, evidence
 * counts, blocklists), and merges sibling leaves with equal labels, so that
 * a lookup is a single walk to a leaf that answers every question at once.
 *
 * File layout (little-endian; every section a multiple of 4 bytes, read as
 * typed arrays without parsing):
 *
 *     0  magic "IPRTHRT1" (8 bytes)
 *     8  u32 format version (1)
 *    12  u32 node count N
 *    16  u32 IPv4 root record      20  u32 IPv6 root record
 *    24  u32 label count L         28  u32 blocklist reference count B
 *    32  u32 metadata bytes M      36  u32 CRC-32 of bytes 64..end
 *    40  reserved (zeros) to 64
 *    64  nodes: N × 2 u32 records (a record with the top bit set is a leaf
 *        whose low 31 bits are a label; else the index of a node)
 *        labels: L × 6 u32: flags, first blocklist reference, blocklist
 *        count, highest hit count, evidence counts (8 × u8: bogon,
 *        datacenter, tor, vpn, proxy, icloud_relay, attacker, abuser)
 *        blocklist references: B × u32 (indexes into the metadata's list)
 *        metadata: M bytes of JSON (feeds, blocklists, build time), padded
 *        with spaces to a multiple of 4.
 */

import { crc32 } from 'node:zlib';
import { InvalidDatasetError } from '../errors.js';
import type { IpVersion } from '../ip/parse.js';
import { CATEGORIES, categoryFlag, type Category } from '../record/threat.js';
import type { Blocklist } from '../types.js';
import type { Network } from './parse.js';

export const THREAT_MAGIC = 'IPRTHRT1';
export const THREAT_FORMAT_VERSION = 1;
const HEADER = 64;
const LEAF = 0x80000000;
const LABEL_WORDS = 6;

/** What the file says of one feed (for `info()`). */
export interface FeedMeta {
  readonly name: string;
  readonly categories: readonly Category[];
  readonly source: string;
  readonly format: string;
  readonly entries: number;
  readonly networks: number;
  readonly badLines: number;
  /** Distinct addresses covered, as a decimal string (IPv6 counts are large). */
  readonly addresses: string;
  readonly dataDate: string | null;
  readonly fetchedAt: string | null;
}

export interface ThreatMeta {
  readonly builtAt: string;
  readonly feeds: readonly FeedMeta[];
  readonly blocklists: readonly Blocklist[];
}

/** A feed as the tree builder needs it. */
export interface TreeFeed {
  readonly categories: readonly Category[];
  readonly except: readonly Category[];
  /** Index into the blocklist table, or -1. */
  readonly blocklist: number;
  readonly networks: readonly Network[];
}

class Trie {
  left = new Int32Array(1 << 16);
  right = new Int32Array(1 << 16);
  count = 2; // node 0: IPv4 root, node 1: IPv6 root
  /** Feeds that list exactly this node's network, by node. */
  readonly own = new Map<number, number[]>();
  /** Highest hit count of the feeds listing this node, by node (only when > 1). */
  readonly hits = new Map<number, number>();

  insert(n: Network, feed: number): void {
    let node = n.version === 4 ? 0 : 1;
    for (let depth = 0; depth < n.prefix; depth++) {
      const w = n.version === 4 ? n.words[3] : n.words[depth >>> 5];
      const bit = (w >>> (31 - (depth & 31))) & 1;
      const side = bit === 0 ? this.left : this.right;
      let next = side[node];
      if (next === 0) {
        next = this.grow();
        (bit === 0 ? this.left : this.right)[node] = next;
      }
      node = next;
    }
    const own = this.own.get(node);
    if (own === undefined) this.own.set(node, [feed]);
    else if (!own.includes(feed)) own.push(feed);
    if (n.hits > 1 && n.hits > (this.hits.get(node) ?? 0)) this.hits.set(node, n.hits);
  }

  private grow(): number {
    if (this.count === this.left.length) {
      const l = new Int32Array(this.left.length * 2);
      l.set(this.left);
      this.left = l;
      const r = new Int32Array(this.right.length * 2);
      r.set(this.right);
      this.right = r;
    }
    return this.count++;
  }
}

/** A set of feeds pushed down to a point, with the highest hit count. */
interface Raw {
  readonly feeds: readonly number[];
  readonly hits: number;
}

/** Growable u32 output. */
class Words {
  data = new Uint32Array(1 << 16);
  length = 0;
  push(v: number): number {
    if (this.length === this.data.length) {
      const d = new Uint32Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length] = v >>> 0;
    return this.length++;
  }
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * Compiles feeds into the bytes of `threat.bin`.
 * `meta` is written as given (its blocklists are the table `blocklist` ids point into).
 */
export function compileThreatTree(feeds: readonly TreeFeed[], meta: ThreatMeta): Buffer {
  const trie = new Trie();
  feeds.forEach((f, id) => {
    for (const n of f.networks) trie.insert(n, id);
  });

  // Raw feed sets, interned.
  const raws: Raw[] = [{ feeds: [], hits: 0 }];
  const rawIds = new Map<string, number>([['|0', 0]]);
  const intern = (list: readonly number[], hits: number): number => {
    const key = list.join(',') + '|' + hits;
    let id = rawIds.get(key);
    if (id === undefined) {
      id = raws.length;
      raws.push({ feeds: list, hits });
      rawIds.set(key, id);
    }
    return id;
  };
  const unions = new Map<string, number>();
  const union = (raw: number, own: readonly number[], hits: number): number => {
    const key = `${raw}:${own.join(',')}:${hits}`;
    let id = unions.get(key);
    if (id === undefined) {
      const base = raws[raw];
      const merged = [...new Set([...base.feeds, ...own])].sort((a, b) => a - b);
      id = intern(merged, Math.max(base.hits, hits));
      unions.set(key, id);
    }
    return id;
  };

  // Final labels: a raw set after `except`, turned into flags and evidence.
  const labels = new Words();
  const blocklistRefs = new Words();
  const labelIds = new Map<string, number>();
  const finalOf = new Map<number, number>();
  const labelOf = (raw: number): number => {
    let id = finalOf.get(raw);
    if (id !== undefined) return id;
    const { feeds: set, hits } = raws[raw];
    const kept = set.filter((f) => {
      const ex = feeds[f].except;
      if (ex.length === 0) return true;
      // Dropped where another feed of an excepted category lists the address.
      return !set.some((g) => g !== f && feeds[g].categories.some((c) => ex.includes(c)));
    });
    const counts = new Array<number>(CATEGORIES.length).fill(0);
    let flags = 0;
    const bls = new Set<number>();
    for (const f of kept) {
      for (const c of feeds[f].categories) {
        counts[CATEGORIES.indexOf(c)]++;
        flags |= categoryFlag(c);
      }
      if (feeds[f].blocklist >= 0) bls.add(feeds[f].blocklist);
    }
    // Hits count only while a listing feed is kept (only hit-count feeds carry them).
    const keptHits = kept.length > 0 ? hits : 0;
    const blList = [...bls].sort((a, b) => a - b);
    const key = `${flags}|${counts.join(',')}|${keptHits}|${blList.join(',')}`;
    id = labelIds.get(key);
    if (id === undefined) {
      id = labelIds.size;
      labelIds.set(key, id);
      labels.push(flags);
      labels.push(blocklistRefs.length);
      labels.push(blList.length);
      labels.push(keptHits);
      labels.push(counts[0] | (counts[1] << 8) | (counts[2] << 16) | (Math.min(255, counts[3]) << 24));
      labels.push(counts[4] | (counts[5] << 8) | (counts[6] << 16) | (Math.min(255, counts[7]) << 24));
      for (const b of blList) blocklistRefs.push(b);
    }
    finalOf.set(raw, id);
    return id;
  };
  labelOf(0); // label 0: no feed

  // Push down and compact, children before parents.
  const nodes = new Words();
  const compile = (node: number, raw: number): number => {
    const own = trie.own.get(node);
    if (own !== undefined) raw = union(raw, own, trie.hits.get(node) ?? 0);
    const l = trie.left[node];
    const r = trie.right[node];
    const left = l === 0 ? (labelOf(raw) | LEAF) >>> 0 : compile(l, raw);
    const right = r === 0 ? (labelOf(raw) | LEAF) >>> 0 : compile(r, raw);
    if (left === right && left >= LEAF) return left;
    const at = nodes.push(left) >>> 1;
    nodes.push(right);
    return at;
  };
  const root4 = compile(0, 0);
  const root6 = compile(1, 0);

  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const metaLength = Math.ceil(metaBytes.length / 4) * 4;
  const body = Buffer.concat([
    u32Bytes(nodes.view()),
    u32Bytes(labels.view()),
    u32Bytes(blocklistRefs.view()),
    Buffer.concat([metaBytes, Buffer.alloc(metaLength - metaBytes.length, 0x20)]),
  ]);
  const header = Buffer.alloc(HEADER);
  header.write(THREAT_MAGIC, 0, 'latin1');
  header.writeUInt32LE(THREAT_FORMAT_VERSION, 8);
  header.writeUInt32LE(nodes.length / 2, 12);
  header.writeUInt32LE(root4 >>> 0, 16);
  header.writeUInt32LE(root6 >>> 0, 20);
  header.writeUInt32LE(labels.length / LABEL_WORDS, 24);
  header.writeUInt32LE(blocklistRefs.length, 28);
  header.writeUInt32LE(metaLength, 32);
  header.writeUInt32LE(crc32(body), 36);
  return Buffer.concat([header, body]);
}

function u32Bytes(a: Uint32Array): Buffer {
  const b = Buffer.alloc(a.length * 4);
  for (let i = 0; i < a.length; i++) b.writeUInt32LE(a[i], i * 4);
  return b;
}

/** A loaded `threat.bin`: lookups by walking typed arrays over the file. */
export class ThreatTree {
  readonly meta: ThreatMeta;
  readonly labelCount: number;
  private readonly nodes: Uint32Array;
  private readonly labels: Uint32Array;
  private readonly refs: Uint32Array;
  private readonly root4: number;
  private readonly root6: number;

  /**
   * Checks and maps a file's bytes.
   * @throws InvalidDatasetError for a bad magic, version, size or checksum, or a record out of range.
   */
  constructor(buf: Buffer, name: string) {
    const bad: (what: string) => never = (what) => {
      throw new InvalidDatasetError(`${name} is not a valid threat.bin: ${what}.`);
    };
    if (buf.length < HEADER || buf.toString('latin1', 0, 8) !== THREAT_MAGIC) bad('bad magic');
    const version = buf.readUInt32LE(8);
    if (version !== THREAT_FORMAT_VERSION) bad(`format version ${version}, this iprecord reads ${THREAT_FORMAT_VERSION}`);
    const nodeCount = buf.readUInt32LE(12);
    const labelCount = buf.readUInt32LE(24);
    const refCount = buf.readUInt32LE(28);
    const metaLength = buf.readUInt32LE(32);
    const size = HEADER + nodeCount * 8 + labelCount * LABEL_WORDS * 4 + refCount * 4 + metaLength;
    if (size !== buf.length) bad(`its sections add up to ${size} bytes but the file has ${buf.length}`);
    if (crc32(buf.subarray(HEADER)) !== buf.readUInt32LE(36)) bad('checksum mismatch');
    // Typed arrays need 4-byte alignment within their ArrayBuffer.
    const b = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
    const words = (at: number, n: number) => new Uint32Array(b.buffer, b.byteOffset + at, n);
    this.nodes = words(HEADER, nodeCount * 2);
    this.labels = words(HEADER + nodeCount * 8, labelCount * LABEL_WORDS);
    this.refs = words(HEADER + nodeCount * 8 + labelCount * LABEL_WORDS * 4, refCount);
    this.labelCount = labelCount;
    let meta: ThreatMeta | null = null;
    try {
      meta = JSON.parse(b.toString('utf8', b.length - metaLength)) as ThreatMeta;
    } catch {
      // reported below
    }
    if (meta === null || typeof meta !== 'object' || !Array.isArray(meta.feeds) || !Array.isArray(meta.blocklists)) bad('unreadable metadata');
    this.meta = meta as ThreatMeta;
    this.root4 = buf.readUInt32LE(16);
    this.root6 = buf.readUInt32LE(20);
    // Every record is a node index below N or a label below L; checked once here so lookups need not.
    const check = (rec: number) => (rec >= LEAF ? (rec & ~LEAF) < labelCount : rec < nodeCount);
    if (!check(this.root4) || !check(this.root6)) bad('a root record out of range');
    for (let i = 0; i < this.nodes.length; i++) if (!check(this.nodes[i])) bad(`record ${i} out of range`);
    for (let l = 0; l < labelCount; l++) {
      const first = this.labels[l * LABEL_WORDS + 1];
      const n = this.labels[l * LABEL_WORDS + 2];
      if (first + n > refCount) bad(`label ${l} has blocklists out of range`);
    }
    const lists = meta.blocklists.length;
    for (let i = 0; i < refCount; i++) if (this.refs[i] >= lists) bad(`blocklist reference ${i} out of range`);
  }

  /** The label of an address (0: no feed lists it). A walk takes at most one step per bit. */
  find(version: IpVersion, words: ArrayLike<number>): number {
    const nodes = this.nodes;
    let rec = version === 4 ? this.root4 : this.root6;
    let depth = 0;
    const bits = version === 4 ? 32 : 128;
    while (rec < LEAF) {
      if (depth === bits) return 0; // a corrupt tree deeper than the address: no label
      const w = version === 4 ? words[3] : words[depth >>> 5];
      rec = nodes[rec * 2 + ((w >>> (31 - (depth & 31))) & 1)];
      depth++;
    }
    return rec & ~LEAF;
  }

  flags(label: number): number {
    return this.labels[label * LABEL_WORDS];
  }

  hits(label: number): number {
    return this.labels[label * LABEL_WORDS + 3];
  }

  /** Evidence counts per category (bit order of `CATEGORIES`). */
  counts(label: number): number[] {
    const a = this.labels[label * LABEL_WORDS + 4];
    const b = this.labels[label * LABEL_WORDS + 5];
    return [a & 255, (a >>> 8) & 255, (a >>> 16) & 255, a >>> 24, b & 255, (b >>> 8) & 255, (b >>> 16) & 255, b >>> 24];
  }

  blocklists(label: number): Blocklist[] {
    const first = this.labels[label * LABEL_WORDS + 1];
    const n = this.labels[label * LABEL_WORDS + 2];
    const out: Blocklist[] = [];
    for (let i = 0; i < n; i++) out.push(this.meta.blocklists[this.refs[first + i]]);
    return out;
  }
}
