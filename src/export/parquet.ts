/**
 * The Parquet export: one file per family, rows in address order.
 *
 * - `start`, `end`: the range's first and last address; IPv4 as UINT64,
 *   IPv6 as 16-byte big-endian FIXED_LEN_BYTE_ARRAY (never a DOUBLE or a
 *   128-bit integer some engines read as one);
 * - `start_ip`, `end_ip` as text; `network` when the range is one CIDR
 *   block;
 * - `network_bucket`: the /16 the row is filed under, a range spanning
 *   several repeated once per /16 (a join on equal buckets, then on the
 *   range, is how BigQuery joins ranges);
 * - the record's fields as nested columns (`asn`, `threat` structs,
 *   `languages` and `threat.blocklists` lists of structs), and `record`,
 *   its JSON.
 *
 * Written with hyparquet-writer (pure JavaScript, no native code to build),
 * in row groups of 100 000 rows as they come; rows of one record share its
 * object (the writer converts a shared object once). Statistics on the
 * address columns only.
 */

import { ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { descriptorWriter } from './parquet-file.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import type { Dataset } from '../dataset/format.js';
import type { Engine } from '../engine/engine.js';
import { exportRanges } from './ranges.js';
import { recordAt, type StaticRecord } from './record.js';
import { PerRoute } from './routes.js';
import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { ownEntry, startWorker } from '../platform/threads.js';
import type { ExportOptions, ExportResult } from './index.js';
import { workerOptions } from '../engine/inside.js';
import { ASN_MEMBERS, CARRIER_MEMBERS, PLACE_MEMBERS, THREAT_FLAGS } from '../contract/template.js';

type Leaf = 'string' | 'bool' | 'double' | 'int32';
type Field = readonly [name: string, type: Leaf | { readonly struct: readonly Field[] } | { readonly list: readonly Field[] }];

const str = (...names: string[]): Field[] => names.map((n) => [n, 'string']);
const bools = (...names: string[]): Field[] => names.map((n) => [n, 'bool']);

/** The record's fields and their types, in the record's key order. */
const RECORD: readonly Field[] = [
  ['is_eu', 'bool'],
  ...str(...PLACE_MEMBERS, 'country_name', 'country_code', 'continent_name', 'continent_code'),
  ['latitude', 'double'],
  ['longitude', 'double'],
  ...str('postal', 'calling_code', 'flag', 'emoji_flag', 'emoji_unicode'),
  ['asn', { struct: str(...ASN_MEMBERS) }],
  ['carrier', { struct: str(...CARRIER_MEMBERS) }],
  ['languages', { list: str('name', 'native', 'code') }],
  ['currency', { struct: str('name', 'code', 'symbol', 'native', 'plural') }],
  ['time_zone', { struct: str('name') }],
  [
    'threat',
    {
      struct: [
        ...bools(...THREAT_FLAGS),
        ['blocklists', { list: str('name', 'site', 'type') }],
        ['scores', { struct: (['vpn_score', 'proxy_score', 'threat_score', 'trust_score'] as const).map((n): Field => [n, 'int32']) }],
      ],
    },
  ],
];

const LEAVES: Record<Leaf, Omit<SchemaElement, 'name'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  bool: { type: 'BOOLEAN' },
  double: { type: 'DOUBLE' },
  int32: { type: 'INT32' },
};

/** Schema elements of fields, depth first, every one optional (the record's nulls). */
function elements(fields: readonly Field[]): SchemaElement[] {
  return fields.flatMap(([name, type]): SchemaElement[] => {
    if (typeof type === 'string') return [{ name, ...LEAVES[type], repetition_type: 'OPTIONAL' }];
    if ('struct' in type) return [{ name, repetition_type: 'OPTIONAL', num_children: type.struct.length }, ...elements(type.struct)];
    return [
      { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'OPTIONAL', num_children: type.list.length },
      ...elements(type.list),
    ];
  });
}

/** The columns whose row groups carry statistics (min, max). */
const PRUNED = new Set(['start', 'end', 'network_bucket']);

