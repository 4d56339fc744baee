/**
 * A worker thread of the feed builder: prepares the feeds and compiles the
 * slices it is sent, one at a time, and sends each answer back with its
 * typed arrays moved.
 */

import { parentPort } from 'node:worker_threads';
import { compileSlice, sliceTransferables, type SliceInput } from './compile.js';
import { prepareFeed, transferables, type PrepareTask } from './prepare.js';

type Task = { readonly kind: 'prepare'; readonly task: PrepareTask } | { readonly kind: 'slice'; readonly input: SliceInput };

parentPort?.on('message', (m: Task) => {
  if (m.kind === 'prepare') {
    const result = prepareFeed(m.task);
    parentPort?.postMessage({ result }, transferables(result));
  } else {
    const result = compileSlice(m.input);
    parentPort?.postMessage({ result }, sliceTransferables(result));
  }
});
