/**
 * `Dataset.verify()` on a worker thread (`verify-worker.ts`), so that the
 * thread that answers lookups goes on answering from the data it has while
 * a new file is checked (a reload), and opening overlaps the check with
 * its own work. A thread that cannot start or check hands the check back
 * to the caller's thread.
 */

import { InvalidDatasetError } from '../contract/errors.js';
import { ownEntry, startWorker } from '../platform/threads.js';
import type { Dataset } from './format.js';

const WORKER = ownEntry(import.meta.url, './verify-worker.ts', 'verify-worker');

/**
 * Verifies `ds`, whose bytes the worker reads from `source`: the open
 * descriptor of the mapped file, or the shared memory it was read into.
 * @throws InvalidDatasetError naming the defect
 */
export async function verifyOffThread(ds: Dataset, source: { readonly fd: number } | { readonly bytes: SharedArrayBuffer }): Promise<void> {
  let answer: { error: string | null; invalid?: boolean };
  try {
    answer = await new Promise((resolve, reject) => {
      const worker = startWorker(WORKER);
      worker.once('message', (m: { error: string | null; invalid?: boolean }) => {
        resolve(m);
        void worker.terminate();
      });
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('the verifying thread exited')));
      worker.postMessage({ name: ds.name, ...source });
    });
  } catch {
    answer = { error: 'no thread', invalid: false };
  }
  if (answer.error === null) return;
  if (answer.invalid === true) throw new InvalidDatasetError(answer.error);
  ds.verify();
}
