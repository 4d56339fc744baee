/**
 * A worker thread of the feed builder: prepares the feeds it is sent, one
 * at a time, and sends each result back with its typed arrays moved.
 */

import { parentPort } from 'node:worker_threads';
import { prepareFeed, transferables, type PrepareTask } from './prepare.js';

parentPort?.on('message', (m: { readonly id: number; readonly task: PrepareTask }) => {
  const result = prepareFeed(m.task);
  parentPort?.postMessage({ id: m.id, result }, transferables(result));
});
