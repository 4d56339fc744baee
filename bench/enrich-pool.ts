/**
 * Where `enrich --threads 2` loses against two processes: the same chunks
 * of a generated CSV (uniform addresses, full records as CSV, chunks as
 * `ChunkReader` cuts them, all read beforehand) done three ways in one
 * process: on this thread; by two worker threads sent every other chunk
 * by message, two in flight each, output buffers sent back to be filled
 * again (as `iprecord enrich` does); and by two
 * worker threads each sent its half of the chunks in one message,
 * looping over them with no message between chunks. Each way runs over
 * the first half of the chunks to warm up, then is measured over the
 * second: rows per second and the process's CPU a row. Three rounds,
 * alternately; medians.
 *
 *     node --import tsx bench/enrich-pool.ts
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort } from 'node:worker_threads';
import { enrichBatch, type BatchOutput, type RowConfig } from '../src/cli/enrich-batch.js';
import { ChunkReader, type Chunk } from '../src/cli/rows.js';
import { openSync, type Engine } from '../src/index.js';
import { PoolWorker, startWorker } from '../src/platform/threads.js';
import { uniformRow, writeCsv } from './cli.js';

const ROWS = 600_000;
const config: RowConfig = {
  input: 'csv',
  output: 'csv',
  key: 'iprecord',
  fields: undefined,
  addressPaths: [['ip']],
  column: 1,
  inputColumns: ['id', 'client_ip', 'path'],
  regex: undefined,
};

/** Enriches the chunks in turn on this thread, each output buffer filled again by the next; the rows. */
function enrichAll(engine: Engine, chunks: readonly Chunk[]): number {
  let rows = 0;
  let spare: ArrayBuffer | null = null;
  for (const chunk of chunks) {
    const r = enrichBatch(engine, config, chunk, spare);
    rows += r.rows;
    spare = r.text.buffer as ArrayBuffer;
  }
  return rows;
}

if (!isMainThread) {
  const engine = openSync();
  // A chunk a message (answered with its output, as cli/enrich-worker.ts does), or a list of chunks done in a loop
  // (answered with their rows).
  parentPort?.on('message', (m: { chunk: Chunk; spare: ArrayBuffer | null } | { chunks: Chunk[] }) => {
    if ('chunk' in m) {
      const result = enrichBatch(engine, config, m.chunk, m.spare);
      parentPort?.postMessage({ result }, [result.text.buffer as ArrayBuffer]);
    } else parentPort?.postMessage({ result: enrichAll(engine, m.chunks) });
  });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-pool-'));
  try {
    const file = join(dir, 'rows.csv');
    writeCsv(file, ROWS, 7, uniformRow);
    const reader = new ChunkReader(
      (async function* () {
        yield readFileSync(file);
      })(),
      true,
    );
    const chunks: Chunk[] = [];
    for (let c = await reader.next(); c !== null; c = await reader.next()) chunks.push(c);
    chunks[0] = { ...chunks[0], skip: 1 };
    const warm = chunks.slice(0, chunks.length >> 1);
    const measured = chunks.slice(chunks.length >> 1);

    /** Rows and the wall and CPU time of `work` over `measured`, after `prepare` over `warm`. */
    const time = async (prepare: () => Promise<unknown>, work: () => Promise<number>) => {
      await prepare();
      const cpu = process.cpuUsage();
      const t = performance.now();
      const rows = await work();
      const used = process.cpuUsage(cpu);
      return { rate: (rows / (performance.now() - t)) * 1000, cpu: (used.user + used.system) / rows };
    };
    const workers = () => [0, 1].map(() => new PoolWorker(startWorker(new URL(import.meta.url))));
    const ways: Record<string, () => Promise<{ rate: number; cpu: number }>> = {
      'this thread': () => {
        const engine = openSync();
        return time(
          async () => enrichAll(engine, warm),
          async () => enrichAll(engine, measured),
        ).finally(() => engine.close());
      },
      'two workers, a chunk a message': () => {
        const ws = workers();
        const run = async (list: Chunk[]) => {
          let rows = 0;
          // Two in flight a worker, answers taken in order; each answer's buffer sent back to be filled again, as
          // `iprecord enrich` does once it is written.
          const inFlight: Promise<BatchOutput>[] = [];
          const spares: ArrayBuffer[] = [];
          const take = async () => {
            const r = await (inFlight.shift() as Promise<BatchOutput>);
            rows += r.rows;
            spares.push(r.text.buffer as ArrayBuffer);
          };
          for (let n = 0; n < list.length; n++) {
            const spare = spares.pop() ?? null;
            inFlight.push(ws[n % 2].run<BatchOutput>({ chunk: list[n], spare }, spare === null ? [] : [spare]));
            if (inFlight.length >= 4) await take();
          }
          while (inFlight.length > 0) await take();
          return rows;
        };
        return time(
          () => run(warm),
          () => run(measured),
        ).finally(() => ws.forEach((w) => w.close()));
      },
      'two workers, each its half in one message': () => {
        const ws = workers();
        const run = async (list: Chunk[]) => {
          const rows = await Promise.all(ws.map((w, i) => w.run<number>({ chunks: list.filter((_, n) => n % 2 === i) })));
          return rows[0] + rows[1];
        };
        return time(
          () => run(warm),
          () => run(measured),
        ).finally(() => ws.forEach((w) => w.close()));
      },
    };
    const results: Record<string, { rate: number; cpu: number }[]> = {};
    for (let round = 0; round < 3; round++) {
      const names = Object.keys(ways);
      for (const name of round % 2 === 0 ? names : names.reverse()) (results[name] ??= []).push(await ways[name]());
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const base = results['this thread'];
    console.log(
      `${ROWS.toLocaleString('en')} uniform rows, full records as CSV, ${chunks.length} chunks; the second half measured (median of 3)`,
    );
    console.log('| way | rows/s | CPU a row | rows/s / this thread | CPU a row / this thread |');
    console.log('|---|---|---|---|---|');
    for (const [name, xs] of Object.entries(results)) {
      const rate = median(xs.map((x) => x.rate));
      const cpu = median(xs.map((x) => x.cpu));
      console.log(
        `| ${name} | ${Math.round(rate).toLocaleString('en')} | ${cpu.toFixed(2)} µs | ${(rate / median(base.map((x) => x.rate))).toFixed(2)}x | ${(cpu / median(base.map((x) => x.cpu))).toFixed(2)}x |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
