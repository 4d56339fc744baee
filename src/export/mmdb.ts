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
 * `path`.data). `rows` counts the networks in the tree. The event loop
 * turns every 50 ms, so that a signal is heard and a server in the same
 * process keeps answering.
 */
export async function writeMmdb(engine: Engine, ds: Dataset, walked: Iterable<ExportRange>, path: string): Promise<{ ranges: { v4: number; v6: number }; rows: number; bytes: number }> {
  const w = new MmdbWriter({
    databaseType: 'iprecord-Record',
    description: { en: 'iprecord records (ip, count and the clock of time_zone left out)' },
    languages: ['en'],
    spillTo: `${path}.data`,
  });
  /** A value's bytes: a pointer to it, written once, or the string itself where that is no longer. */
  const valueBytes = (v: unknown): Uint8Array | number[] => {
    const pointer = pointerBytes(w.shared(withoutNulls(v) as WritableValue));
    if (typeof v !== 'string') return pointer;
    const inline = stringBytes(v);
    return inline.length <= pointer.length ? inline : pointer;
  };
  /** The bytes of a map's members (null ones left out), with the value of `gap` left out: before it, after it. */
  const template = (o: Record<string, unknown>, gap: string | null): Template => {
    const entries = Object.entries(o).filter(([, v]) => v !== null && v !== undefined);
    const head: (Uint8Array | number[])[] = [mapHeader(entries.length)];
    const tail: (Uint8Array | number[])[] = [];
    let into = head;
    for (const [k, v] of entries) {
      into.push(pointerBytes(w.shared(k)));
      if (k === gap) into = tail;
      else into.push(valueBytes(v));
    }
    const bytes = (parts: (Uint8Array | number[])[]) => Buffer.concat(parts.map((p) => Uint8Array.from(p)));
    return { head: bytes(head), tail: bytes(tail) };
  };

  // By dataset record (ref >>> 8): the bytes of its map around the `asn` value (in `arena`) and its asn map's template around `route`; or, with no route, its record.
  const arena = new Arena();
  const at = new Float64Array(ds.recordCount).fill(-1);
  const headLength = new Uint16Array(ds.recordCount);
  const tailLength = new Uint16Array(ds.recordCount);
  const asnOf = new Int32Array(ds.recordCount);
  const asnTemplates: Template[] = [];
  const asnIds = new Map<string, number>();
  const learn = (version: IpVersion, first: bigint, ref: number) => {
    const i = ref >>> 8;
    const r = staticRecord(engine.lookup(formatIp(version, fromBigInt(version, first)))) as unknown as Record<string, unknown>;
    if ((ref & 255) === NO_ROUTE) {
      const t = template(r, null);
      at[i] = w.record(t.head);
      asnOf[i] = -1;
      return;
    }
    const asn = r.asn as Record<string, unknown>;
    const key = JSON.stringify({ ...asn, route: null });
    let id = asnIds.get(key);
    if (id === undefined) {
      id = asnTemplates.push(template(asn, 'route')) - 1;
      asnIds.set(key, id);
    }
    const t = template(r, 'asn');
    at[i] = arena.put(Buffer.concat([t.head, t.tail]));
    headLength[i] = t.head.length;
    tailLength[i] = t.tail.length;
    asnOf[i] = id;
  };

  const routes = new Routes(() => ({ records: new Map<number, number>(), asns: new Map<number, number>() }));
  /** The record of a range with a route: written once per route. */
  const routed = (version: IpVersion, first: bigint, ref: number): number => {
    const i = ref >>> 8;
    const route = routes.at(version, first, ref & 255);
    const { records, asns } = route.held;
    const known = records.get(i);
    if (known !== undefined) return known;
    let asn = asns.get(asnOf[i]);
    if (asn === undefined) {
      const t = asnTemplates[asnOf[i]];
      asn = w.raw(t.head, stringBytes(route.text), t.tail);
      asns.set(asnOf[i], asn);
    }
    const bytes = arena.get(at[i], headLength[i] + tailLength[i]);
    const made = w.record(bytes.subarray(0, headLength[i]), pointerBytes(asn), bytes.subarray(headLength[i]));
    records.set(i, made);
    return made;
  };

  const ranges = { v4: 0, v6: 0 };
  let rows = 0;
  /** The range being written: ranges next to it with the same record join it. */
  let open: { version: IpVersion; first: bigint; last: bigint; at: number } | null = null;
  const insert = ({ version, first, last, at }: NonNullable<typeof open>) => {
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
    if (at[ref >>> 8] < 0) learn(version, first, ref);
    const record = asnOf[ref >>> 8] < 0 ? at[ref >>> 8] : routed(version, first, ref);
    if (open !== null && open.version === version && open.at === record && open.last + 1n === first) open.last = last;
    else {
      if (open !== null) insert(open);
      open = { version, first, last, at: record };
    }
  }
  if (open !== null) insert(open);
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses find the IPv4 records, as iprecord answers them.
  if (ranges.v4 > 0) for (const from of [[0, 0, 0xffff, 0], ...IPV4_CARRIERS.slice(1)]) w.alias(from, [0, 0, 0, 0], 96);
  return { ranges, rows, bytes: await w.writeFile(path) };
}
