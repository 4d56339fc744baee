/**
 * The engine against another build of iprecord (an earlier commit, say
 * the last one that assembled records at run time) on the default data:
 * `lookupJson()` text, `lookup()` objects as JSON and `writeJson()` bytes (less `current_time`) and every error equal, over
 * the edges of ranges of the compiled dataset (first and last address,
 * one before, one after), IPv4-mapped and IPv4-compatible (::/96) forms of IPv4 edges, and random
 * addresses of both families.
 *
 *     git worktree add /tmp/old <commit> && ln -s "$PWD/node_modules" /tmp/old/ && (cd /tmp/old && npm run build)
 *     node --import tsx scripts/differential.ts /tmp/old [count]   (default 1 000 000)
 */

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureDataset } from '../src/dataset/locate.js';
import { Dataset } from '../src/dataset/format.js';
import { isIprecordError, openSync, type Engine } from '../src/index.js';
import { formatIp } from '../src/ip/format.js';
import { readFileSync } from 'node:fs';

const other = process.argv[2];
if (other === undefined) throw new Error('usage: scripts/differential.ts <directory of another iprecord build> [count]');
const want = Number(process.argv[3] ?? 1_000_000);
const ds = new Dataset(readFileSync(ensureDataset({ geo: null, asn: null, anonymous: [] })), 'default');
const old = (await import(pathToFileURL(join(other, 'dist', 'index.js')).href)) as {
  openSync: typeof openSync;
  isIprecordError: typeof isIprecordError;
};

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
    if (next() % 8 === 0) ips.push(`::ffff:${formatIp(4, [0, 0, 0, lo])}`, `::${formatIp(4, [0, 0, 0, hi])}`);
  } else {
    const i = next() % ds.refs6.length;
    const word = (at: number) =>
      (BigInt(ds.starts6[at]) << 96n) |
      (BigInt(ds.starts6[at + 1]) << 64n) |
      (BigInt(ds.starts6[at + 2]) << 32n) |
      BigInt(ds.starts6[at + 3]);
    const lo = word(i * 4);
    const hi = i + 1 < ds.refs6.length ? word((i + 1) * 4) - 1n : (1n << 128n) - 1n;
    for (const x of [lo - 1n, lo, hi, hi + 1n]) if (x >= 0n && x < 1n << 128n) ips.push(v6(x));
  }
}
while (ips.length < want)
  ips.push(next() % 2 === 0 ? formatIp(4, [0, 0, 0, next()]) : formatIp(6, [0x20000000 | (next() & 0x1fffffff), next(), next(), next()]));

/** The record's bytes as text: writeJson() where the build has it public, else its byte text (builds before it). */
function bytesOf(e: Engine & { jsonBytes?(ip: string, o: object): string }, ip: string): string {
  if (e.jsonBytes !== undefined) return Buffer.from(e.jsonBytes(ip, { count: '1' }), 'latin1').toString('utf8');
  const target = Buffer.allocUnsafe(16 * 1024);
  return target.toString('utf8', 0, e.writeJson(ip, target, 0, { count: '1' }));
}

const answer = (e: Engine, ip: string): string => {
  try {
    // As text, as an object and as bytes (the three ways a record is read from the dataset): one answer when they agree.
    const time = /"current_time":"[^"]*"/;
    const text = e.lookupJson(ip, { count: '1' }).replace(time, '');
    const object = JSON.stringify(e.lookup(ip, { count: '1' })).replace(time, '');
    const bytes = bytesOf(e, ip).replace(time, '');
    return text === object && text === bytes ? text : `lookupJson ${text}\n  lookup ${object}\n  writeJson ${bytes}`;
  } catch (err) {
    if (!isIprecordError(err) && !old.isIprecordError(err)) throw err;
    return `${(err as { code: string }).code}: ${(err as Error).message}`;
  }
};
const started = Date.now();
const sources = old.openSync({ memory: 'read' });
const fromDataset = openSync({ memory: 'read' });
let records = 0;
let errors = 0;
const mismatches: string[] = [];
for (const ip of ips) {
  const a = answer(sources, ip);
  const b = answer(fromDataset, ip);
  if (a.startsWith('{')) records++;
  else errors++;
  if (a !== b && mismatches.push(`${ip}\n  ${other}: ${a}\n  this build: ${b}`) >= 20) break;
}
console.log(
  `${ips.length} addresses (${edges} range edges): ${records} records, ${errors} errors, ${mismatches.length} mismatches (${Date.now() - started} ms)`,
);
for (const m of mismatches) console.log(m);
process.exit(mismatches.length === 0 ? 0 : 1);
