/**
 * Every block of the default data's export, in each format, against
 * `lookup()`: `npm run check:exports` (the build, then `node --import tsx
 * test/engines/exports.ts`; about half an hour on 2 cores, the CSV export
 * alone 8 minutes and 18 GB). The fixture tests are fast; this one reads
 * what a user exports.
 *
 * The MMDB and Parquet exports are written first (at once, each by the CLI
 * in a process of its own); then the CSV export, streamed by the CLI to
 * standard output (`--fields record --out -`), is read as it comes, and the
 * three are walked in step, in address order:
 *
 * - each CSV row is a CIDR block; the record `lookup()` gives at its
 *   first and last address and one inside (less `ip`, `count` and the
 *   clock of `time_zone`) must be one, and be the row's `record` cell;
 * - each of the MMDB's networks, found by walking the file's tree, must
 *   be exactly a run of those blocks (blocks side by side with one record
 *   are one network), with that record as mmdb-lib decodes it (null
 *   members left out; IPv4 at ::/96, ::ffff:0:0/96 and 64:ff9b::/96 leading
 *   to it);
 * - each Parquet row (as DuckDB reads it, a range over several /16s once)
 *   must be exactly a run of those blocks, with that record.
 *
 * Prints what it checked; exits 1 on a difference.
 *
 * `--sample` (CI, a gate of minutes): the MMDB export alone (the CSV and
 * Parquet exports of the default data take 3 to 8 minutes each to write; CI
 * reads them from fixture exports in DuckDB and ClickHouse), its networks
 * walked in address order (the first address of each gap between them
 * answers an error), and a random 2 % of them (FC_SEED, printed, a new one
 * each run), each with the network before and after it, checked as the
 * whole walk checks a block.
 * `npm run check:exports` runs the whole walk.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { Reader, type Response } from 'mmdb-lib';
import { parquetFiles } from '../../src/export/index.js';
import { withoutNulls } from '../../src/export/record.js';
import { openSync } from '../../src/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import type { IpVersion } from '../../src/ip/parse.js';
import { ROOT, seed, xorshift32 } from '../helpers/env.js';

const CLI = join(ROOT, 'dist', 'cli.js');
const engine = openSync();
const SEED = seed();
const random = xorshift32(SEED);
const dir = mkdtempSync(join(tmpdir(), 'iprecord-exports-'));
const started = performance.now();
const secs = () => ((performance.now() - started) / 1000).toFixed(0);

/** A block or range: its family, first and last address (numbers of the family). */
interface Span {
  readonly version: IpVersion;
  readonly first: bigint;
  readonly last: bigint;
}
const text = ({ version, first, last }: Span) =>
  `${formatIp(version, fromBigInt(version, first))}-${formatIp(version, fromBigInt(version, last))}`;

/** `lookup()`'s record at an address less `ip`, `count` and the clock of `time_zone`, as JSON text (the export's `record`); null where it answers an error. */
function expected(version: IpVersion, n: bigint): string | null {
  let json: string;
  try {
    json = engine.lookupJson(formatIp(version, fromBigInt(version, n)));
  } catch {
    return null;
  }
  // `ip` leads, `count` ends, the clock follows time_zone's name (a zone name holds no quote).
  const body = json.slice(json.indexOf(',') + 1, json.lastIndexOf(',"count"'));
  const zone = body.indexOf('"time_zone":{"name":"');
  if (zone < 0) return '{' + body + '}';
  const name = body.indexOf('"', zone + 21) + 1;
  return '{' + body.slice(0, name) + body.slice(body.indexOf('}', name)) + '}';
}

/** Runs the CLI; resolves with its exit code and what it wrote to standard error. */
function cli(args: string[], stdout: 'ignore' | 'pipe' = 'ignore') {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', stdout, 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (b: Buffer) => (errors += b.toString()));
  const done = new Promise<string | null>((resolve) =>
    child.on('close', (code) => resolve(code === 0 ? null : `iprecord ${args.join(' ')} exited ${code}: ${errors.trim()}`)),
  );
  return { child, done };
}

/** The CSV export's lines as they come, a chunk's worth at a time (the line after the header first). */
async function* csvLines(input: NodeJS.ReadableStream): AsyncGenerator<string[]> {
  let rest = '';
  // Decoded as text by the stream, so that a character split between chunks is whole.
  input.setEncoding('utf8');
  for await (const chunk of input) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    yield lines;
  }
  if (rest !== '') yield [rest];
}

