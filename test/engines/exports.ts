/**
 * Every block of the default data's export, in each format, against
 * `lookup()`: `node --import tsx test/engines/exports.ts [csv] [mmdb]
 * [parquet]` (all three when none is named; CI runs it after `npm run
 * build`, a few minutes a format). The fixture tests are fast; this one
 * reads what a user exports.
 *
 * For each block (a CSV row's CIDR block, an MMDB network, a Parquet row's
 * range) the record `lookup()` gives at its first address, its last, and a
 * random one inside (less `ip`, `count` and the clock of `time_zone`) must
 * be the exported one: the CSV `record` cell as the CLI streams it to
 * standard output; the MMDB network's data as mmdb-lib decodes it (null
 * members left out), its networks found by walking the file's tree; the
 * Parquet `record` column as DuckDB reads it. Prints what it checked, exits
 * 1 on a difference.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { Reader } from 'mmdb-lib';
import { exportDataset, parquetFiles } from '../../src/export/index.js';
import { withoutNulls } from '../../src/export/record.js';
import { openSync } from '../../src/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import type { IpVersion } from '../../src/ip/parse.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { ROOT, seed, xorshift32 } from '../helpers/env.js';

const formats = process.argv.slice(2);
for (const f of formats) if (!['csv', 'mmdb', 'parquet'].includes(f)) throw new Error(`unknown format ${f} (csv, mmdb, parquet)`);
const engine = openSync();
const random = xorshift32(seed());
const dir = mkdtempSync(join(tmpdir(), 'iprecord-exports-'));

/** `lookup()`'s record at an address less `ip`, `count` and the clock of `time_zone`, as JSON text (the export's `record`); null where it answers an error. */
function expected(version: IpVersion, n: bigint): string | null {
  let json: string;
  try {
    json = engine.lookupJson(formatIp(version, fromBigInt(version, n)));
  } catch {
    return null;
  }
  // The text of lookup() less those members: `ip` leads, `count` ends, the clock follows time_zone's name.
  const body = json.slice(json.indexOf(',') + 1, json.lastIndexOf(',"count"'));
  return '{' + body.replace(/"time_zone":\{"name":("(?:[^"\\]|\\.)*")[^}]*\}/, '"time_zone":{"name":$1}') + '}';
}

/** A format's tally: blocks and addresses checked, and the first differences. */
class Tally {
  blocks = 0;
  addresses = 0;
  readonly differences: string[] = [];
  private different = 0;
  private readonly started = performance.now();
  constructor(readonly format: string) {}

  /**
   * Checks a block: `same(text)` says whether the exported record is
   * `lookup()`'s (its text) at the block's first and last address and one
   * inside.
   */
  block(version: IpVersion, first: bigint, last: bigint, same: (text: string | null) => boolean): void {
    this.blocks++;
    const inside = first + ((BigInt(random()) * (last - first + 1n)) >> 32n);
    for (const n of first === last ? [first] : inside === first || inside === last ? [first, last] : [first, inside, last]) {
      this.addresses++;
      const want = expected(version, n);
      if (!same(want))
        this.differ(
          `${formatIp(version, fromBigInt(version, n))} (block ${formatIp(version, fromBigInt(version, first))}-${formatIp(version, fromBigInt(version, last))}): lookup() gives ${want?.slice(0, 300) ?? 'an error'}`,
        );
    }
  }

  differ(what: string): void {
    this.different++;
    if (this.differences.length < 10) this.differences.push(what);
  }

  report(): boolean {
    const secs = ((performance.now() - this.started) / 1000).toFixed(0);
    console.log(`exports: ${this.format}: ${this.blocks.toLocaleString('en')} blocks, ${this.addresses.toLocaleString('en')} addresses, ${this.different} different (${secs} s)`);
    for (const d of this.differences) console.log(`  ${d}`);
    return this.different === 0 && this.blocks > 0;
  }
}

/** The CSV export as the CLI streams it (`--fields record --out -`), read as it comes. */
async function checkCsv(): Promise<boolean> {
  const tally = new Tally('csv');
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js'), 'export', '--format', 'csv', '--fields', 'record', '--out', '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (b: Buffer) => (errors += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let header = true;
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
    if (header) {
      if (line !== 'network,start_ip,end_ip,record') tally.differ(`header ${line}`);
      header = false;
      continue;
    }
    const cells = splitCsvLine(line);
    const a = cells === null ? null : parseIp(cells[1]);
    const z = cells === null ? null : parseIp(cells[2]);
    if (cells === null || cells.length !== 4 || a === null || z === null) {
      tally.differ(`row ${line.slice(0, 200)}`);
      continue;
    }
    const record = cells[3];
    tally.block(a.version, toBigInt(a), toBigInt(z), (want) => want === record);
  }
  const code = await exited;
  if (code !== 0) tally.differ(`iprecord export exited ${code}: ${errors.trim()}`);
  return tally.report();
}

/** The MMDB export: the networks of its tree, each network's data decoded by mmdb-lib. */
async function checkMmdb(): Promise<boolean> {
  const tally = new Tally('mmdb');
  const file = join(dir, 'records.mmdb');
  await exportDataset(engine, { format: 'mmdb', out: file });
  const buf = readFileSync(file);
  rmSync(file);
  const reader = new Reader(buf);
  const { nodeCount, recordSize } = reader.metadata;
  const nodeBytes = recordSize / 4;
  const record = (node: number, bit: number): number => {
    const o = node * nodeBytes;
    if (recordSize === 24) return bit === 0 ? buf.readUIntBE(o, 3) : buf.readUIntBE(o + 3, 3);
    if (recordSize === 28) return bit === 0 ? ((buf[o + 3] & 0xf0) << 20) | buf.readUIntBE(o, 3) : ((buf[o + 3] & 0x0f) << 24) | buf.readUIntBE(o + 4, 3);
    return buf.readUInt32BE(o + bit * 4);
  };
  // The text of lookup() each data record was found to say (mmdb-lib decodes each once): by data record, a hash of the text.
  const verified = new Map<number, number>();
  let v4Node = -1;
  // Depth first: node, depth, first address of its network.
  const stack: [number, number, bigint][] = [[0, 0, 0n]];
  while (stack.length > 0) {
    const [node, depth, start] = stack.pop()!;
    if (depth === 96) {
      // IPv4 lives at ::/96; ::ffff:0:0/96 and 64:ff9b::/96 are aliases of it (`ip/embedded.ts`).
      if (start === 0n) v4Node = node;
      else if (start === 0xffffn << 32n || start === 0x64ff9bn << 96n) {
        if (node !== v4Node && v4Node >= 0) tally.differ(`${formatIp(6, fromBigInt(6, start))}/96 does not lead to the IPv4 tree`);
        continue;
      }
    }
    for (const bit of [1, 0]) {
      const next = record(node, bit);
      const at = start | (BigInt(bit) << BigInt(127 - depth));
      if (next < nodeCount) {
        stack.push([next, depth + 1, at]);
        continue;
      }
      if (next === nodeCount) continue;
      const offset = next - nodeCount - 16;
      const v4 = depth + 1 > 96 && at < 1n << 32n;
      const version: IpVersion = v4 ? 4 : 6;
      const last = at + (1n << BigInt(127 - depth)) - 1n;
      tally.block(version, at, last, (want) => {
        if (want === null) return false;
        const h = hash(want);
        if (verified.get(offset) === h) return true;
        const decoded = reader.get(formatIp(version, fromBigInt(version, at)));
        if (!isDeepStrictEqual(decoded, withoutNulls(JSON.parse(want)))) return false;
        verified.set(offset, h);
        return true;
      });
    }
  }
  return tally.report();
}

/** The Parquet export's rows as DuckDB reads them. */
async function checkParquet(): Promise<boolean> {
  const tally = new Tally('parquet');
  const out = join(dir, 'records.parquet');
  await exportDataset(engine, { format: 'parquet', out });
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  for (const [v, file] of Object.entries(parquetFiles(out))) {
    const result = await c.stream(`SELECT start_ip, end_ip, record::VARCHAR FROM read_parquet('${file}')`);
    let previous = '';
    for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      for (const [a, z, record] of chunk.getRows() as [string, string, string][]) {
        // A range over several /16s is a row per /16 (network_bucket): the same range, checked once.
        if (a === previous) continue;
        previous = a;
        const version = Number(v) as IpVersion;
        tally.block(version, toBigInt(parseIp(a)!), toBigInt(parseIp(z)!), (want) => want === record);
      }
    }
    rmSync(file);
  }
  c.closeSync();
  return tally.report();
}

/** FNV-1a over a string's code units. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

let ok = true;
try {
  const wanted = formats.length === 0 ? ['csv', 'mmdb', 'parquet'] : formats;
  if (wanted.includes('csv')) ok = (await checkCsv()) && ok;
  if (wanted.includes('mmdb')) ok = (await checkMmdb()) && ok;
  if (wanted.includes('parquet')) ok = (await checkParquet()) && ok;
} finally {
  rmSync(dir, { recursive: true, force: true });
  engine.close();
}
process.exit(ok ? 0 : 1);
