/**
 * A worker thread that runs `Dataset.verify()` on a file the engine has
 * opened (`verify-thread.ts`): it maps the same descriptor, or shares the
 * bytes read into shared memory, so no copy is made. One task, one answer:
 * `{ error: null }`, or the defect's message (`invalid`), or why the
 * thread could not check (then the engine checks on its own thread).
 */

import { parentPort } from 'node:worker_threads';
import { memoryMapper } from '../platform/native.js';
import { InvalidDatasetError } from '../contract/errors.js';
import { Dataset } from './format.js';

interface Task {
  readonly name: string;
  readonly fd?: number;
  readonly bytes?: SharedArrayBuffer;
}

parentPort?.once('message', (task: Task) => {
  try {
    let buf: Buffer;
    if (task.bytes !== undefined) buf = Buffer.from(task.bytes);
    else {
      const m = memoryMapper();
      if (!('map' in m)) throw new Error(m.reason);
      buf = m.map(task.fd as number);
    }
    new Dataset(buf, task.name).verify();
    parentPort?.postMessage({ error: null });
  } catch (e) {
    parentPort?.postMessage({ error: (e as Error).message, invalid: e instanceof InvalidDatasetError });
  }
});
