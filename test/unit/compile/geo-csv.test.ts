/**
 * Geo range CSVs, in both published forms, answer as the flat MMDB of the
 * same rows: the same facts at the first, a middle and the last address of
 * every range, and nothing between ranges.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/compile/sources.js';
import { parseIp } from '../../../src/ip/address.js';
import { MmdbWriter } from '../../../src/mmdb/writer.js';
import type { Found } from '../../../src/mmdb/reader.js';
import { seed } from '../../helpers/env.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-geo-csv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const place = fc.record({
  country: fc.constantFrom('US', 'DE', 'AU', 'EG'),
  city: fc.constantFrom('Berlin', 'Cairo', 'San José', 'Saint-Denis, Réunion', ''),
  region: fc.constantFrom('Berlin', 'California', 'Queensland', ''),
  latitude: fc.integer({ min: -9000, max: 9000 }).map((n) => n / 100),
  longitude: fc.integer({ min: -18000, max: 18000 }).map((n) => n / 100),
});

describe('geo range CSVs', () => {
  it('answer as the flat MMDB of the same rows, in both forms', () => {
    let run = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 40 }),
        fc.array(place, { minLength: 40, maxLength: 40 }),
        (blocks, places) => {
          run++;
          // Each block is a /24 of 10.0.0.0/8's neighbours: 1.0.0.0 + 256 * block.
          const rows = blocks.map((b, i) => ({ lo: 0x01000000 + b * 256, hi: 0x01000000 + b * 256 + 255, ...places[i] }));
          const ip = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
          const q = (t: string) => (/[",]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);
          const ipLocationDb = rows
            .map((r) => [ip(r.lo), ip(r.hi), r.country, q(r.city), q(r.region), '', r.latitude, r.longitude, '', ''].join(','))
            .join('\n');
          const dbip = rows
            .map((r) => [ip(r.lo), ip(r.hi), 'EU', r.country, q(r.region), q(r.city), r.latitude, r.longitude].join(','))
            .join('\n');
          const a = join(dir, `a${run}.csv`);
          const b = join(dir, `b${run}.csv`);
          const m = join(dir, `m${run}.mmdb`);
          writeFileSync(a, ipLocationDb + '\n');
          writeFileSync(b, '# DB-IP Lite form\n' + dbip + '\n');
          const w = new MmdbWriter({ databaseType: 'dbip-city-lite', description: { en: 'test' } });
          for (const r of rows) {
            const address = parseIp(ip(r.lo))!;
            w.insert(4, address.words, 24, {
              country_code: r.country,
              city: r.city,
              state1: r.region,
              latitude: r.latitude,
              longitude: r.longitude,
            });
          }
          writeFileSync(m, w.toBuffer());
          const dbs = [openDatabase(a, 'geo'), openDatabase(b, 'geo'), openDatabase(m, 'geo')];
          const found: Found = { offset: -1, prefix: 0 };
          const at = (db: (typeof dbs)[number], n: number) => {
            db.file.find(4, parseIp(ip(n))!.words, found);
            return found.offset < 0 ? null : db.facts(found.offset);
          };
          for (const r of rows) {
            for (const n of [r.lo, r.lo + 77, r.hi, r.hi + 1]) {
              const want = at(dbs[2], n);
              expect(at(dbs[0], n), `${ip(n)} (ip-location-db form)`).toEqual(want);
              expect(at(dbs[1], n), `${ip(n)} (DB-IP form)`).toEqual(want);
            }
          }
          expect(dbs[0].info.schema).toBe('geo-csv');
        },
      ),
      { seed: seed(), numRuns: 30 },
    );
  });

  it('refuses a file of neither form, and serves geo data only', () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, '1.0.0.0,1.0.0.255,AU\n');
    expect(() => openDatabase(bad, 'geo')).toThrow(/no geo ranges in it/);
    expect(() => openDatabase(bad, 'anonymous')).toThrow(/CSV files can serve as geo or ASN data only/);
  });
});
