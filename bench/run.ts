/**
 * `npm run bench`: full-record lookups against maxmind's bare `get()` on the
 * same DB-IP file, in one run, with a seeded mix of addresses drawn from
 * networks present in the data (80 % IPv4, 15 % IPv6, 5 % IPv4-mapped);
 * and cold `open()` to the first full lookup, in fresh processes.
 *
 * `--min-ratio x` fails (exit 1) when the median lookup()/maxmind.get() is
 * below x.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Reader as MaxmindReader } from 'maxmind';
import { Bench } from 'tinybench';
import { defaultGeoPaths } from '../src/data.js';
import { open } from '../src/index.js';
import { addressMix, SEED } from './mix.js';

/** Operations per task call. */
const BATCH = 1000;
/** Rounds of all tasks. */
const ROUNDS = 15;

function coldOpen(): number[] {
  const script = `const t=performance.now();const {open}=await import('./dist/index.js');const e=await open();e.lookup('8.8.8.8');console.log(performance.now()-t)`;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim()));
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const minRatio = Number(process.argv[process.argv.indexOf('--min-ratio') + 1] ?? 0) || 0;
  // Cold opens first, before this process holds two engines' worth of memory.
  const cold = coldOpen();
  const ips = addressMix();
  const engine = await open();
  const [geo4, geo6] = defaultGeoPaths().map((p) => new MaxmindReader(readFileSync(p)));
  const isV6 = ips.map((ip) => ip.includes(':') && !ip.startsWith('::ffff:'));
  const plain = ips.map((ip) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip));
  let i = 0;
  let j = 0;
  let sink = 0;
  // Each task call runs BATCH operations so that the harness's own cost per
  // call (timestamps, bookkeeping: about a microsecond) does not blur rates
  // of a few microseconds; rates are per operation, from the mean time.
  const tasks: [string, () => void][] = [
    [
      'iprecord lookup() full record',
      () => {
        for (let k = 0; k < BATCH; k++) {
          sink += engine.lookup(ips[i]).ip.length;
          i = i + 1 === ips.length ? 0 : i + 1;
        }
      },
    ],
    [
      'maxmind get() (geo only, bare)',
      () => {
        for (let k = 0; k < BATCH; k++) {
          const r = (isV6[j] ? geo6 : geo4).get(plain[j]);
          sink += r === null ? 0 : 1;
          j = j + 1 === ips.length ? 0 : j + 1;
        }
      },
    ],
    [
      'iprecord threat()',
      () => {
        for (let k = 0; k < BATCH; k++) {
          sink += engine.threat(ips[i]).is_bogon ? 1 : 0;
          i = i + 1 === ips.length ? 0 : i + 1;
        }
      },
    ],
  ];
  // This machine's speed drifts (shared cores): the tasks run in ROUNDS
  // short rounds, one after the other within a round, and the ratio is the
  // median of the rounds' ratios.
  // One pass over the mix first, for both readers: the rounds measure the
  // steady state (caches filled, code optimised), not the first pass.
  for (let k = 0; k < ips.length; k += BATCH) for (const [, fn] of tasks) fn();
  const rates: number[][] = tasks.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: 400, warmupTime: 100 });
    for (const [name, fn] of tasks) bench.add(name, fn);
    await bench.run();
    bench.tasks.forEach((t, k) => {
      const r = t.result;
      if (r.state !== 'completed') throw new Error(`${t.name}: ${r.state}`);
      rates[k].push((1000 * BATCH) / r.latency.mean);
    });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.table(
    tasks.map(([name], k) => ({
      task: name,
      'ops/s (median)': Math.round(median(rates[k])),
      'mean µs': (1e6 / median(rates[k])).toFixed(2),
      'min ops/s': Math.round(Math.min(...rates[k])),
      'max ops/s': Math.round(Math.max(...rates[k])),
    })),
  );
  const ratios = rates[0].map((r, k) => r / rates[1][k]);
  const ratio = median(ratios);
  console.log(
    `lookup()/maxmind.get() = ${ratio.toFixed(2)}x median of ${ROUNDS} rounds (${ratios.map((r) => r.toFixed(2)).join(', ')})  ` +
      `(${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, seed ${SEED})`,
  );
  console.log(`cold open() to first full lookup, 5 processes: median ${cold[2].toFixed(0)} ms (min ${cold[0].toFixed(0)}, max ${cold[4].toFixed(0)})`);
  if (sink < 0) console.log(sink);
  if (minRatio > 0 && ratio < minRatio) {
    console.error(`ratio ${ratio.toFixed(2)} is below --min-ratio ${minRatio}`);
    process.exitCode = 1;
  }
}

await main();
