/**
 * A worker thread that reads range CSVs (`range-csv-thread.ts`): one task,
 * given in its `workerData`; the answer goes to the port it was given,
 * with its typed arrays moved, and `signal` tells the waiting thread
 * (1: started, 2: answered).
 */

import { workerData, type MessagePort } from 'node:worker_threads';
import { readRangeCsv, transferables } from './range-csv.js';
import { RANGE_READERS, type RangeRole } from './range-readers.js';

const { files, role, port, signal } = workerData as { files: string[]; role: RangeRole; port: MessagePort; signal: Int32Array };
Atomics.store(signal, 0, 1);
try {
  const parts = readRangeCsv(files, RANGE_READERS[role]);
  port.postMessage({ parts }, transferables(parts));
} catch (e) {
  port.postMessage({ error: (e as Error).message });
}
Atomics.store(signal, 0, 2);
Atomics.notify(signal, 0);
