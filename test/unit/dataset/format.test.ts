import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { CRC_AT, Dataset, HEADER, layout, readCounts } from '../../../src/dataset/format.js';
import { findRange } from '../../../src/dataset/render.js';
import { InvalidDatasetError } from '../../../src/errors.js';
import { specialTable } from '../../../src/compile/run.js';
import { Sources } from '../../../src/compile/sources.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const good = compileDataset(
  new Sources({ geo: [testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture')], asn: [testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture')], anonymous: [] }),
  null,
  specialTable(),
  'fixtures',
).buffer;

const damaged = (f: (b: Buffer) => void) => {
  const b = Buffer.from(good);
  f(b);
  return b;
};
/** A change with the checksum made again: a crafted file, not a damaged one. */
const crafted = (f: (b: Buffer) => void) =>
  damaged((b) => {
    f(b);
    b.writeUInt32LE(crc32(b.subarray(HEADER)), CRC_AT);
  });
const at = layout(readCounts(good));

describe('dataset file', () => {
  it('opens what the compiler writes', () => {
    const ds = new Dataset(good, 'good');
    expect(ds.starts4[0]).toBe(0);
    expect(ds.meta.zones.length).toBeGreaterThan(0);
  });

  it('refuses damaged and crafted files with a typed error naming the defect', () => {
    const cases: [string, Buffer, RegExp][] = [
      ['magic', damaged((b) => void b.write('XXXX', 0)), /bad magic/],
      ['version', damaged((b) => b.writeUInt32LE(9, 8)), /format version 9/],
      ['truncated', good.subarray(0, good.length - 4), /add up to/],
      ['empty', Buffer.alloc(0), /bad magic/],
      ['index out of order', crafted((b) => b.writeUInt32LE(0xffff, HEADER + 4)), /index/],
    ];
    for (const [name, buf, message] of cases) {
      expect(() => new Dataset(buf, name), name).toThrow(InvalidDatasetError);
      expect(() => new Dataset(buf, name), name).toThrow(message);
    }
  });

  it('finds at verify() what opening does not read: a flipped bit anywhere (checksum), a range naming no record', () => {
    new Dataset(good, 'good').verify();
    // A bit of a fragment's text.
    const flipped = damaged((b) => void (b[at.fragments + 1] ^= 1));
    expect(() => new Dataset(flipped, 'flipped').verify()).toThrow(/checksum mismatch/);
    // A crafted range: opens, and a lookup that meets it is a typed error, not a wrong record.
    const crafted0 = crafted((b) => b.writeUInt32LE(0xffffff00, at.refs4));
    const ds = new Dataset(crafted0, 'crafted');
    expect(() => ds.verify()).toThrow(/refers to record/);
    expect(() => findRange(ds, 4, [0, 0, 0, 0])).toThrow(InvalidDatasetError);
    expect(() => findRange(ds, 4, [0, 0, 0, 0])).toThrow(/refers to record/);
    // A record row naming a location past the table.
    expect(() =>
      new Dataset(
        crafted((b) => b.writeUInt32LE(0xfffffff0, at.records)),
        'row',
      ).verify(),
    ).toThrow(/records row 0 refers to locations/);
    // A place whose city's slice ends past the text.
    expect(() =>
      new Dataset(
        crafted((b) => b.writeUInt32LE(0xfffffff0, at.places + 4)),
        'text',
      ).verify(),
    ).toThrow(/places row 0 refers to text/);
    // A second part of the text (values not all ASCII) that decodes to another length than the header's.
    const short = new Dataset(
      crafted((b) => b.writeUInt32LE(b.readUInt32LE(12 + 4 * 11) + 1, 12 + 4 * 11)),
      'units',
    );
    expect(() => short.verify()).toThrow(/its text is/);
  });
});
