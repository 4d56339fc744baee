import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { Dataset, HEADER, INDEX_WORDS } from '../../../src/dataset/format.js';
import { InvalidDatasetError } from '../../../src/errors.js';
import { specialTable } from '../../../src/compile/cache.js';
import { Sources } from '../../../src/compile/sources.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const good = compileDataset(
  new Sources({ geo: [testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture')], asn: [testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture')], anonymous: [] }),
  null,
  specialTable(),
  'fixtures',
).buffer;

describe('dataset file', () => {
  it('opens what the compiler writes', () => {
    const ds = new Dataset(good, 'good');
    expect(ds.starts4[0]).toBe(0);
    expect(ds.meta.zones.length).toBeGreaterThan(0);
  });

  it('refuses damaged and crafted files with a typed error naming the defect', () => {
    const damaged = (f: (b: Buffer) => void) => {
      const b = Buffer.from(good);
      f(b);
      return b;
    };
    /** A change with the checksum made again: a crafted file, not a damaged one. */
    const crafted = (f: (b: Buffer) => void) =>
      damaged((b) => {
        f(b);
        b.writeUInt32LE(crc32(b.subarray(HEADER)), 52);
      });
    const refs4 = HEADER + INDEX_WORDS * 4 + good.readUInt32LE(12) * 4;
    const cases: [string, Buffer, RegExp][] = [
      ['magic', damaged((b) => void b.write('XXXX', 0)), /bad magic/],
      ['version', damaged((b) => b.writeUInt32LE(9, 8)), /format version 9/],
      ['truncated', good.subarray(0, good.length - 4), /add up to/],
      ['empty', Buffer.alloc(0), /bad magic/],
      ['flipped bit', damaged((b) => void (b[HEADER + 100] ^= 1)), /checksum/],
      ['record out of range', crafted((b) => b.writeUInt32LE(0xffffff00, refs4)), /refers to record/],
      ['index out of order', crafted((b) => b.writeUInt32LE(0xffff, HEADER + 4)), /index/],
    ];
    for (const [name, buf, message] of cases) {
      expect(() => new Dataset(buf, name), name).toThrow(InvalidDatasetError);
      expect(() => new Dataset(buf, name), name).toThrow(message);
    }
  });
});
