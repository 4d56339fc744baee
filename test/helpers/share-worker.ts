/**
 * A worker thread for test/integration/share.test.ts: opens an engine with
 * the options it is given (with `shared` from the main thread), then
 * answers messages: `lookup` (records of addresses, errors as codes) and
 * `peek` (a byte of one of its files, as it sees it).
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isIprecordError, openSync, type OpenOptions } from '../../src/index.js';

const engine = openSync(workerData as OpenOptions);

type Message = { kind: 'lookup'; ips: string[] } | { kind: 'peek'; path: string; at: number };

parentPort?.on('message', (m: Message) => {
  if (m.kind === 'lookup') {
    const out = m.ips.map((ip) => {
      try {
        return engine.lookup(ip);
      } catch (e) {
        if (isIprecordError(e)) return e.code;
        throw e;
      }
    });
    parentPort?.postMessage(out);
    return;
  }
  const file = engine.share().files.find((f) => f.path === m.path);
  parentPort?.postMessage(file?.bytes ? new Uint8Array(file.bytes)[m.at] : null);
});
parentPort?.postMessage('ready');
