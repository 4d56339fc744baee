/**
 * `npm run bench:memo`: full records written as bytes (`iprecord enrich`,
 * the server) and made by `lookup()`, with the address memo and without
 * it (a memo that never takes an address), in one run, on two streams of
 * 1 million addresses:
 * the benchmarks' 100 000-address mix in a seeded random order (each
 * address about ten times, as clients come back in logs) and uniform
 * addresses (every one new: the memo's worst case, where it should rest).
 * Rounds of tinybench, each task in turn; ratios are medians of the
 * rounds' ratios.
 *
 *     npm run bench:memo
 */

import { cpus } from 'node:os';
import { Bench } from 'tinybench';
import { open, type Engine } from '../src/index.js';
import { AddressMemo } from '../src/record/memo.js';
import { ByteWriter } from '../src/record/writer.js';
import { unicastV4, xorshift32 } from '../test/helpers/env.js';
import { addressMix } from './mix.js';

const ROWS = 1_000_000;
const BATCH = 1000;
const ROUNDS = 7;

/** A memo that never takes an address: the engine walks the trees for every record. */
class NoMemo extends AddressMemo {
  override use(): boolean {
    return false;
  }
}

const mix = addressMix();
const nextMix = xorshift32(77);
const mixed = Array.from({ length: ROWS }, () => mix[nextMix() % mix.length]);
const nextUniform = xorshift32(2024);
const uniform = Array.from({ length: ROWS }, (_, i) => {
  const a = nextUniform();
  return i % 10 === 9 ? `2a00:${(a & 0xffff).toString(16)}::${(a >>> 16).toString(16)}` : unicastV4(a);
});

/** An engine per task: a memo adapts to the one stream it sees. */
async function engine(memo: boolean): Promise<Engine> {
  const e = await open();
  if (!memo) (e as unknown as { memo: AddressMemo }).memo = new NoMemo();
  return e;
}

const out = new ByteWriter(BATCH * 2048);
const failure = { message: '' };
let sink = 0;
/** A task: the next BATCH addresses of a stream, each record written as bytes. */
function writer(engine: Engine, ips: readonly string[]): () => void {
  let i = 0;
  return () => {
    out.used = 0;
    for (let k = 0; k < BATCH; k++) {
      if (!engine.writeJson(ips[i], undefined, failure, out)) sink++;
      i = i + 1 === ips.length ? 0 : i + 1;
    }
    sink += out.used;
  };
}

/** A task: the next BATCH addresses of a stream, each record made by `lookup()`. */
function looker(engine: Engine, ips: readonly string[]): () => void {
  let i = 0;
  return () => {
    for (let k = 0; k < BATCH; k++) {
      try {
        sink += engine.lookup(ips[i]).ip.length;
      } catch {
        sink++;
      }
      i = i + 1 === ips.length ? 0 : i + 1;
    }
  };
}

const tasks: [string, () => void][] = [
  ['bytes, mix (each address about 10 times), memo', writer(await engine(true), mixed)],
  ['bytes, mix, no memo', writer(await engine(false), mixed)],
  ['bytes, uniform (every address new), memo', writer(await engine(true), uniform)],
  ['bytes, uniform, no memo', writer(await engine(false), uniform)],
  ['lookup(), mix, memo', looker(await engine(true), mixed)],
  ['lookup(), mix, no memo', looker(await engine(false), mixed)],
  ['lookup(), uniform, memo', looker(await engine(true), uniform)],
  ['lookup(), uniform, no memo', looker(await engine(false), uniform)],
];
// Warm: code optimised, location and network caches filled, for every engine.
for (let k = 0; k < 200; k++) for (const [, fn] of tasks) fn();

const rates: number[][] = tasks.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  const bench = new Bench({ time: 400, warmupTime: 50 });
  // Every other round in the other order: neither engine always runs first.
  for (const [name, fn] of round % 2 === 0 ? tasks : [...tasks].reverse()) bench.add(name, fn);
  await bench.run();
  for (const t of bench.tasks) {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`${t.name}: ${r.state}`);
    rates[tasks.findIndex(([name]) => name === t.name)].push((1000 * BATCH) / r.latency.mean);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.table(tasks.map(([name], k) => ({ task: name, 'records/s (median)': Math.round(median(rates[k])), min: Math.round(Math.min(...rates[k])), max: Math.round(Math.max(...rates[k])) })));
const ratio = (a: number, b: number) => median(rates[a].map((r, k) => r / rates[b][k]));
console.log(
  `memo / no memo: bytes: mix ${ratio(0, 1).toFixed(2)}x, uniform ${ratio(2, 3).toFixed(2)}x; lookup(): mix ${ratio(4, 5).toFixed(2)}x, uniform ${ratio(6, 7).toFixed(2)}x ` +
    `(median of ${ROUNDS} rounds' ratios; ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version})`,
);
if (sink < 0) console.log(sink);
