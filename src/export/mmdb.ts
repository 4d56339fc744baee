/**
 * The MMDB export: one IPv6 tree (`database_type` `iprecord-Record`) with
 * IPv4 at ::/96, aliased at ::ffff:0:0/96 and 64:ff9b::/96
 * (`ip/embedded.ts`). The format has no null: null members are left out.
 *
 * What repeats is stored once and pointed to, as the format intends.
 * Each record is a map whose keys and values are pointers: to the key
 * names, to each distinct value (a city, a latitude, a threat object, a
 * currency), and to its `asn` map, one per network and route. Only the
 * route differs between ranges of one dataset record, so each dataset
 * record is encoded once as the bytes around its `asn` pointer
 * (`Template`), and each record is written once per route it is seen in
 * (`routes.ts`). Ranges next to each other
 * with the same record are one network; the tree merges halves that say
 * the same. The data section streams to a file beside the output as it
 * grows; only the tree is held in memory.
 */

import type { Engine } from '../engine/engine.js';
import type { Dataset } from '../dataset/format.js';
import { NO_ROUTE } from '../dataset/layout.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt, rangeToCidrs } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import { IPV4_CARRIERS } from '../ip/embedded.js';
import { mapHeader, pointerBytes, stringBytes } from '../mmdb/encoder.js';
import { MmdbWriter, type WritableValue } from '../mmdb/writer.js';
import { nextTurn, Pacer } from '../platform/threads.js';
import type { ExportRange } from './ranges.js';
import { Routes } from './routes.js';
import { staticRecord, withoutNulls } from './record.js';

/** The members of a map around one member left to fill: its bytes before and after that member's value. */
interface Template {
  readonly head: Buffer;
  readonly tail: Buffer;
}

/** Bytes kept in 16 MiB chunks (a million small buffers would cost more than their bytes); a position is chunk × 2^24 + offset. */
class Arena {
  private readonly chunks: Buffer[] = [];
  private used = CHUNK;
  put(b: Buffer): number {
    if (this.used + b.length > CHUNK) {
      this.chunks.push(Buffer.allocUnsafe(Math.max(CHUNK, b.length)));
      this.used = 0;
    }
    b.copy(this.chunks[this.chunks.length - 1], this.used);
    this.used += b.length;
    return (this.chunks.length - 1) * CHUNK + this.used - b.length;
  }
  get(at: number, length: number): Buffer {
    const i = Math.floor(at / CHUNK);
    const from = at - i * CHUNK;
    return this.chunks[i].subarray(from, from + length);
  }
}
const CHUNK = 1 << 24;

/**
 * Writes the MMDB export of the ranges to `path` (its records through
 * `path`.data). `rows` counts the networks in the tree.
 */
export async function writeMmdb(
  engine: Engine,
  ds: Dataset,
  walked: Iterable<ExportRange>,
  path: string,
): Promise<{ ranges: { v4: number; v6: number }; rows: number; bytes: number }> {
  const w = new MmdbWriter({
    databaseType: 'iprecord-Record',
    description: { en: 'iprecord records (ip, count and the clock of time_zone left out)' },
    languages: ['en'],
    spillTo: `${path}.data`,
  });
  const records = new RecordsWritten(w, engine, ds.recordCount);
  const { ranges, rows } = await insertRanges(w, walked, (version, first, ref) => records.of(version, first, ref));
  return { ranges, rows, bytes: await w.writeFile(path) };
}

/**
 * Inserts the walked ranges into the writer, each at the data offset
 * `offsetOf` gives it (negative: the range is left out of the file);
 * ranges side by side with one offset are one network, cut into CIDR
 * blocks. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
 * addresses are aliased to the IPv4 networks, as iprecord answers them.
 * The event loop turns every 50 ms, so that a signal is heard and a server
 * in the same process keeps answering. `rows`: the networks inserted.
 */
export async function insertRanges(
  w: MmdbWriter,
  walked: Iterable<ExportRange>,
  offsetOf: (version: IpVersion, first: bigint, ref: number) => number,
): Promise<{ ranges: { v4: number; v6: number }; rows: number }> {
  const ranges = { v4: 0, v6: 0 };
  let rows = 0;
  /** The range being written: ranges next to it with the same offset join it. */
  let open: { version: IpVersion; first: bigint; last: bigint; at: number } | null = null;
  const insert = ({ version, first, last, at }: NonNullable<typeof open>) => {
    if (at < 0) return;
    for (const c of rangeToCidrs({ version, words: fromBigInt(version, first) }, { version, words: fromBigInt(version, last) })) {
      w.insertAt(version, c.words, c.prefix, at);
      rows++;
    }
  };
  const pacer = new Pacer();
  for (const { version, first, last, ref } of walked) {
    if (pacer.due()) await nextTurn();
    if (version === 4) ranges.v4++;
    else ranges.v6++;
    const at = offsetOf(version, first, ref);
    if (open !== null && open.version === version && open.at === at && open.last + 1n === first) open.last = last;
    else {
      if (open !== null) insert(open);
      open = { version, first, last, at };
    }
  }
  if (open !== null) insert(open);
  if (ranges.v4 > 0) for (const from of [[0, 0, 0xffff, 0], ...IPV4_CARRIERS.slice(1)]) w.alias(from, [0, 0, 0, 0], 96);
  return { ranges, rows };
}