/** Rows per row group. */
const GROUP = 100_000;

/** One family's Parquet file (open as a descriptor: `parquet-file.ts`), written in row groups as rows come. */
export class ParquetOut {
  rows = 0;
  private readonly writer: ParquetWriter;
  private readonly columns: Map<string, unknown[]>;
  private readonly version: IpVersion;
  /** The record's columns, in `RECORD`'s order. */
  private readonly fields: unknown[][];

  constructor(fd: number, version: IpVersion) {
    this.version = version;
    const address: Omit<SchemaElement, 'name'> =
      version === 4 ? { type: 'INT64', converted_type: 'UINT_64' } : { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16 };
    const own: SchemaElement[] = [
      { name: 'start', ...address, repetition_type: 'REQUIRED' },
      { name: 'end', ...address, repetition_type: 'REQUIRED' },
      { name: 'start_ip', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      { name: 'end_ip', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      { name: 'network', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'network_bucket', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    ];
    const record: SchemaElement = { name: 'record', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'REQUIRED' };
    const names = [...own.map((e) => e.name), ...RECORD.map(([n]) => n), 'record'];
    this.columns = new Map(names.map((n) => [n, []]));
    this.fields = RECORD.map(([name]) => this.columns.get(name)!);
    const schema: SchemaElement[] = [{ name: 'root', num_children: names.length }, ...own, ...elements(RECORD), record];
    this.writer = new ParquetWriter({ writer: descriptorWriter(fd), schema });
  }

  /** Adds a range's rows: one per /16 it spans. */
  add(first: bigint, last: bigint, record: StaticRecord): void {
    const v = this.version;
    const shift = BigInt(v === 4 ? 16 : 112);
    const startIp = formatIp(v, fromBigInt(v, first));
    const endIp = formatIp(v, fromBigInt(v, last));
    // One CIDR block: a power of two in size, starting at a multiple of it.
    const size = last - first + 1n;
    const network =
      (size & (size - 1n)) === 0n && (first & (size - 1n)) === 0n ? `${startIp}/${(v === 4 ? 33 : 129) - size.toString(2).length}` : null;
    const r = record as unknown as Record<string, unknown>;
    // A range's rows share its bounds.
    const start = v === 4 ? first : bytes16(first);
    const end = v === 4 ? last : bytes16(last);
    for (let bucket = first >> shift; bucket <= last >> shift; bucket++) {
      const c = this.columns;
      c.get('start')!.push(start);
      c.get('end')!.push(end);
      c.get('start_ip')!.push(startIp);
      c.get('end_ip')!.push(endIp);
      c.get('network')!.push(network);
      c.get('network_bucket')!.push(`${formatIp(v, fromBigInt(v, bucket << shift))}/16`);
      for (let i = 0; i < RECORD.length; i++) this.fields[i].push(r[RECORD[i][0]] ?? null);
      // hyparquet-writer writes a JSON column's values as JSON.stringify gives them.
      c.get('record')!.push(record);
      this.rows++;
      if (c.get('start')!.length >= GROUP) this.flush();
    }
  }

  private flush(): void {
    if (this.columns.get('start')!.length === 0) return;
    // Statistics where an engine prunes row groups by them (rows are in address order); elsewhere they cost time and say little.
    const columnData: ColumnSource[] = [...this.columns].map(
      ([name, data]) => ({ name, data, statistics: PRUNED.has(name) }) as ColumnSource,
    );
    this.writer.write({ columnData, rowGroupSize: GROUP });
    for (const data of this.columns.values()) data.length = 0;
  }

  /** Writes the last rows and the footer. */
  finish(): void {
    this.flush();
    this.writer.finish();
  }
}

/** An IPv6 address as 16 big-endian bytes. */
function bytes16(n: bigint): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 15; i >= 0; i--) {
    out[i] = Number(n & 255n);
    n >>= 8n;
  }
  return out;
}

/** What writing one family gave: its ranges and rows. */
export interface FamilyWritten {
  readonly ranges: number;
  readonly rows: number;
}

/**
 * Writes one family's file, open as `fd` (empty), from the engine's compiled dataset, telling
 * `told` the share of the dataset's ranges walked, a few hundred times;
 * lets other work of the thread run as it does.
 */
export async function writeFamily(
  engine: Engine,
  ds: Dataset,
  version: IpVersion,
  fd: number,
  told: (share: number) => void,
): Promise<FamilyWritten> {
  const out = new ParquetOut(fd, version);
  const records = new PerRoute((v, first) => recordAt(engine, v, first));
  let ranges = 0;
  let next = 0;
  for (const { first, last, ref, done } of exportRanges(ds, version)) {
    ranges++;
    out.add(first, last, records.get(version, first, ref));
    if (done >= next) {
      told(done);
      next = done + 1 / 500;
      // The other family's progress (from its worker thread) is heard.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  out.finish();
  return { ranges, rows: out.rows };
}

/**
 * The Parquet export: each family written by a worker thread of its own
 * (`parquet-worker.ts`) from an engine over the same files; the two hold
 * about as many ranges. This thread only waits: a row group is encoded in
 * one synchronous call of seconds, and here it would keep a signal from
 * being heard. Where a worker thread does not start, its family is
 * written here. The files are opened here before the threads start and
 * closed once they have stopped: no thread creates a file
 * (`parquet-file.ts`).
 */
export async function writeParquet(
  engine: Engine,
  ds: Dataset,
  options: ExportOptions,
  v4: string,
  v6: string,
): Promise<{ ranges: ExportResult['ranges']; rows: number; bytes: number }> {
  const tell = options.progress;
  // Each family's share of the walk done; the two are told as one figure.
  const done = { 4: 0, 6: 0 };
  let next = 0;
  const told = (version: IpVersion, share: number) => {
    done[version] = share;
    if (tell === undefined || done[4] + done[6] < next) return;
    tell('reading the ranges', done[4] + done[6]);
    next = done[4] + done[6] + 1 / 500;
  };
  const fds: number[] = [];
  try {
    for (const path of [v4, v6]) fds.push(openSync(path, 'w'));
  } catch (e) {
    for (const fd of fds) closeSync(fd);
    throw e;
  }
  const workers = (
    [
      [4, fds[0]],
      [6, fds[1]],
    ] as const
  ).map(([version, fd]) => ({ version, fd, worker: startFamilyWorker(engine, fd, version, (share) => told(version, share)) }));
  try {
    const [four, six] = await Promise.all(
      workers.map(({ version, fd, worker }) => worker?.written ?? writeFamily(engine, ds, version, fd, (share) => told(version, share))),
    );
    tell?.('reading the ranges', 1);
    return {
      ranges: { v4: four.ranges, v6: six.ranges },
      rows: four.rows + six.rows,
      bytes: fstatSync(fds[0]).size + fstatSync(fds[1]).size,
    };
  } finally {
    await Promise.all(workers.map(({ worker }) => worker?.stop()));
    for (const fd of fds) closeSync(fd);
  }
}

/** A worker thread writing one family's Parquet file; null when none starts. */
function startFamilyWorker(
  engine: Engine,
  fd: number,
  version: IpVersion,
  told: (share: number) => void,
): { written: Promise<FamilyWritten>; stop: () => Promise<void> } | null {
  let worker: Worker;
  try {
    worker = startWorker(ownEntry(import.meta.url, './parquet-worker.ts', 'parquet-worker'), {
      workerData: { options: workerOptions(engine), dataset: engine.info().dataset, fd, version },
    });
  } catch {
    return null;
  }
  const written = new Promise<FamilyWritten>((resolve, reject) => {
    worker.on('message', (m: { done?: number; written?: FamilyWritten }) => {
      if (m.done !== undefined) told(m.done);
      if (m.written !== undefined) resolve(m.written);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the Parquet writer's worker thread exited (${code}) before it was done`)));
  });
  // Seen by whoever waits for it; a failure on this thread first stops the worker.
  written.catch(() => undefined);
  return { written, stop: async () => void (await worker.terminate()) };
}
