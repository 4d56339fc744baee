import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareAll } from '../../../../src/compile/feeds/build.js';
import { PoolWorker } from '../../../../src/platform/threads.js';
import { prepareFeed, type Prepared, type PrepareTask } from '../../../../src/compile/feeds/prepare.js';
import { Worker } from 'node:worker_threads';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-prepare-all-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Feeds of different sizes, and a missing one. */
const tasks: (PrepareTask | null)[] = Array.from({ length: 9 }, (_, k) => {
  const file = join(dir, `feed${k}.txt`);
  writeFileSync(file, Array.from({ length: 50 * (k + 1) }, (_, i) => `10.${k}.${i >> 8}.${i & 255}`).join('\n') + '\nnot-an-ip\n');
  return { file, format: 'list', fetched: false, widest: { ipv4: 8, ipv6: 16 } } as const;
});
tasks.push(null);
const sizes = tasks.map((_, k) => 50 * (k + 1));

/** A worker thread that answers `answers` tasks, then dies (process.exit in the thread): what a crash looks like to the pool. */
function dyingWorker(answers: number): PoolWorker {
  const code = `
    const { parentPort } = require('node:worker_threads');
    let left = ${answers};
    parentPort.on('message', () => {
      if (left-- <= 0) process.exit(3);
      parentPort.postMessage({ result: 'from the worker' });
    });`;
  return new PoolWorker(new Worker(code, { eval: true }));
}

describe('prepareAll', () => {
  it('prepares every feed, and those of a worker that dies on this thread (none lost)', async () => {
    // The worker is given two feeds at once (one queued while it works): it answers one and dies on the other.
    const workers = [dyingWorker(1)];
    const results = await prepareAll(tasks, workers, sizes);
    for (const w of workers) w.close();
    const fromWorker = results.filter((r) => (r as unknown) === 'from the worker').length;
    expect(fromWorker).toBe(1);
    tasks.forEach((t, k) => {
      if ((results[k] as unknown) === 'from the worker') return;
      expect(results[k]).toEqual(t === null ? null : prepareFeed(t));
    });
    expect((results.filter((r) => r !== null && (r as unknown) !== 'from the worker') as Prepared[]).length).toBe(tasks.length - 1 - 1);
  });

  it('prepares everything on this thread without workers', async () => {
    const results = await prepareAll(tasks, [], sizes);
    tasks.forEach((t, k) => expect(results[k]).toEqual(t === null ? null : prepareFeed(t)));
  });
});