/**
 * The records of the export, each written once into the writer's data:
 * by dataset record (ref >>> 8), the bytes of its map around the `asn`
 * value (in `arena`) and its asn map's template around `route`, joined
 * once per route; or, with no route, its record.
 */
class RecordsWritten {
  private readonly arena = new Arena();
  private readonly at: Float64Array;
  private readonly headLength: Uint16Array;
  private readonly tailLength: Uint16Array;
  private readonly asnOf: Int32Array;
  private readonly asnTemplates: Template[] = [];
  private readonly asnIds = new Map<string, number>();
  private readonly routes = new Routes(() => ({ records: new Map<number, number>(), asns: new Map<number, number>() }));

  constructor(
    private readonly w: MmdbWriter,
    private readonly engine: Engine,
    recordCount: number,
  ) {
    this.at = new Float64Array(recordCount).fill(-1);
    this.headLength = new Uint16Array(recordCount);
    this.tailLength = new Uint16Array(recordCount);
    this.asnOf = new Int32Array(recordCount);
  }

  /** Where the record of the range of `ref` starting at `first` is in the writer's data. */
  of(version: IpVersion, first: bigint, ref: number): number {
    const i = ref >>> 8;
    if (this.at[i] < 0) this.learn(version, first, ref);
    return this.asnOf[i] < 0 ? this.at[i] : this.routed(version, first, ref);
  }

  /** A dataset record met for the first time: its record (no route), or its bytes around `asn` and its asn map's template. */
  private learn(version: IpVersion, first: bigint, ref: number): void {
    const i = ref >>> 8;
    const r = staticRecord(this.engine.lookup(formatIp(version, fromBigInt(version, first)))) as unknown as Record<string, unknown>;
    if ((ref & 255) === NO_ROUTE) {
      const t = this.template(r, null);
      this.at[i] = this.w.record(t.head);
      this.asnOf[i] = -1;
      return;
    }
    const asn = r.asn as Record<string, unknown>;
    const key = JSON.stringify({ ...asn, route: null });
    let id = this.asnIds.get(key);
    if (id === undefined) {
      id = this.asnTemplates.push(this.template(asn, 'route')) - 1;
      this.asnIds.set(key, id);
    }
    const t = this.template(r, 'asn');
    this.at[i] = this.arena.put(Buffer.concat([t.head, t.tail]));
    this.headLength[i] = t.head.length;
    this.tailLength[i] = t.tail.length;
    this.asnOf[i] = id;
  }

  /** The record of a range with a route: written once per route. */
  private routed(version: IpVersion, first: bigint, ref: number): number {
    const i = ref >>> 8;
    const route = this.routes.at(version, first, ref & 255);
    const { records, asns } = route.held;
    const known = records.get(i);
    if (known !== undefined) return known;
    const asnOf = this.asnOf[i];
    let asn = asns.get(asnOf);
    if (asn === undefined) {
      const t = this.asnTemplates[asnOf];
      asn = this.w.raw(t.head, stringBytes(route.text), t.tail);
      asns.set(asnOf, asn);
    }
    const bytes = this.arena.get(this.at[i], this.headLength[i] + this.tailLength[i]);
    const made = this.w.record(bytes.subarray(0, this.headLength[i]), pointerBytes(asn), bytes.subarray(this.headLength[i]));
    records.set(i, made);
    return made;
  }

  /** A value's bytes: a pointer to it, written once, or the string itself where that is no longer. */
  private valueBytes(v: unknown): Uint8Array | number[] {
    const pointer = pointerBytes(this.w.shared(withoutNulls(v) as WritableValue));
    if (typeof v !== 'string') return pointer;
    const inline = stringBytes(v);
    return inline.length <= pointer.length ? inline : pointer;
  }

  /** The bytes of a map's members (null ones left out), with the value of `gap` left out: before it, after it. */
  private template(o: Record<string, unknown>, gap: string | null): Template {
    const entries = Object.entries(o).filter(([, v]) => v !== null && v !== undefined);
    const head: (Uint8Array | number[])[] = [mapHeader(entries.length)];
    const tail: (Uint8Array | number[])[] = [];
    let into = head;
    for (const [k, v] of entries) {
      into.push(pointerBytes(this.w.shared(k)));
      if (k === gap) into = tail;
      else into.push(this.valueBytes(v));
    }
    const bytes = (parts: (Uint8Array | number[])[]) => Buffer.concat(parts.map((p) => Uint8Array.from(p)));
    return { head: bytes(head), tail: bytes(tail) };
  }
}
