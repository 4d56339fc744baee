import fc from 'fast-check';
import { Reader } from 'mmdb-lib';
import { describe, expect, it } from 'vitest';
import { MmdbFile } from '../../src/mmdb/reader.js';
import { Typed, MmdbWriter, type WritableValue } from '../../src/mmdb/writer.js';
import { seed } from '../helpers/env.js';

const params = { seed: seed(), numRuns: 300 };

/** Every type the writer can write, nested up to four levels. */
const scalar: fc.Arbitrary<WritableValue> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 29, maxLength: 300 }), // sizes past the one-byte control form
  fc.boolean(),
  fc.integer({ min: 0, max: 2 ** 32 - 1 }), // uint32
  fc.integer({ min: -(2 ** 31), max: -1 }), // int32
  fc.double(), // double, with NaN, infinities and -0
  fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }), // uint64 / uint128
  fc.uint8Array({ maxLength: 40 }),
  fc.integer({ min: 0, max: 65_535 }).map((v) => new Typed('uint16', v)),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((v) => new Typed('uint64', v)),
  fc.float({ noDefaultInfinity: false }).map((v) => new Typed('float', v)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((v) => new Typed('int32', v)),
);

const value: fc.Arbitrary<WritableValue> = fc.letrec<{ v: WritableValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    scalar,
    fc.array(tie('v'), { maxLength: 6 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie('v'), { maxKeys: 6 }),
  ),
})).v;

/** What a reader gives back for a written value (integers as numbers when safe). */
function expected(v: WritableValue): unknown {
  if (v instanceof Typed) {
    if (v.type === 'float') return Math.fround(Number(v.value));
    return expected(v.value);
  }
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  // -0 is an integer >= 0: it is written as uint32 0.
  if (typeof v === 'number') return Object.is(v, -0) ? 0 : v;
  if (v instanceof Uint8Array) return [...v];
  if (Array.isArray(v)) return v.map(expected);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expected(x)]));
  return v;
}

/** mmdb-lib's answer in the same terms (it gives every uint64 as a bigint, bytes as a Buffer). */
function normalise(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (v instanceof Uint8Array) return [...v];
  if (Array.isArray(v)) return v.map(normalise);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
}

/** Whether a map anywhere in the value has the key `__proto__`. */
function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (v === null || typeof v !== 'object' || v instanceof Typed || v instanceof Uint8Array) return false;
  return Object.hasOwn(v, '__proto__') || Object.values(v).some(hasProtoKey);
}

describe('MMDB writer value types', () => {
  it('round-trip through our decoder and through mmdb-lib', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 8 }), (values) => {
        const writer = new MmdbWriter({ databaseType: 'values-test', description: { en: 'values' }, languages: ['en'] });
        // One /8 per value: 1.0.0.0/8, 2.0.0.0/8, ...
        values.forEach((v, k) => writer.insert(4, [0, 0, 0, (k + 1) << 24], 8, { v }));
        const buf = writer.toBuffer();
        const ours = new MmdbFile(buf, 'values');
        const lib = new Reader(buf);
        const found = { offset: -1, prefix: 0 };
        values.forEach((v, k) => {
          ours.find(4, [0, 0, 0, ((k + 1) << 24) | 0x010203], found);
          // Two /8s side by side stored as one value are one /7.
          const sibling = ((k + 1) ^ 1) - 1;
          const other = { offset: -1, prefix: 0 };
          if (sibling >= 0 && sibling < values.length) ours.find(4, [0, 0, 0, ((sibling + 1) << 24) | 0x010203], other);
          expect(found.prefix).toBe(other.offset === found.offset ? 7 : 8);
          const want = expected(v);
          expect(normalise((ours.decode(found.offset) as { v: unknown }).v)).toEqual(want);
          // mmdb-lib assigns a `__proto__` key to the object's prototype (our
          // decoder keeps it as a key): compare only values without one.
          if (!hasProtoKey(v)) expect(normalise((lib.get(`${k + 1}.1.2.3`) as { v: unknown } | null)?.v)).toEqual(want);
        });
        expect(ours.verify().records).toBeGreaterThan(0);
      }),
      params,
    );
  });

  it('writes the metadata that readers require', () => {
    const writer = new MmdbWriter({
      databaseType: 'meta-test',
      description: { en: 'd', de: 'b' },
      languages: ['en', 'de'],
      buildEpoch: 1_700_000_000,
    });
    writer.insert(6, [0x20010db8, 0, 0, 0], 32, 'x');
    const m = new Reader(writer.toBuffer()).metadata;
    expect(m).toMatchObject({
      binaryFormatMajorVersion: 2,
      binaryFormatMinorVersion: 0,
      databaseType: 'meta-test',
      description: { en: 'd', de: 'b' },
      ipVersion: 6,
      languages: ['en', 'de'],
      recordSize: 24,
    });
    expect(m.buildEpoch.getTime()).toBe(1_700_000_000_000);
  });
});