/** A CSV row: its block and its `record` cell as written (quoted), or what is wrong with it. */
function csvRow(line: string): { span: Span; cell: string } | { bad: string } {
  // network,start_ip,end_ip (no quotes or commas in them), then the record cell.
  const third = line.indexOf(',', line.indexOf(',', line.indexOf(',') + 1) + 1);
  const [, start, end] = line.slice(0, third).split(',');
  const a = start === undefined ? null : parseIp(start);
  const z = end === undefined ? null : parseIp(end);
  if (third < 0 || a === null || z === null) return { bad: `row ${line.slice(0, 200)}` };
  return { span: { version: a.version, first: toBigInt(a), last: toBigInt(z) }, cell: line.slice(third + 1) };
}

/** The networks of an MMDB in address order (IPv4's, at ::/96, as IPv4), with their data records; the aliases of ::/96 checked and not walked again. */
function* mmdbNetworks(buf: Buffer, reader: Reader<Response>, differ: (what: string) => void): Generator<{ span: Span; offset: number }> {
  const { nodeCount, recordSize } = reader.metadata;
  const nodeBytes = recordSize / 4;
  const record = (node: number, bit: number): number => {
    const o = node * nodeBytes;
    if (recordSize === 24) return buf.readUIntBE(o + bit * 3, 3);
    if (recordSize === 28)
      return bit === 0 ? ((buf[o + 3] & 0xf0) << 20) | buf.readUIntBE(o, 3) : ((buf[o + 3] & 0x0f) << 24) | buf.readUIntBE(o + 4, 3);
    return buf.readUInt32BE(o + bit * 4);
  };
  let v4Node = -1;
  // Depth first, the 0 half first: node (or data record past nodeCount), depth, first address.
  const stack: [number, number, bigint][] = [[0, 0, 0n]];
  while (stack.length > 0) {
    const [at, depth, start] = stack.pop()!;
    if (at >= nodeCount) {
      if (at === nodeCount) continue;
      const last = start + (1n << BigInt(128 - depth)) - 1n;
      const v4 = depth > 96 && last < 1n << 32n;
      yield { span: { version: v4 ? 4 : 6, first: start, last }, offset: at - nodeCount - 16 };
      continue;
    }
    if (depth === 96) {
      if (start === 0n) v4Node = at;
      else if (start === 0xffffn << 32n || start === 0x64ff9bn << 96n) {
        if (at !== v4Node) differ(`mmdb: ${formatIp(6, fromBigInt(6, start))}/96 does not lead to the IPv4 tree`);
        continue;
      }
    }
    stack.push([record(at, 1), depth + 1, start | (1n << BigInt(127 - depth))], [record(at, 0), depth + 1, start]);
  }
}

/** The Parquet export's rows as DuckDB reads them, each range once (a range over several /16s is a row per /16), a chunk at a time. */
async function* parquetRows(files: { 4: string; 6: string }): AsyncGenerator<{ span: Span; record: string }[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    for (const version of [4, 6] as const) {
      const result = await c.stream(`SELECT start_ip, end_ip, record::VARCHAR FROM read_parquet('${files[version]}')`);
      let previous = '';
      for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        const rows: { span: Span; record: string }[] = [];
        for (const [a, z, record] of chunk.getRows() as [string, string, string][]) {
          if (a === previous) continue;
          previous = a;
          rows.push({ span: { version, first: toBigInt(parseIp(a)!), last: toBigInt(parseIp(z)!) }, record });
        }
        yield rows;
      }
    }
  } finally {
    c.closeSync();
  }
}

/** FNV-1a over a string's code units. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A record's JSON text without its null members (MMDB has no null); member names are lower case and underscores. */
const dropNulls = (json: string): string => json.replace(/"[a-z_]+":null,?/g, '').replace(/,\}/g, '}');

const differences: string[] = [];
let different = 0;
const differ = (what: string) => {
  different++;
  if (differences.length < 20) differences.push(what);
};

/** Whether the MMDB's record at `offset`, found at a network's first address, is `want` (each data record decoded once per record text). */
function mmdbSays(
  reader: Reader<Response>,
  verified: Map<number, number>,
  offset: number,
  version: IpVersion,
  first: bigint,
  want: string,
): boolean {
  if (verified.get(offset) === hash(want)) return true;
  const decoded = reader.get(formatIp(version, fromBigInt(version, first)));
  // The text without null members, else (numbers written otherwise) the values.
  if (JSON.stringify(decoded) !== dropNulls(want) && !isDeepStrictEqual(decoded, withoutNulls(JSON.parse(want)))) return false;
  verified.set(offset, hash(want));
  return true;
}

