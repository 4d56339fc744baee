/**
 * `dataset/seal.ts`: a seal names the file as Node reads it, and holds for
 * the same file read by a runtime that reads its times more coarsely
 * (Deno: the modification time to the millisecond, the change time to the
 * second), while any change a write makes to what the coarser reading
 * still sees breaks it.
 */

import { mkdtempSync, rmSync, statSync, writeFileSync, type BigIntStats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { identity, isSealed, removeSeal, writeSeal } from '../../../src/dataset/seal.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-seal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A reading of the file with its times as given. */
const reading = (st: BigIntStats, mtimeNs: bigint, ctimeNs: bigint): BigIntStats => ({ ...st, mtimeNs, ctimeNs }) as BigIntStats;
const MS = 1_000_000n;
const S = 1_000_000_000n;

describe('seal', () => {
  const file = join(dir, 'data.iprd');
  writeFileSync(file, 'bytes');
  const st = statSync(file, { bigint: true });

  it('holds for the reading it was written from, and not once the file is gone or its seal removed', () => {
    expect(writeSeal(file, st)).toBe(true);
    expect(isSealed(file, st)).toBe(true);
    removeSeal(file);
    expect(isSealed(file, st)).toBe(false);
  });

  it('written from a reading to the nanosecond, holds for the same times read to the millisecond and second, either way round', () => {
    const time = fc.bigInt({ min: 1_500_000_000n * S, max: 2_500_000_000n * S });
    fc.assert(
      fc.property(time, time, (m, c) => {
        const fine = reading(st, m, c);
        const coarse = reading(st, (m / MS) * MS, (c / S) * S);
        writeSeal(file, fine);
        expect(isSealed(file, coarse)).toBe(true);
        expect(isSealed(file, fine)).toBe(true);
        writeSeal(file, coarse);
        expect(isSealed(file, fine)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('breaks when a time moves by what the coarser reading sees, or the size, inode or device change', () => {
    const time = fc.bigInt({ min: 1_500_000_000n * S, max: 2_500_000_000n * S });
    fc.assert(
      fc.property(time, time, fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.boolean(), (m, c, by, coarse) => {
        const was = reading(st, m, c);
        writeSeal(file, coarse ? reading(st, (m / MS) * MS, (c / S) * S) : was);
        // A write moves the change time; in place, with the modification time set back, only that one.
        expect(isSealed(file, reading(st, m, c + by * S))).toBe(false);
        expect(isSealed(file, reading(st, m + by * MS, c))).toBe(false);
      }),
      { numRuns: 200 },
    );
    writeSeal(file, st);
    for (const other of [{ size: st.size + 1n }, { ino: st.ino + 1n }, { dev: st.dev + 1n }])
      expect(isSealed(file, { ...st, ...other } as BigIntStats), JSON.stringify(Object.keys(other))).toBe(false);
  });

  it('two fine readings differing below the unit are different files', () => {
    // Neither side is a whole number of milliseconds: both were read to the nanosecond, and they differ.
    const fine = reading(st, 1_700_000_000_123_456_789n, 1_700_000_000_987_654_321n);
    writeSeal(file, fine);
    expect(isSealed(file, reading(st, 1_700_000_000_123_456_788n, fine.ctimeNs))).toBe(false);
    expect(isSealed(file, reading(st, fine.mtimeNs, 1_700_000_000_987_654_322n))).toBe(false);
    expect(identity(fine)).toBe(`${st.dev}:${st.ino}:${st.size}:1700000000123456789:1700000000987654321`);
  });
});
