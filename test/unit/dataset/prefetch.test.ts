/**
 * Reading records ahead (`dataset/prefetch.ts`) is passed whatever rows
 * hold: it must pass over what is not an address, or names a range
 * without a record, and never throw, since the records are written after
 * it (and their errors named then).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { Sources } from '../../../src/compile/sources.js';
import { Dataset } from '../../../src/dataset/format.js';
import { GROUP, prefetch } from '../../../src/dataset/prefetch.js';
import { layout, readCounts } from '../../../src/dataset/layout.js';
import { specialTable } from '../../../src/ip/special.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { seed } from '../../helpers/env.js';
import { testDb } from '../../helpers/maxmind.js';

const good = compileDataset(
  new Sources({
    geo: [testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture')],
    asn: [testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture')],
    anonymous: [],
  }),
  null,
  specialTable(),
  'fixtures',
).toBuffer();

/** Addresses of every form, and what rows hold that is not one. */
const cell = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4().map((ip) => `::ffff:${ip}`),
  fc.string({ maxLength: 50 }),
  fc.constant(null),
  fc.constant(''),
  fc.constantFrom('10.1.2.3', '::', 'ff02::1', '1.2.3.4:80'),
);

describe('prefetch', () => {
  it('passes over what is not an address and never throws, for any group and any slice of it', () => {
    const ds = new Dataset(good, 'fixtures');
    fc.assert(
      fc.property(fc.array(cell, { maxLength: GROUP * 2 }), fc.nat(), fc.nat(), fc.boolean(), (cells, a, b, parts) => {
        const from = cells.length === 0 ? 0 : a % cells.length;
        const to = from + (cells.length === 0 ? 0 : b % (cells.length - from + 1));
        expect(() => prefetch(ds, cells, from, to, parts)).not.toThrow();
      }),
      { seed: seed(), numRuns: 300 },
    );
  });

  it('passes over ranges that name no record (a damaged file, found when the record is written)', () => {
    const crafted = Buffer.from(good);
    const at = layout(readCounts(crafted));
    // Every IPv4 and IPv6 range names a record past the table.
    const count = readCounts(crafted);
    for (let i = 0; i < count.v4; i++) crafted.writeUInt32LE(0xffffff00, at.refs4 + i * 4);
    for (let i = 0; i < count.v6; i++) crafted.writeUInt32LE(0xffffff00, at.refs6 + i * 4);
    const ds = new Dataset(crafted, 'crafted');
    expect(0xffffff00 >>> 8).toBeGreaterThanOrEqual(ds.recordCount);
    expect(() => prefetch(ds, ['1.2.3.4', '2001:db8::1', '81.2.69.160', '::ffff:8.8.8.8'], 0, 4, true)).not.toThrow();
  });
});
