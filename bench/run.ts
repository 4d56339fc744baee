/**
 * `npm run bench`: iprecord's full record against `maxmind` npm opened as
 * its README says (`maxmind.open()`, its cache on) on the same DB-IP
 * files, in one process, on six mixes of addresses (`bench/mix.ts`):
 *
 * - **distinct** (the headline): 2 000 000 addresses, each looked up once
 *   by each task, each task from its own part of the list (no cache of
 *   either side, nor the processor's, has seen it);
 * - **distinct IPv6**: the same, of 2 000 000 IPv6 addresses;
 * - **private 10/8**: 3 000 000 distinct private addresses (each an error);
 * - **log-like** (the other headline): 2 000 000 distinct addresses, 60 %
 *   public IPv4, 10 % IPv6, 30 % private and reserved;
 * - **cycled**: the 100 000-address mix, again and again;
 * - **Zipf**: lookups over 50 000 addresses with Zipf weights.
 *
 * For each, `lookup()` (errors caught) and `tryLookup()` against `get()`,
 * `select()` of three fields, and `tryLookup()` with the same three as a
 * list of names (`fields`), against `get()` reading the same three, and
 * `lookupJson()` and `writeJson()` against `get()` plus `JSON.stringify`,
 * each answer written into a buffer as a socket or a file would take it
 * (`writeJson()` writes into the buffer itself);
 * each task beside its peer, in 27 rounds of 70 ms, ratios the medians of
 * the rounds'. Then: private memory after one million distinct
 * lookups, in a fresh process; cold `open()` to the first record, in five.
 *
 * `--min-ratio x` fails (exit 1) when the distinct mix's median
 * lookup()/get() is below x. `--bytes` (`npm run bench:bytes`) runs the
 * same tasks on `iprecord/bytes` (`openBytes()` as built for Workers and
 * browsers, over the same dataset file's bytes) instead of `open()`'s
 * engine: in a process of its own, since two engines' code in one process
 * makes the shared answer path's call sites see both and slows each.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import maxmind from 'maxmind';
import { Bench } from 'tinybench';
import { defaultGeoPaths } from '../src/dataset/defaults.js';
import { open } from '../src/index.js';
import type * as BytesEntry from '../src/bytes.js';
import { addressMix, distinctAddresses, logMix, privateAddresses, SEED, zipfMix } from './mix.js';

/** Operations per task call. */
const BATCH = 1000;
/** Rounds of all tasks, and each task's time per round (ms) on a mix that may be walked again. */
const ROUNDS = 27;
const TIME = 70;
/**
 * Addresses of the distinct mixes. A task walks one of them at most once,
 * in the same number of calls each round (its share of the list over the
 * rounds): a round of a set time ran the fastest task out of addresses on
 * a fast machine.
 */
const DISTINCT = 2_000_000;
/** Tasks a mix is run by (each starts at its own part of a mix that is not cycled). */
const TASKS = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function coldOpen(): number[] {
  const script = `const t=performance.now();const {open}=await import('./dist/index.js');const e=await open();e.lookup('8.8.8.8');console.log(performance.now()-t)`;
  const times: number[] = [];
  for (let i = 0; i < 5; i++)
    times.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim()));
  return times.sort((a, b) => a - b);
}

