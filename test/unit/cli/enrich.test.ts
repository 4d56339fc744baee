import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich, enrichBatch, type BatchOutput, type BatchRunner, type Chunk, type RowConfig } from '../../../src/cli/enrich.js';
import { openSync, type Engine } from '../../../src/engine.js';
import { unicastV4, xorshift32 } from '../../helpers/env.js';

let engine: Engine;
beforeAll(() => {
  engine = openSync();
});
afterAll(() => engine.close());

/** A CSV of public addresses and some bad ones, large enough for many chunks. */
function csv(rows: number): Buffer {
  const next = xorshift32(7);
  const lines = ['n,ip'];
  for (let i = 0; i < rows; i++) lines.push(`${i},${i % 17 === 3 ? 'bad' : unicastV4(next())}`);
  return Buffer.from(lines.join('\n') + '\n');
}

/** Runs `enrich` over the bytes (in pieces, as a file is read); its output with the values that change per call blanked. */
async function run(bytes: Buffer, threads?: (config: RowConfig) => BatchRunner[]) {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString('utf8');
      done();
    },
  });
  const pieces = Array.from({ length: Math.ceil(bytes.length / 50_000) }, (_, k) => bytes.subarray(k * 50_000, (k + 1) * 50_000));
  const summary = await enrich(engine, Readable.from(pieces), sink, { input: 'csv', output: 'ndjson' }, undefined, threads);
  return { out: out.replace(/"current_time":"[^"]*"/g, '').replace(/"count":"\d+"/g, ''), summary };
}

describe('enrich on threads', () => {
  it('redoes on this thread the chunks of a thread that fails, in input order, nothing lost', async () => {
    const bytes = csv(20_000);
    const alone = await run(bytes);
    let calls = 0;
    // A "thread" that answers its first two chunks (later than asked), then fails every one.
    const flaky: BatchRunner = (chunk: Chunk) =>
      calls++ < 2 ? new Promise<BatchOutput>((resolve) => setTimeout(() => resolve(enrichBatch(engine, config as RowConfig, chunk)), 5)) : Promise.reject(new Error('the worker thread exited'));
    let config: RowConfig | null = null;
    const threaded = await run(bytes, (c) => {
      config = c;
      return [flaky, flaky];
    });
    expect(threaded.out).toBe(alone.out);
    expect(threaded.summary.rows).toBe(20_000);
    expect(threaded.summary.bad).toBe(alone.summary.bad);
    expect(threaded.summary.redone).toBeGreaterThan(0);
    expect(alone.summary.redone).toBe(0);
    expect(alone.out.split('\n').length).toBe(20_001);
  });
});
