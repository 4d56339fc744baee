/**
 * Range CSVs read on a worker thread (`range-csv-worker.ts`) while the
 * compiler walks the other sources: the default ASN data's two files take
 * about 2 s to read into networks, which the geo walk of the other core
 * hides. Small files are read at once on the calling thread, as are files
 * when the thread cannot start or does not answer. The compiler stays
 * synchronous: the thread's answer is waited for (`Atomics.wait`) where
 * the ranges are first needed. Build time only.
 */

import { statSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { ownEntry, startWorker } from '../platform/threads.js';
import { readRangeCsv, type RangeCsvParts } from './range-csv.js';
import { RANGE_READERS, type RangeRole } from './range-readers.js';

/** Files smaller than this together are read on the calling thread: starting a thread costs more. */
export const OFF_THREAD_BYTES = 8 << 20;
/** How long a thread may take to start, and to answer, before the files are read here instead. */
const START_MS = 15_000;
const ANSWER_MS = 300_000;

const WORKER = ownEntry(import.meta.url, './range-csv-worker.ts', 'range-csv-worker');

/**
 * Starts reading range CSVs: `parts()` gives what they hold (waiting for
 * the thread when one reads them) or throws as `readRangeCsv` does;
 * `read` tells whether they were read already (on the calling thread),
 * `thread` whether a worker thread read them (known once `parts()` gave them).
 */
export function readRangeCsvSoon<T>(files: readonly string[], role: RangeRole, offThreadBytes = OFF_THREAD_BYTES): RangeCsvReading<T> {
  const read = () => readRangeCsv(files, RANGE_READERS[role]) as RangeCsvParts<T>;
  let bytes = 0;
  try {
    for (const f of files) bytes += statSync(f).size;
  } catch {
    bytes = 0;
  }
  // Small files are read now: errors surface where the files are named.
  if (bytes < offThreadBytes) return { parts: settle(read), read: true, thread: false };
  const { port1, port2 } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  let worker: ReturnType<typeof startWorker>;
  try {
    worker = startWorker(WORKER, { workerData: { files, role, port: port2, signal }, transferList: [port2] });
    worker.unref();
  } catch {
    return { parts: settle(read), read: true, thread: false };
  }
  const join = (): (() => RangeCsvParts<T>) => {
    if (Atomics.wait(signal, 0, 0, START_MS) !== 'timed-out') Atomics.wait(signal, 0, 1, ANSWER_MS);
    const answer =
      Atomics.load(signal, 0) === 2
        ? (receiveMessageOnPort(port1)?.message as { parts?: RangeCsvParts<T>; error?: string } | undefined)
        : undefined;
    port1.close();
    void worker.terminate();
    reading.thread = answer !== undefined;
    if (answer?.parts !== undefined) return settle(() => answer.parts as RangeCsvParts<T>);
    if (answer?.error !== undefined)
      return settle(() => {
        throw new Error(answer.error);
      });
    return settle(read);
  };
  let joined: (() => RangeCsvParts<T>) | undefined;
  const reading: RangeCsvReading<T> = { parts: () => (joined ??= join())(), read: false, thread: false };
  return reading;
}

/** Range CSVs being read (`readRangeCsvSoon`). */
export interface RangeCsvReading<T> {
  readonly parts: () => RangeCsvParts<T>;
  readonly read: boolean;
  thread: boolean;
}

/** Runs `fn` now; a function that gives its result, or throws what it threw. */
function settle<T>(fn: () => T): () => T {
  try {
    const value = fn();
    return () => value;
  } catch (e) {
    return () => {
      throw e;
    };
  }
}
