import { Readable, Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich, enrichBatch, type BatchOutput, type BatchRunner, type Chunk, type RowConfig } from '../../../src/cli/enrich.js';
import { ADDRESS_PATHS, withoutPort } from '../../../src/cli/row-address.js';
import { openSync, type Engine } from '../../../src/engine/engine.js';
import { seed, unicastV4, xorshift32 } from '../../helpers/env.js';

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
      calls++ < 2
        ? new Promise<BatchOutput>((resolve) => setTimeout(() => resolve(enrichBatch(engine, config as RowConfig, chunk)), 5))
        : Promise.reject(new Error('the worker thread exited'));
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

describe('an address as logs write it', () => {
  it('is read without its port and brackets, and anything that is not an address and a port is left as it is (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.integer({ min: 0, max: 65535 }), fc.string({ maxLength: 8 }), (ip, port, junk) => {
        const v6 = ip.includes(':');
        expect(withoutPort(ip)).toBe(ip);
        expect(withoutPort(v6 ? `[${ip}]:${port}` : `${ip}:${port}`)).toBe(ip);
        if (v6) expect(withoutPort(`[${ip}]`)).toBe(ip);
        // After the colon, what is not a port: the text stays whole (and answers as a bad address).
        if (!/^\d{1,5}$/.test(junk))
          expect(withoutPort(v6 ? `[${ip}]:${junk}` : `${ip}:${junk}`)).toBe(v6 ? `[${ip}]:${junk}` : `${ip}:${junk}`);
      }),
      { seed: seed(), numRuns: 2000 },
    );
  });

  it('NDJSON: found where logs put it (ADDRESS_PATHS, in order) without --path; with --path, only there', () => {
    const c = (paths: readonly (readonly string[])[]): RowConfig => ({
      input: 'ndjson',
      output: 'ndjson',
      key: 'r',
      fields: ['ip'],
      addressPaths: paths,
      column: 0,
      inputColumns: [],
      regex: undefined,
    });
    const lines = [
      { remote_addr: '8.8.8.8:5678' },
      { request: { client_ip: '[2001:4860:4860::8888]:443', remote_ip: '10.0.0.1' } },
      { ClientIP: '1.1.1.1' },
      { client: { ip: '9.9.9.9' } },
      { ip: '8.8.4.4', remote_addr: '1.0.0.1' },
      { other: '8.8.8.8' },
    ];
    const chunk: Chunk = { bytes: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), line: 1, skip: 0 };
    const answered = (config: RowConfig) =>
      Buffer.from(enrichBatch(engine, config, chunk).text)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { r: { ip?: string; error?: string } }).r);
    expect(answered(c(ADDRESS_PATHS))).toEqual([
      { ip: '8.8.8.8' },
      { ip: '2001:4860:4860::8888' },
      { ip: '1.1.1.1' },
      { ip: '9.9.9.9' },
      { ip: '8.8.4.4' },
      { error: 'no address in this row (at ip, remote_addr, client_ip or another usual place: --path names where it is)' },
    ]);
    expect(answered(c([['other']])).map((r) => r.ip ?? r.error)).toEqual([...Array(5).fill('no address at other'), '8.8.8.8']);
  });
});
