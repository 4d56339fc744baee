/**
 * seen.bin's format (evidence/seen.ts): what `encodeSeen` writes,
 * `decodeSeen` and `seenAt` read back; a byte changed anywhere fails its
 * checksum; days a build never writes (before FIRST_DAY, first after last,
 * last after the list's download) fail also when the file is sealed again;
 * a file written before the checksum (IPRSEEN1) is still read.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDatasetError } from '../../../src/contract/errors.js';
import { decodeSeen, encodeSeen, FIRST_DAY, seenAt, verifySeen, type SeenList } from '../../../src/evidence/seen.js';
import { wholeFileCrc } from '../../../src/files/checksum.js';

const MAX6 = (1n << 128n) - 1n;

/** Sorted, disjoint ranges from drawn cut points, each with days a build writes (first <= last <= latest). */
function listOf(name: string, latest: number, cuts4: number[], cuts6: bigint[], days: [number, number][]): SeenList {
  const day = (k: number): [number, number] => {
    const [a, b] = days[k % days.length];
    const first = Math.min(FIRST_DAY + a, latest);
    return [first, Math.min(latest, first + b)];
  };
  const four = [...new Set(cuts4)].sort((a, b) => a - b);
  const v4: number[] = [];
  for (let i = 0; i + 1 < four.length; i += 2) v4.push(four[i], four[i + 1], ...day(i));
  const six = [...new Set(cuts6)].sort((a, b) => (a < b ? -1 : 1));
  const v6: [bigint, bigint, number, number][] = [];
  for (let i = 0; i + 1 < six.length; i += 2) v6.push([six[i], six[i + 1], ...day(i)]);
  return { name, latest, v4: Uint32Array.from(v4), v6 };
}

const lists = fc
  .array(
    fc.tuple(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.integer({ min: FIRST_DAY, max: FIRST_DAY + 5000 }),
      fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 40 }),
      fc.array(fc.bigInt({ min: 0n, max: MAX6 }), { maxLength: 20 }),
      fc.array(fc.tuple(fc.nat(6000), fc.nat(400)), { minLength: 1, maxLength: 5 }),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((drawn) => {
    const seenNames = new Set<string>();
    return drawn.filter(([name]) => !seenNames.has(name) && seenNames.add(name)).map((d) => listOf(...d));
  });

/** The file sealed again after a change: its checksum made to match its bytes. */
const resealed = (buf: Buffer) => {
  buf.writeUInt32LE(wholeFileCrc(buf, 16, 8), 8);
  return buf;
};

describe('seen.bin', () => {
  it('reads back what it wrote, and seenAt finds each range by its bounds', () => {
    fc.assert(
      fc.property(lists, (ls) => {
        const buf = encodeSeen(ls);
        verifySeen(buf);
        const back = decodeSeen(buf);
        expect([...back.values()]).toEqual(ls);
        for (const l of ls) {
          for (let i = 0; i < l.v4.length; i += 4)
            for (const a of [l.v4[i], l.v4[i + 1]]) {
              const at = seenAt(buf, 4, BigInt(a)).find((s) => s.list === l.name);
              expect(at).toEqual({
                list: l.name,
                start: BigInt(l.v4[i]),
                end: BigInt(l.v4[i + 1]),
                first: l.v4[i + 2],
                last: l.v4[i + 3],
                latest: l.latest,
              });
            }
          for (const [start, end, first, last] of l.v6)
            expect(seenAt(buf, 6, end).find((s) => s.list === l.name)).toEqual({ list: l.name, start, end, first, last, latest: l.latest });
        }
      }),
    );
  });

  it('fails its checksum where any byte is changed', () => {
    fc.assert(
      fc.property(lists, fc.nat(), fc.integer({ min: 1, max: 255 }), (ls, where, xor) => {
        const buf = encodeSeen(ls);
        const at = where % buf.length;
        buf[at] ^= xor;
        // Structure, magic or checksum: every change is a typed error, never days read from it.
        expect(() => decodeSeen(buf)).toThrow(InvalidDatasetError);
        expect(() => verifySeen(buf)).toThrow(InvalidDatasetError);
      }),
    );
  });

  it('refuses days a build never writes, also sealed again (first seen 1972, last seen 2136)', () => {
    const latest = FIRST_DAY + 2000;
    const one: SeenList = { name: 'a', latest, v4: Uint32Array.of(100, 200, FIRST_DAY + 10, FIRST_DAY + 20), v6: [] };
    const buf = encodeSeen([one]);
    // The list's name (u16 length, 'a') and latest (u32) and count (u32): the first range's days at 16 + 3 + 8 + 8.
    const days = 16 + 2 + 1 + 4 + 4 + 8;
    for (const [first, last, said] of [
      [800, FIRST_DAY + 20, /first seen 1972-03-11/],
      [FIRST_DAY + 10, 60_600, /last seen 2135-12-02/],
      [FIRST_DAY + 30, FIRST_DAY + 20, /first seen 2020-01-31 and last seen 2020-01-21/],
    ] as const) {
      const bad = Buffer.from(buf);
      bad.writeUInt32LE(first, days);
      bad.writeUInt32LE(last, days + 4);
      resealed(bad);
      verifySeen(bad);
      expect(() => decodeSeen(bad)).toThrow(said);
      expect(() => seenAt(bad, 4, 150n)).toThrow(said);
      // An address outside the damaged range reads no days of it.
      expect(seenAt(bad, 4, 250n)).toEqual([]);
    }
    const early = Buffer.from(buf);
    early.writeUInt32LE(17_000, 16 + 3);
    expect(() => decodeSeen(resealed(early))).toThrow(/latest download is dated 2016-07-18, before 2020-01-01/);
    const unsorted = encodeSeen([{ ...one, v4: Uint32Array.of(300, 400, FIRST_DAY, FIRST_DAY, 100, 200, FIRST_DAY, FIRST_DAY) }]);
    expect(() => decodeSeen(unsorted)).toThrow(/IPv4 ranges of a are not sorted and disjoint/);
  });

  it('reads a file written before the checksum (IPRSEEN1), its days checked', () => {
    fc.assert(
      fc.property(lists, (ls) => {
        const old = Buffer.concat([Buffer.from('IPRSEEN1', 'latin1'), encodeSeen(ls).subarray(12)]);
        verifySeen(old);
        expect([...decodeSeen(old).values()]).toEqual(ls);
      }),
    );
  });
});
