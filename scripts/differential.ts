/**
 * The engine over a compiled dataset against the engine over the databases
 * it was compiled from, on the default data: `lookupJson()` bytes (less
 * `current_time`) and every error equal, over the edges of every range of
 * the dataset (first and last address, one before, one after), IPv4-mapped
 * forms of IPv4 edges, and random addresses of both families.
 *
 *     node --import tsx scripts/differential.ts [count]   (default 1 000 000)
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileDataset } from '../src/compile/dataset.js';
import { Dataset } from '../src/dataset/format.js';
import { isIprecordError, openSync, type Engine } from '../src/index.js';
import { parseIp } from '../src/ip/address.js';
import { formatIp } from '../src/ip/format.js';
import { buildSpecialTable } from '../src/ip/special.js';
import { resolveOptions } from '../src/options.js';
import { Snapshot } from '../src/snapshot.js';

const want = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'iprecord-differential-'));
const file = join(dir, 'default.iprd');
let started = Date.now();
const special = buildSpecialTable((text) => [...(parseIp(text)?.words ?? [0, 0, 0, 0])]);
const compiled = compileDataset(Snapshot.openSync(resolveOptions({ memory: 'read' })), special);
writeFileSync(file, compiled.buffer);
console.log(`compiled in ${Date.now() - started} ms: ${compiled.ranges.v4} + ${compiled.ranges.v6} ranges`);
const ds = new Dataset(compiled.buffer, file);

let seed = 0x9e3779b9;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
const v6 = (x: bigint) =>
  formatIp(
    6,
    [0, 1, 2, 3].map((i) => Number((x >> BigInt(96 - 32 * i)) & 0xffffffffn)),
  );
const ips: string[] = [];
// Edges of ranges chosen at random (every fourth of them probed), until the edges fill three quarters.
const edges = Math.floor(want * 0.75);
while (ips.length < edges) {
  if (next() % 3 !== 0) {
    const i = next() % ds.refs4.length;
    const lo = ds.starts4[i];
    const hi = i + 1 < ds.refs4.length ? ds.starts4[i + 1] - 1 : 0xffffffff;
    for (const x of [lo - 1, lo, hi, hi + 1]) if (x >= 0 && x <= 0xffffffff) ips.push(formatIp(4, [0, 0, 0, x]));
    if (next() % 8 === 0) ips.push(`::ffff:${formatIp(4, [0, 0, 0, lo])}`);
  } else {
    const i = next() % ds.refs6.length;
    const word = (at: number) => (BigInt(ds.starts6[at]) << 96n) | (BigInt(ds.starts6[at + 1]) << 64n) | (BigInt(ds.starts6[at + 2]) << 32n) | BigInt(ds.starts6[at + 3]);
    const lo = word(i * 4);
    const hi = i + 1 < ds.refs6.length ? word((i + 1) * 4) - 1n : (1n << 128n) - 1n;
    for (const x of [lo - 1n, lo, hi, hi + 1n]) if (x >= 0n && x < 1n << 128n) ips.push(v6(x));
  }
}
while (ips.length < want) ips.push(next() % 2 === 0 ? formatIp(4, [0, 0, 0, next()]) : formatIp(6, [0x20000000 | (next() & 0x1fffffff), next(), next(), next()]));

const answer = (e: Engine, ip: string): string => {
  try {
    return e.lookupJson(ip, { count: '1' }).replace(/"current_time":"[^"]*"/, '');
  } catch (err) {
    if (!isIprecordError(err)) throw err;
    return `${err.code}: ${err.message}`;
  }
};
started = Date.now();
const sources = openSync({ memory: 'read' });
const fromDataset = openSync({ dataset: file, memory: 'read' });
let records = 0;
let errors = 0;
const mismatches: string[] = [];
for (const ip of ips) {
  const a = answer(sources, ip);
  const b = answer(fromDataset, ip);
  if (a.startsWith('{')) records++;
  else errors++;
  if (a !== b && mismatches.push(`${ip}\n  databases: ${a}\n  dataset:   ${b}`) >= 20) break;
}
rmSync(dir, { recursive: true, force: true });
console.log(`${ips.length} addresses (${edges} range edges): ${records} records, ${errors} errors, ${mismatches.length} mismatches (${Date.now() - started} ms)`);
for (const m of mismatches) console.log(m);
process.exit(mismatches.length === 0 ? 0 : 1);
