/**
 * A worker thread of `iprecord enrich`: opens an engine over the main
 * thread's files (the options, with `shared`, come as workerData), then
 * turns each chunk of the input it is sent into output bytes, in order.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { openSync } from '../engine/engine.js';
import type { OpenOptions } from '../engine/options.js';
import { enrichBatch, type Chunk, type RowConfig } from './enrich.js';

const { options, config } = workerData as { options: OpenOptions; config: RowConfig };
const engine = openSync(options);

parentPort?.on('message', ({ chunk, spare }: { chunk: Chunk; spare: ArrayBuffer | null }) => {
  const result = enrichBatch(engine, config, chunk, spare);
  // The bytes are moved to the main thread, not copied.
  parentPort?.postMessage({ result }, [result.text.buffer as ArrayBuffer]);
});
