/**
 * The machine's phase, for reading the other suites' absolute figures: the
 * time of one read in a chain of dependent reads at random over 64 MiB
 * (what a tree walk over a database larger than the caches waits for), and
 * of a CPU-bound loop that touches no memory. Run it before or after a
 * suite; on a shared machine the first moves by several times from one
 * hour to the next while the second stays put.
 *
 *     npm run bench:machine
 */

import { cpus } from 'node:os';
import { xorshift32 } from '../test/helpers/env.js';

const WORDS = 1 << 24;
const READS = 4_000_000;
const LOOP = 300_000_000;
const ROUNDS = 5;

// One cycle through every slot in a random order (Sattolo's shuffle), so that each read depends on the last.
const next = xorshift32(0x5eed);
const order = new Uint32Array(WORDS);
for (let i = 0; i < WORDS; i++) order[i] = i;
for (let i = WORDS - 1; i > 0; i--) {
  const j = next() % i;
  const t = order[i];
  order[i] = order[j];
  order[j] = t;
}
const chain = new Uint32Array(WORDS);
for (let i = 0; i < WORDS; i++) chain[order[i]] = order[(i + 1) % WORDS];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const reads: number[] = [];
const loops: number[] = [];
let sink = 0;
for (let r = 0; r < ROUNDS; r++) {
  let at = r;
  let t = performance.now();
  for (let i = 0; i < READS; i++) at = chain[at];
  reads.push(((performance.now() - t) * 1e6) / READS);
  sink ^= at;
  let s = r;
  t = performance.now();
  for (let i = 0; i < LOOP; i++) s = (s * 31 + i) | 0;
  loops.push(performance.now() - t);
  sink ^= s;
}
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);
console.log(`dependent read over 64 MiB: median ${median(reads).toFixed(0)} ns (${reads.map((x) => x.toFixed(0)).join(', ')})`);
console.log(`CPU loop (${LOOP / 1e6} M steps): median ${median(loops).toFixed(0)} ms (${loops.map((x) => x.toFixed(0)).join(', ')})`);
// The loops' results, kept so that neither loop can be dropped as dead code.
(globalThis as { benchSink?: number }).benchSink = sink;
