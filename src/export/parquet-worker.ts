/**
 * A worker thread of a Parquet export: opens an engine over the main
 * thread's files (workerData: the options, with `shared`) and writes one
 * family's file into the descriptor the main thread opened (`fd`), posting
 * how far it is and, at the end, what it wrote.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { openSync } from '../engine/engine.js';
import type { EngineInfo } from '../engine/info.js';
import type { OpenOptions } from '../engine/options.js';
import type { IpVersion } from '../ip/parse.js';
import { writeFamily } from './parquet.js';
import { compiledDataset } from '../engine/inside.js';

const { options, dataset, fd, version } = workerData as {
  options: OpenOptions;
  dataset: EngineInfo['dataset'];
  fd: number;
  version: IpVersion;
};
const engine = openSync(options);
const own = engine.info().dataset;
// The files are opened again here: a build swapped in between would make the two families' files disagree.
if (own.path !== dataset.path || own.builtAt !== dataset.builtAt)
  throw new Error(`the data changed while the export started (${dataset.path}, then ${own.path})`);
const written = await writeFamily(engine, compiledDataset(engine), version, fd, (done) => parentPort?.postMessage({ done }));
engine.close();
parentPort?.postMessage({ written });
