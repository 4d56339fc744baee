/**
 * `npm run bench`: full-record lookups against maxmind's bare `get()` on the
 * same DB-IP file, in one run, with a seeded mix of addresses drawn from
 * networks present in the data (80 % IPv4, 15 % IPv6, 5 % IPv4-mapped);
 * and cold `open()` to the first full lookup, in fresh processes.
 *
 * `--min-ratio x` fails (exit 1) when lookup()/maxmind.get() is below x.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Reader as MaxmindReader } from 'maxmind';
import { Bench } from 'tinybench';
import { splitCsvLine } from '../src/build/csv.js';
import { fromBigInt, toBigInt } from '../src/build/ranges.js';
import { defaultAsnSources, defaultGeoPaths } from '../src/data.js';
import { open } from '../src/index.js';
import { parseIp } from '../src/ip/address.js';
import { formatIp } from '../src/ip/format.js';
import { prng } from '../test/helpers/env.js';

const SEED = 42;
const MIX = 100_000;

/** Addresses inside networks of the ASN data (so geo and ASN both hit). */
function addressMix(): string[] {
  const rand = prng(SEED);
  const ranges = defaultAsnSources().files.map((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [a, b] = splitCsvLine(line)!;
        return [parseIp(a)!, parseIp(b)!] as const;
      }),
  );
  const pick = (version: 4 | 6): string => {
    const list = ranges[version === 4 ? 0 : 1];
    const [a, b] = list[Math.floor(rand() * list.length)];
    const lo = toBigInt(a);
    const span = toBigInt(b) - lo + 1n;
    const off = BigInt(Math.floor(rand() * 2 ** 52)) % span;
    return formatIp(version, fromBigInt(version, lo + off));
  };
  const out: string[] = [];
  for (let i = 0; i < MIX; i++) {
    const r = rand();
    if (r < 0.8) out.push(pick(4));
    else if (r < 0.95) out.push(pick(6));
    else out.push('::ffff:' + pick(4));
  }
  return out;
}

function coldOpen(): number[] {
  const script = `const t=performance.now();const {open}=await import('./dist/index.js');const e=await open();e.lookup('8.8.8.8');console.log(performance.now()-t)`;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim()));
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const minRatio = Number(process.argv[process.argv.indexOf('--min-ratio') + 1] ?? 0) || 0;
  const ips = addressMix();
  const engine = await open();
  const [geo4, geo6] = defaultGeoPaths().map((p) => new MaxmindReader(readFileSync(p)));
  const isV6 = ips.map((ip) => ip.includes(':') && !ip.startsWith('::ffff:'));
  const plain = ips.map((ip) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip));
  let i = 0;
  let j = 0;
  let sink = 0;
  const bench = new Bench({ time: 3000, warmupTime: 500 });
  bench
    .add('iprecord lookup() full record', () => {
      const r = engine.lookup(ips[i]);
      sink += r.ip.length;
      i = (i + 1) % ips.length;
    })
    .add('maxmind get() (geo only, bare)', () => {
      const r = (isV6[j] ? geo6 : geo4).get(plain[j]);
      sink += r === null ? 0 : 1;
      j = (j + 1) % ips.length;
    })
    .add('iprecord threat()', () => {
      sink += engine.threat(ips[i]).is_bogon ? 1 : 0;
      i = (i + 1) % ips.length;
    });
  await bench.run();
  const rows = bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`${t.name}: ${r.state}`);
    return { task: t.name, 'ops/s': Math.round(r.throughput.mean), 'mean µs': (r.latency.mean * 1000).toFixed(2) };
  });
  console.table(rows);
  const ratio = rows[0]['ops/s'] / rows[1]['ops/s'];
  console.log(`lookup()/maxmind.get() = ${ratio.toFixed(2)}x  (${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, seed ${SEED})`);
  const cold = coldOpen();
  console.log(`cold open() to first full lookup, 5 processes: median ${cold[2].toFixed(0)} ms (min ${cold[0].toFixed(0)}, max ${cold[4].toFixed(0)})`);
  if (sink < 0) console.log(sink);
  if (minRatio > 0 && ratio < minRatio) {
    console.error(`ratio ${ratio.toFixed(2)} is below --min-ratio ${minRatio}`);
    process.exitCode = 1;
  }
}

await main();