/** The sampled walk of the MMDB export (`--sample`). */
async function sample(): Promise<void> {
  const mmdb = join(dir, 'records.mmdb');
  const failed = await cli(['export', '--format', 'mmdb', '--out', mmdb]).done;
  if (failed !== null) throw new Error(failed);
  console.log(`exports (sample, FC_SEED=${SEED}): MMDB written (${secs()} s)`);
  const buf = readFileSync(mmdb);
  const reader = new Reader(buf);
  const verified = new Map<number, number>();
  let networks = 0;
  let checked = 0;
  let changes = 0;
  let gaps = 0;
  /** A network's first address looked up and its record in the file compared, then an address inside and its last; returns its record. */
  const check = ({ span, offset }: { span: Span; offset: number }): string | null => {
    const { version, first, last } = span;
    checked++;
    const want = expected(version, first);
    if (want === null) {
      differ(`mmdb: ${text(span)} holds a record where lookup() answers an error`);
      return null;
    }
    if (!mmdbSays(reader, verified, offset, version, first, want))
      differ(`mmdb: ${text(span)}: ${JSON.stringify(reader.get(formatIp(version, fromBigInt(version, first)))).slice(0, 200)}`);
    for (const n of new Set([first + ((BigInt(random()) * (last - first + 1n)) >> 32n), last])) {
      if (n !== first && expected(version, n) !== want)
        differ(`${text(span)}: lookup() gives one record at ${formatIp(version, fromBigInt(version, n))}, another at its first address`);
    }
    return want;
  };
  // Every network walked in order (they tile the space but for gaps, where lookup() answers an error); a random 2 % checked,
  // each with the network before it and the one after, where its record or route changes or not.
  let before: { span: Span; offset: number } | null = null;
  let drawn: { want: string | null; span: Span } | null = null;
  for (const net of mmdbNetworks(buf, reader, differ)) {
    const { version, first } = net.span;
    if (++networks % 4_000_000 === 0) console.log(`exports: ${networks.toLocaleString('en')} networks (${secs()} s)`);
    const adjacent = before !== null && before.span.version === version && before.span.last + 1n === first;
    if (before !== null && before.span.version === version && !adjacent) {
      gaps++;
      if (expected(version, before.span.last + 1n) !== null)
        differ(`mmdb: no network at ${formatIp(version, fromBigInt(version, before.span.last + 1n))}, where lookup() gives a record`);
    }
    if (drawn !== null) {
      const want = check(net);
      if (adjacent && drawn.want !== want) changes++;
      drawn = null;
    }
    if (random() < 0.02 * 2 ** 32) {
      if (before !== null) check(before);
      drawn = { want: check(net), span: net.span };
    }
    before = net;
  }
  console.log(
    `exports (sample): mmdb: ${networks.toLocaleString('en')} networks in order, ${gaps} gaps; ${checked.toLocaleString('en')} checked (2 % drawn with their neighbours, ` +
      `${changes.toLocaleString('en')} of those after a drawn one a change of record or route) at their first address, inside and last; ${different} different (${secs()} s)`,
  );
  for (const d of differences) console.log(`  ${d}`);
}

try {
  if (process.argv.includes('--sample')) {
    await sample();
    process.exitCode = different === 0 ? 0 : 1;
  } else await whole();
} finally {
  rmSync(dir, { recursive: true, force: true });
  engine.close();
}
process.exit(different === 0 ? 0 : 1);

