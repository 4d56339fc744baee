/**
 * `iprecord enrich` as users run it: the built CLI as a child process on
 * generated 1 million row CSVs, full records as NDJSON, on one thread and
 * on one per core, alternately (twice each), and as many one-thread runs
 * at once in separate processes, each over a file of its own (what the
 * cores give with nothing shared but the machine); rows per second from the wall
 * time, and the peak resident size sampled from /proc while it runs. Two
 * kinds of addresses: uniform over the whole space (every address new:
 * the worst case) and drawn from the benchmarks' 100 000-address mix (each
 * about ten times, as clients come back in logs); 4 million uniform rows,
 * one thread and all alternately (the CPU each spent too). Then 5 million uniform
 * rows with three chosen fields as CSV (the flat-memory run). CPU time a
 * row by output (the whole record as NDJSON and as CSV, three fields as
 * CSV; one thread, alternately, twice each). Between
 * them, the uniform file on every core with database files mapped and
 * read: peak resident and proportional (PSS) size.
 *
 *     npm run build && node --import tsx bench/enrich.ts
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as run, uniformRow, writeCsv } from './cli.js';
import { addressMix } from './mix.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-enrich-'));
try {
  const cores = availableParallelism();
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const best = (xs: { rate: number }[]) => Math.max(...xs.map((x) => x.rate));
  /** One thread and all, alternately, twice each, full records as NDJSON, over a file of `rows` rows. */
  const compare = async (file: string, label: string, rows = 1_000_000) => {
    const results: Record<string, { rate: number; peak: number; cpu: number }[]> = { one: [], all: [] };
    for (let round = 0; round < 2; round++) {
      for (const [name, threads] of [
        ['one', 1],
        ['all', cores],
      ] as const) {
        const r = await run(['enrich', file, '--output', 'ndjson', '--threads', String(threads)]);
        results[name].push({ rate: rows / r.secs, peak: r.peak, cpu: r.cpu });
        console.log(
          `${label}, ${threads} thread(s): ${Math.round(rows / r.secs).toLocaleString('en')} rows/s wall, ${r.cpu.toFixed(1)} s of CPU, peak ${mib(r.peak)} (${r.summary})`,
        );
      }
    }
    return results;
  };
  const million = join(dir, 'million.csv');
  writeCsv(million, 1_000_000, 2024, uniformRow);
  const results = await compare(million, 'uniform addresses');
  // What the cores give this work with nothing shared but the machine: one-thread runs in as many processes at once,
  // each over a file of its own (the same file at the same moment would have them read the same dataset lines).
  const own = Array.from({ length: cores }, (_, i) => (i === 0 ? million : join(dir, `million-${i}.csv`)));
  for (let i = 1; i < cores; i++) writeCsv(own[i], 1_000_000, 2024 + i, uniformRow);
  const apart: number[] = [];
  for (let round = 0; round < 2; round++) {
    const started = performance.now();
    await Promise.all(own.map((file) => run(['enrich', file, '--output', 'ndjson', '--threads', '1'])));
    apart.push((cores * 1_000_000) / ((performance.now() - started) / 1000));
    console.log(
      `uniform addresses, ${cores} processes of 1 thread at once: ${Math.round(apart.at(-1) as number).toLocaleString('en')} rows/s together`,
    );
  }
  // Memory by mode, on every core: the worker threads use the main thread's files (shared memory when read, the same page cache when mapped).
  const modes: string[] = [];
  for (const memory of ['mmap', 'read']) {
    const r = await run(['enrich', million, '--output', 'ndjson', '--threads', String(cores)], { ...process.env, IPRECORD_MEMORY: memory });
    modes.push(
      `${memory}: peak resident ${mib(r.peak)}, peak proportional ${mib(r.peakPss)}, ${Math.round(1_000_000 / r.secs).toLocaleString('en')} rows/s`,
    );
    console.log(`uniform addresses, ${cores} threads, memory ${modes.at(-1)}`);
  }
  // CPU a row by output, on one thread, alternately, twice each: the whole record as NDJSON and as CSV, three fields as CSV.
  const outputs: [string, string[]][] = [
    ['full records as NDJSON', ['--output', 'ndjson']],
    ['full records as CSV', []],
    ['three fields as CSV', ['--fields', 'country_code,asn.name,threat.is_threat']],
  ];
  const cpu: Record<string, number[]> = Object.fromEntries(outputs.map(([label]) => [label, []]));
  for (let round = 0; round < 2; round++)
    for (const [label, args] of outputs) {
      const r = await run(['enrich', million, '--threads', '1', ...args]);
      cpu[label].push(r.cpu);
      console.log(`uniform addresses, 1 thread, ${label}: ${r.cpu.toFixed(2)} s of CPU (${r.summary})`);
    }
  const cpuRow = (label: string) => (Math.min(...cpu[label]) * 1e6) / 1_000_000;
  const mixed = join(dir, 'million-mix.csv');
  // Addresses from the benchmarks' mix (100 000 addresses: each comes back about ten times, as clients do in logs).
  const mix = addressMix();
  writeCsv(mixed, 1_000_000, 77, (i, a) => `${i},${mix[a % mix.length]},/page/${i % 1000}`);
  const mixResults = await compare(mixed, 'addresses from the mix');
  // The two-thread target's size: start-up weighs a quarter of what it does on 1M rows.
  const four = join(dir, 'four-million.csv');
  writeCsv(four, 4_000_000, 2024, uniformRow);
  const fourResults = await compare(four, '4M uniform addresses', 4_000_000);
  rmSync(four);
  const five = join(dir, 'five-million.csv');
  writeCsv(five, 5_000_000, 2024, uniformRow);
  const big = await run(['enrich', five, '--fields', 'country_code,asn.name,threat.is_datacenter']);
  console.log(`machine: ${cores} × ${cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`);
  console.log(
    `1M rows, full records as NDJSON: one thread ${Math.round(best(results.one)).toLocaleString('en')} rows/s, ${cores} threads ${Math.round(best(results.all)).toLocaleString('en')} rows/s (${(best(results.all) / best(results.one)).toFixed(2)}x; best of 2 each)`,
  );
  console.log(
    `1M rows, full records as NDJSON, ${cores} processes of one thread at once: ${Math.round(Math.max(...apart)).toLocaleString('en')} rows/s together (${(Math.max(...apart) / best(results.one)).toFixed(2)}x one thread; best of 2): the cores' bound without worker threads`,
  );
  console.log(
    `1M rows from the 100 000-address mix, full records as NDJSON: one thread ${Math.round(best(mixResults.one)).toLocaleString('en')} rows/s, ${cores} threads ${Math.round(best(mixResults.all)).toLocaleString('en')} rows/s (${(best(mixResults.all) / best(mixResults.one)).toFixed(2)}x)`,
  );
  const cpuOf = (xs: { cpu: number }[]) => Math.min(...xs.map((x) => x.cpu));
  console.log(
    `4M rows, full records as NDJSON: one thread ${Math.round(best(fourResults.one)).toLocaleString('en')} rows/s, ${cores} threads ${Math.round(best(fourResults.all)).toLocaleString('en')} rows/s (${(best(fourResults.all) / best(fourResults.one)).toFixed(2)}x; best of 2 each), CPU ${cpuOf(fourResults.all).toFixed(1)} s against ${cpuOf(fourResults.one).toFixed(1)} s (least of 2)`,
  );
  console.log(`1M rows, full records as NDJSON, ${cores} threads, by memory mode: ${modes.join('; ')}`);
  console.log(
    `1M rows, one thread, CPU a row (least of 2): ${outputs.map(([label]) => `${label} ${cpuRow(label).toFixed(2)} µs`).join(', ')}; CSV / NDJSON ${(cpuRow('full records as CSV') / cpuRow('full records as NDJSON')).toFixed(2)}x`,
  );
  console.log(
    `5M rows, three fields as CSV, ${cores} threads: ${Math.round(5_000_000 / big.secs).toLocaleString('en')} rows/s, peak resident ${mib(big.peak)} (${big.summary})`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
