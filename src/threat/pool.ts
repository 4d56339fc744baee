/**
 * Worker threads of the feed builder (`worker.ts`), started once per build
 * and used for both of its stages: preparing feeds and compiling a slice
 * of the address space. A worker that cannot start or dies fails its
 * task, and the caller does that task on its own thread.
 */

import { Worker } from 'node:worker_threads';

/** One worker, one task at a time. */
export class PoolWorker {
  private pending: { resolve: (v: unknown) => void; reject: (e: Error) => void } | null = null;
  private dead = false;

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: { result: unknown }) => this.settle(null, m.result));
    worker.on('error', (e: Error) => this.fail(e));
    worker.on('exit', () => this.fail(new Error('the worker thread exited')));
  }

  /** Sends a task; the answer, or a rejection when the worker fails. */
  run<T>(message: unknown, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.dead) return Promise.reject(new Error('the worker thread is not running'));
    return new Promise<T>((resolve, reject) => {
      this.pending = { resolve: resolve as (v: unknown) => void, reject };
      this.worker.postMessage(message, transfer as ArrayBuffer[]);
    });
  }

  close(): void {
    this.dead = true;
    void this.worker.terminate();
  }

  private fail(e: Error): void {
    this.dead = true;
    this.settle(e, undefined);
  }

  private settle(error: Error | null, value: unknown): void {
    const p = this.pending;
    this.pending = null;
    if (p === null) return;
    if (error !== null) p.reject(error);
    else p.resolve(value);
  }
}

/** The worker's module: beside this one when built, the TypeScript source (through tsx) when run from the sources. */
function startWorker(): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(fromSource ? './worker.ts' : './threat-worker.js', import.meta.url);
  return new Worker(url, fromSource ? { execArgv: ['--import', 'tsx'] } : {});
}

/** Starts up to `n` workers (fewer when a worker cannot start). */
export function startPool(n: number): PoolWorker[] {
  const out: PoolWorker[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push(new PoolWorker(startWorker()));
    } catch {
      break;
    }
  }
  return out;
}
