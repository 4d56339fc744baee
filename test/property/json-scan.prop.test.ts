/**
 * The dataset check's JSON scanner (`src/dataset/json-scan.ts`) against
 * the runtime's `JSON.parse`: on JSON as `JSON.stringify` writes it (what
 * the compiler writes) and on near misses, it accepts exactly what
 * `JSON.parse` accepts, whitespace aside (the compiler writes none).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonValue } from '../../src/dataset/json-scan.js';
import { seed } from '../helpers/env.js';

const params = { seed: seed(), numRuns: 20_000 };
const bytes = (s: string) => Buffer.from(s, 'utf8');
const parses = (s: string) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

/** Text made of JSON's own characters, no whitespace: mostly near misses. */
const jsonish = fc.oneof(
  fc.json().map((j) => JSON.stringify(JSON.parse(j))),
  fc.stringMatching(/^[-"{}[\],:0-9.eE+\\ntrufalsu\x01é]{0,24}$/),
  fc.tuple(fc.json(), fc.nat(40), fc.constantFrom('', '"', '\\', ',', '}', ']', ':', '0', '.', 'e', '-', '\x1f')).map(([j, at, c]) => {
    const t = JSON.stringify(JSON.parse(j));
    const k = at % (t.length + 1);
    return t.slice(0, k) + c + t.slice(k + 1);
  }),
);

describe('JSON scanner', () => {
  it('accepts exactly what JSON.parse accepts, without whitespace', () => {
    fc.assert(
      fc.property(jsonish, (t) => {
        expect(isJsonValue(bytes(t)), t).toBe(parses(t));
      }),
      params,
    );
  });
});
