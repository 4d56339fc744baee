/**
 * Test environment: the shared data directory (present in CI, absent in a
 * plain clone) and the property-test seed.
 */

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { BUILT_ENTRIES } from '../../src/platform/threads.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The `file:` URL of a package entry (`index`, `server`, ...) as the run's
 * global set-up built it (helpers/built-entries.ts): what a child process
 * imports with plain `node`, without tsx's start (about 0.4 s of CPU).
 */
export function builtEntry(name: string): string {
  const dir = process.env[BUILT_ENTRIES];
  if (dir === undefined) throw new Error(`${BUILT_ENTRIES} is set by the test set-up (helpers/built-entries.ts)`);
  return pathToFileURL(join(dir, `${name}.js`)).href;
}

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

/** xorshift32: seeded uint32s (the generated addresses of the CLI tests and of the benchmarks). */
export function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** A dotted quad of a uint32 with its first byte moved into 1-222 (unicast space, mostly public). */
export function unicastV4(a: number): string {
  return `${(a >>> 24) % 223 || 1}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
}

/** The resident size of a process in bytes (from /proc), or 0 once it has ended. */
/** Proportional set size of a process (shared pages divided among the processes, and mappings, that hold them), or 0. */
export function proportionalBytes(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

export function residentBytes(pid: number, part: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  try {
    return Number(new RegExp(`${part}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
