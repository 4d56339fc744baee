/**
 * Test environment: the shared data directory (present in CI, absent in a
 * plain clone) and the property-test seed.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `../shared/data` beside the project, or IPRECORD_SHARED_DATA. */
export const SHARED_DATA = process.env.IPRECORD_SHARED_DATA ?? join(ROOT, '..', 'shared', 'data');

/** Whether the shared data is there. With IPRECORD_REQUIRE_SHARED_DATA=1 its absence fails. */
export function hasSharedData(): boolean {
  const present = existsSync(join(SHARED_DATA, 'maxmind-test')) && existsSync(join(SHARED_DATA, 'feeds'));
  if (!present && process.env.IPRECORD_REQUIRE_SHARED_DATA === '1') {
    throw new Error(`The shared test data is required (IPRECORD_REQUIRE_SHARED_DATA=1) but ${SHARED_DATA} is missing.`);
  }
  if (!present) console.warn(`skipping: shared test data not found at ${SHARED_DATA} (set IPRECORD_SHARED_DATA)`);
  return present;
}

/**
 * Seed of the property tests: FC_SEED, else a fresh one that is printed.
 * In CI (CI=true) a missing FC_SEED is an error, so every run is replayable.
 */
export function seed(): number {
  const raw = process.env.FC_SEED;
  if (raw === undefined || raw === '') {
    if (process.env.CI === 'true') throw new Error('FC_SEED must be set in CI (see .ci/run).');
    const s = Date.now() % 2 ** 31;
    console.log(`FC_SEED=${s}`);
    return s;
  }
  const s = Number(raw);
  if (!Number.isSafeInteger(s)) throw new Error(`FC_SEED is not an integer: ${raw}`);
  return s;
}

/** A small seeded PRNG (mulberry32) for generated inputs outside fast-check. */
export function prng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