/** The whole walk: every block of the CSV export, with the MMDB's networks and the Parquet ranges in step. */
async function whole(): Promise<void> {
  const mmdb = join(dir, 'records.mmdb');
  const parquet = join(dir, 'records.parquet');
  const written = await Promise.all([
    cli(['export', '--format', 'mmdb', '--out', mmdb]).done,
    cli(['export', '--format', 'parquet', '--out', parquet]).done,
  ]);
  for (const e of written) if (e !== null) throw new Error(e);
  console.log(`exports: MMDB and Parquet written (${secs()} s)`);

  const buf = readFileSync(mmdb);
  const reader = new Reader(buf);
  const networks = mmdbNetworks(buf, reader, differ);
  const chunks = parquetRows(parquetFiles(parquet));
  let held: { span: Span; record: string }[] = [];
  let taken = 0;
  /** The next Parquet range, or null past the last. */
  const nextRange = async () => {
    while (taken === held.length) {
      const more = await chunks.next();
      if (more.done === true) return null;
      held = more.value;
      taken = 0;
    }
    return held[taken++];
  };
  /** The data records of the MMDB found to say a record: by record, a hash of its text. */
  const verified = new Map<number, number>();
  /** The Parquet range the blocks are in, and the next block's first address within it. */
  let range = await nextRange();
  let next = range?.span.first ?? 0n;
  /** The MMDB network the blocks are in, and the next block's first address within it. */
  let net = networks.next().value ?? null;
  let netNext = net?.span.first ?? 0n;
  let networksChecked = 0;
  let blocks = 0;
  let addresses = 0;
  let rangesChecked = 0;

  const csv = cli(['export', '--format', 'csv', '--fields', 'record', '--out', '-'], 'pipe');
  let header = true;
  for await (const lines of csvLines(csv.child.stdout!)) {
    for (const line of lines) {
      if (header) {
        header = false;
        if (line !== 'network,start_ip,end_ip,record') differ(`csv: header ${line}`);
        continue;
      }
      const row = csvRow(line);
      if ('bad' in row) {
        differ(`csv: ${row.bad}`);
        continue;
      }
      const { span, cell } = row;
      const { version, first, last } = span;
      if (++blocks % 2_000_000 === 0) console.log(`exports: ${blocks.toLocaleString('en')} blocks (${secs()} s)`);
      // lookup() at the first, last and one address inside: one record, the CSV's (its JSON holds quotes and commas: quoted, quotes doubled).
      const want = expected(version, first);
      addresses++;
      if (want === null || cell !== '"' + want.replaceAll('"', '""') + '"')
        differ(
          `csv: ${text(span)}: the row says ${cell.slice(0, 200)}, lookup() at its first address ${want?.slice(0, 200) ?? 'an error'}`,
        );
      for (const n of new Set([first + ((BigInt(random()) * (last - first + 1n)) >> 32n), last])) {
        if (n === first) continue;
        addresses++;
        const there = expected(version, n);
        if (there !== want)
          differ(`${text(span)}: lookup() gives one record at ${formatIp(version, fromBigInt(version, n))}, another at its first address`);
      }
      // The MMDB: the block is the next piece of a network (blocks side by side with one record are one network), which holds the same record.
      if (net === null || net.span.version !== version || first !== netNext || last > net.span.last) {
        differ(`mmdb: the CSV's block ${text(span)} is not the next piece of the network ${net === null ? 'none' : text(net.span)}`);
      } else {
        if (want !== null && !mmdbSays(reader, verified, net.offset, version, first, want))
          differ(`mmdb: ${text(net.span)}: ${JSON.stringify(reader.get(formatIp(version, fromBigInt(version, first)))).slice(0, 200)}`);
        netNext = last + 1n;
        if (last === net.span.last) {
          networksChecked++;
          net = networks.next().value ?? null;
          netNext = net?.span.first ?? 0n;
        }
      }
      // Parquet: the block is the next piece of the range, which holds the same record.
      if (range === null || range.span.version !== version || first !== next || last > range.span.last) {
        differ(`parquet: the CSV's block ${text(span)} is not the next piece of the range ${range === null ? 'none' : text(range.span)}`);
        continue;
      }
      if (range.record !== want) differ(`parquet: ${text(range.span)}: the row says ${range.record.slice(0, 200)}`);
      next = last + 1n;
      if (last === range.span.last) {
        rangesChecked++;
        range = await nextRange();
        next = range?.span.first ?? 0n;
      }
    }
  }
  const failed = await csv.done;
  if (failed !== null) differ(failed);
  if (net !== null) differ(`mmdb: the network ${text(net.span)} is past the CSV's last block`);
  if (range !== null) differ(`parquet: the range ${text(range.span)} is past the CSV's last block`);
  console.log(
    `exports: csv, mmdb, parquet: ${blocks.toLocaleString('en')} blocks (${networksChecked.toLocaleString('en')} MMDB networks, ${verified.size.toLocaleString('en')} of their records decoded; ${rangesChecked.toLocaleString('en')} Parquet ranges), ${addresses.toLocaleString('en')} addresses, ${different} different (${secs()} s)`,
  );
  for (const d of differences) console.log(`  ${d}`);
}