/** Private memory (`Private_Dirty` of smaps_rollup) of a fresh process before and after looking up every address of a file once, in MiB. */
function privateGrowth(ips: readonly string[]): { before: number; after: number; heap: number } {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-'));
  try {
    const file = join(dir, 'ips.txt');
    writeFileSync(file, ips.join('\n'));
    const script = `import {readFileSync} from 'node:fs';const {open}=await import('./dist/index.js');
const dirty=()=>Number(/Private_Dirty:\\s+(\\d+)/.exec(readFileSync('/proc/self/smaps_rollup','utf8'))[1])/1024;
const ips=readFileSync(${JSON.stringify(file)},'utf8').split('\\n');const e=await open();e.lookup('8.8.8.8');globalThis.gc();const before=dirty();let n=0;
for(const ip of ips){n+=e.lookup(ip).ip.length;n+=e.lookupJson(ip).length;}globalThis.gc();
console.log(JSON.stringify({before,after:dirty(),heap:process.memoryUsage().heapUsed/1048576,n}))`;
    return JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim(),
    ) as {
      before: number;
      after: number;
      heap: number;
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bytes engine as built (dist/bytes.js: the web variant of the text functions) over the default dataset's bytes. */
async function bytesEngine() {
  const { openBytes } = (await import(new URL('../dist/bytes.js', import.meta.url).href)) as typeof BytesEntry;
  const files = await open();
  const file = readFileSync(files.info().dataset.path);
  files.close();
  return openBytes(new Uint8Array(file.buffer, file.byteOffset, file.length), { verify: false });
}

interface Peer {
  get(ip: string): unknown;
}

async function main(): Promise<void> {
  const minRatio = Number(process.argv[process.argv.indexOf('--min-ratio') + 1] ?? 0) || 0;
  // Cold opens and the memory figure first, in fresh processes, before this one holds two readers' worth of memory.
  const cold = coldOpen();
  const memory = privateGrowth(distinctAddresses(1_000_000));
  // name, addresses (made when the mix's turn comes, and let go after: the mixes together would fill the heap),
  // whether a task may walk them again (a distinct mix never: a cache would answer), whether a first pass warms the caches.
  const mixes: [string, () => string[], boolean, boolean][] = [
    ['distinct', () => distinctAddresses(DISTINCT), false, false],
    ['distinct IPv6', () => distinctAddresses(DISTINCT, SEED + 5, 6), false, false],
    // 16 M private addresses in all: walked again only after millions, past any cache of either side.
    ['private 10/8, distinct', () => privateAddresses(3_000_000), true, false],
    ['log-like, distinct', () => logMix(DISTINCT), true, false],
    ['cycled 100 000', addressMix, true, true],
    ['Zipf over 50 000', () => zipfMix(50_000, 1_000_000), true, true],
  ];
  const engine = process.argv.includes('--bytes') ? await bytesEngine() : await open();
  console.error(`engine: ${process.argv.includes('--bytes') ? 'iprecord/bytes (dist/bytes.js)' : 'open()'}`);
  const [geo4, geo6] = (await Promise.all(defaultGeoPaths().map((p) => maxmind.open(p)))) as Peer[];
  let sink = 0;
  const results: { mix: string; task: string; rates: number[] }[] = [];
  const ratios: Record<string, number[]> = {};
  // Where JSON answers are written, as a socket or a file would take them.
  const out = Buffer.alloc(1 << 16);
  // Three fields that maxmind's record of the same data has too.
  const pick = engine.select(['country_code', 'city', 'latitude']);
  for (const [mix, make, cycles, warm] of mixes) {
    const made = performance.now();
    const ips = make();
    console.error(`${mix}: ${ips.length.toLocaleString('en')} addresses made in ${((performance.now() - made) / 1000).toFixed(0)} s`);
    const v6 = ips.map((ip) => ip.includes(':') && !ip.startsWith('::ffff:'));
    const plain = ips.map((ip) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip));
    // Each task walks the list with its own cursor. On a cycled mix all start at its start (caches answer). On the
    // others each starts at its own part of the list, so that no task meets an address another task looked up
    // shortly before (the memory that lookup read would still be in the processor's caches); the distinct mix is
    // long enough for no task to walk it all: each address is looked up at most once by each task.
    let started = 0;
    const task = (body: (k: number) => number) => {
      let at = warm ? 0 : Math.floor((started++ * ips.length) / TASKS);
      let walked = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          if (walked++ === ips.length && !cycles) throw new Error(`the ${mix} mix ran out: make it longer or the rounds shorter`);
          if (at === ips.length) at = 0;
          sink += body(at++);
        }
      };
    };
    // An address without a record throws from lookup(), lookupJson() and writeJson(): caught, as a loop over a log
    // must, each in a try of its own (one wrapper shared by the three carried what it met on the mixes before, where
    // every call threw, into the next: Zipf writeJson() measured 0.95x behind it and 1.9x alone).
    // Each iprecord task beside the peer it is compared with: a round runs them one after the other, and the machine's
    // speed drifts within seconds.
    const tasks: [string, () => void][] = [
      [
        'iprecord lookup()',
        task((k) => {
          try {
            return engine.lookup(ips[k]).ip.length;
          } catch {
            return 0;
          }
        }),
      ],
      ['maxmind get()', task((k) => ((v6[k] ? geo6 : geo4).get(plain[k]) === null ? 0 : 1))],
      [
        'iprecord tryLookup()',
        task((k) => {
          const r = engine.tryLookup(ips[k]);
          return 'code' in r ? r.status : r.ip.length;
        }),
      ],
      [
        'iprecord select() of 3 fields, try()',
        task((k) => {
          const r = pick.try(ips[k]);
          return 'code' in r ? r.status : (r.country_code?.length ?? 0) + (r.city?.length ?? 0) + (r.latitude ?? 0);
        }),
      ],
      [
        'maxmind get() of the same 3 fields',
        task((k) => {
          const r = (v6[k] ? geo6 : geo4).get(plain[k]) as { country_code?: string; city?: string; latitude?: number } | null;
          return r === null ? 0 : (r.country_code?.length ?? 0) + (r.city?.length ?? 0) + (r.latitude ?? 0);
        }),
      ],
      [
        'iprecord lookup() with fields as a list of 3',
        task((k) => {
          const r = engine.tryLookup(ips[k], { fields: ['country_code', 'city', 'latitude'] });
          return 'code' in r ? r.status : (r.country_code?.length ?? 0) + (r.city?.length ?? 0) + (r.latitude ?? 0);
        }),
      ],
      [
        'iprecord lookupJson(), written',
        task((k) => {
          try {
            return out.write(engine.lookupJson(ips[k]), 0);
          } catch {
            return 0;
          }
        }),
      ],
      ['maxmind get() + JSON.stringify, written', task((k) => out.write(JSON.stringify((v6[k] ? geo6 : geo4).get(plain[k])) ?? 'null', 0))],
      // The bytes path (the server's): the record's UTF-8 written into the buffer itself.
      [
        'iprecord writeJson() into the buffer',
        task((k) => {
          try {
            return engine.writeJson(ips[k], out, 0);
          } catch {
            return 0;
          }
        }),
      ],
      // The bytes path with errors as values: a record or its error written, nothing thrown.
      ['iprecord tryWriteJson() into the buffer', task((k) => Math.abs(engine.tryWriteJson(ips[k], out, 0)))],
    ];
    if (tasks.length !== TASKS) throw new Error(`TASKS is ${TASKS}, the tasks are ${tasks.length}`);
    // A cycled mix is walked once first (the steady state is measured, not the first pass); a distinct one is not.
    if (warm) for (let k = 0; k < ips.length; k += BATCH) for (const [, fn] of tasks) fn();
    const rates: number[][] = tasks.map(() => []);
    // This machine's speed drifts: short rounds, every task in each, ratios per round, medians of the rounds.
    for (let round = 0; round < ROUNDS; round++) {
      const bench = new Bench(
        cycles
          ? { time: TIME, warmupTime: 0, warmupIterations: 0, iterations: 1 }
          : // tinybench calls a task once more than its iterations (to tell whether it is async).
            { time: 0, warmupTime: 0, warmupIterations: 0, iterations: Math.floor(ips.length / (ROUNDS * BATCH)) - 1 },
      );
      // Every other round in the reverse order: neither side of a pair always runs first.
      for (const [name, fn] of round % 2 === 0 ? tasks : [...tasks].reverse()) bench.add(name, fn);
      await bench.run();
      for (const t of bench.tasks) {
        if (t.result.state !== 'completed')
          throw new Error(`${t.name}: ${t.result.state} (${(t.result as { error?: Error }).error?.message})`);
        rates[tasks.findIndex(([name]) => name === t.name)].push((1000 * BATCH) / t.result.latency.mean);
      }
    }
    tasks.forEach(([name], k) => results.push({ mix, task: name, rates: rates[k] }));
    const ratio = (a: number, b: number) => rates[a].map((r, k) => r / rates[b][k]);
    ratios[`${mix}: lookup()/get()`] = ratio(0, 1);
    ratios[`${mix}: tryLookup()/get()`] = ratio(2, 1);
    ratios[`${mix}: select() 3 fields/get() 3 fields`] = ratio(3, 4);
    ratios[`${mix}: fields list of 3/get() 3 fields`] = ratio(5, 4);
    ratios[`${mix}: lookupJson()/get()+stringify, written`] = ratio(6, 7);
    ratios[`${mix}: writeJson()/get()+stringify, written`] = ratio(8, 7);
    ratios[`${mix}: tryWriteJson()/get()+stringify, written`] = ratio(9, 7);
  }
  console.table(
    results.map((r) => ({
      mix: r.mix,
      task: r.task,
      'ops/s (median)': Math.round(median(r.rates)),
      min: Math.round(Math.min(...r.rates)),
      max: Math.round(Math.max(...r.rates)),
    })),
  );
  for (const [name, rs] of Object.entries(ratios))
    console.log(`${name} = ${median(rs).toFixed(2)}x (rounds ${rs.map((r) => r.toFixed(2)).join(', ')})`);
  console.log(
    `private memory after 1 000 000 distinct lookup() + lookupJson(): +${(memory.after - memory.before).toFixed(1)} MiB (${memory.before.toFixed(0)} -> ${memory.after.toFixed(0)} MiB; heap ${memory.heap.toFixed(0)} MiB)`,
  );
  console.log(
    `cold open() to first full lookup, 5 processes: median ${cold[2].toFixed(0)} ms (min ${cold[0].toFixed(0)}, max ${cold[4].toFixed(0)})`,
  );
  console.log(`${cpus()[0].model}, ${cpus().length} cores, node ${process.version}, seed ${SEED}`);
  if (sink < 0) console.log(sink);
  const headline = median(ratios['distinct: lookup()/get()']);
  if (minRatio > 0 && headline < minRatio) {
    console.error(`distinct lookup()/get() ${headline.toFixed(2)} is below --min-ratio ${minRatio}`);
    process.exitCode = 1;
  }
}

await main();
