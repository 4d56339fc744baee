/** Options checked by name: a misspelt option would otherwise be ignored (the engine's, the server's, an export's). */

import { InvalidOptionsError } from '../contract/errors.js';

/** The name among `names` that `key` most likely misspells (the same but for case, a prefix of it, or two edits away), if any. */
export function nearestName(key: string, names: readonly string[]): string | undefined {
  return (
    names.find((n) => n.toLowerCase() === key.toLowerCase()) ??
    names.find((n) => key.toLowerCase().startsWith(n.toLowerCase()) || edits(n, key) <= 2)
  );
}

/** Levenshtein distance of two short strings. */
function edits(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/**
 * Refuses options not among `names`, naming the nearest known one: a
 * misspelt option would otherwise be ignored.
 * @throws InvalidOptionsError
 */
export function checkOptionNames(options: object, names: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (names.includes(key)) continue;
    const near = nearestName(key, names);
    throw new InvalidOptionsError(
      `Unknown option "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; options are ${names.join(', ')}.`,
    );
  }
}

/**
 * Refuses options of a lookup it does not take (`checkOptionNames`) or
 * that are not an object: a loop over the object's few keys, a few
 * nanoseconds a call.
 * @throws InvalidOptionsError
 */
export function checkOptions(options: object | undefined, names: readonly string[]): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionsError(`Lookup options must be an object, not ${options === null ? 'null' : typeof options}.`);
  for (const key in options) if (!names.includes(key)) checkOptionNames(options, names);
}
