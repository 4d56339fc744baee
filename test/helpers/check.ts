/**
 * Assertions for loops over many values and for large values: a plain
 * comparison first, and `expect()` only for a value that differs, so that
 * a failure reads as expect's own. expect() costs about a microsecond and a
 * half a call before it compares (its assertion object, its message), and
 * its deep equality is several times slower than Node's on large arrays:
 * in the suites' loops it took a fifth of the unit suites' time.
 */

import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

type Where = string | (() => string);
const text = (where?: Where) => (typeof where === 'function' ? where() : where);

/** `expect(actual, where).toBe(expected)`, asked only when they differ (`Object.is`, as toBe compares). */
export function same<T>(actual: T, expected: T, where?: Where): void {
  if (!Object.is(actual, expected)) expect(actual, text(where)).toBe(expected);
}

/** `expect(actual, where).toEqual(expected)`, asked only when they are not deeply and strictly equal (which implies toEqual). */
export function equal<T>(actual: T, expected: T, where?: Where): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, text(where)).toEqual(expected);
}

/** `expect(actual, where).toMatch(pattern)`, asked only when the text does not match. */
export function matches(actual: string | null, pattern: RegExp, where?: Where): void {
  if (typeof actual !== 'string' || !pattern.test(actual)) expect(actual, text(where)).toMatch(pattern);
}
