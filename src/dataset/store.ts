/**
 * A dataset directory as the runtime reads it: the `current` file names
 * the build in use (`builds/<name>`, swapped by one rename), which holds
 * `manifest.json` and the dataset; without `current`, the directory itself.
 */

import { join } from 'node:path';
import { InvalidDatasetError } from '../errors.js';
import { readRegularText } from '../files/read.js';

/**
 * The directory of the build in use in a dataset directory.
 * @throws InvalidDatasetError when `current` is there but cannot be read (a FIFO or a device is refused at once)
 */
export function resolveDataset(dir: string): string {
  const path = join(dir, 'current');
  let pointer: string;
  try {
    pointer = readRegularText(path).trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return dir;
    throw new InvalidDatasetError(`Cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  return pointer === '' ? dir : join(dir, pointer);
}
