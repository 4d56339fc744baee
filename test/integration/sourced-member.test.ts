/**
 * A member with a value from the sources, added where the template says:
 * `connection_type` (MaxMind City Enterprise's `traits.connection_type`)
 * entered in a copy of the template, as a place member after
 * `region_type`, and read by one adapter (MaxMind City's, through its
 * `members`); nothing else changed. Every output derived from the
 * template carries it: the JSON text and bytes, `select()`, `fields`,
 * enrich's CSV cells, the field and export lists, and the CSV, MMDB and
 * Parquet exports (read back by the `maxmind` reader and by DuckDB). The
 * record object is a literal of `record/objects.ts` (the exports read
 * it), one of the files a real member touches (docs/development.md): its
 * line is mocked here as a subclass that reads the member where the
 * template put it. A file of the isolated suites: the mocks replace the
 * modules for every module this file loads.
 */

import { closeSync, mkdtempSync, openSync as openFile, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Reader } from 'maxmind';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.mock('../../src/contract/template.js', async (importOriginal) => {
  const { withMember } = await import('../helpers/template-copy.js');
  return withMember(await importOriginal(), 'connection_type', 'region_type', 'places');
});

// The one adapter: MaxMind City reads the member from its record's traits.
vi.mock('../../src/compile/geo/adapters/maxmind.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/compile/geo/adapters/maxmind.js')>();
  const { isRow, text } = await import('../../src/compile/geo/adapters/values.js');
  return {
    ...m,
    maxmindGeo: (v: Parameters<typeof m.maxmindGeo>[0]) => {
      const facts = m.maxmindGeo(v);
      const traits = isRow(v) && isRow(v.traits) ? v.traits : null;
      return facts === null ? null : { ...facts, members: { connection_type: traits === null ? null : text(traits.connection_type) } };
    },
  };
});

// The record object's literal, as the line a real member adds to it: read from the place row where the template put it.
vi.mock('../../src/record/objects.js', async (importOriginal) => {
  const o = await importOriginal<typeof import('../../src/record/objects.js')>();
  const { LOC, LOCATION, PL, PLACE, RECORD } = await import('../../src/dataset/layout.js');
  class RecordObjects extends o.RecordObjects {
    override record(...args: Parameters<InstanceType<typeof o.RecordObjects>['record']>) {
      const r = super.record(...args);
      const ds = (this as unknown as { ds: import('../../src/dataset/format.js').Dataset }).ds;
      const place = ds.locations[ds.records[(args[3] >>> 8) * RECORD] * LOCATION + LOC.place] * PLACE;
      const value = ds.string(ds.places, place + (PL as Record<string, number>).connection_type);
      const entries = Object.entries(r);
      const after = entries.findIndex(([k]) => k === 'region_type') + 1;
      return Object.fromEntries([...entries.slice(0, after), ['connection_type', value], ...entries.slice(after)]) as typeof r;
    }
  }
  return { ...o, RecordObjects };
});

const { MmdbWriter } = await import('../../src/mmdb/writer.js');
const { parseCidr } = await import('../../src/ip/address.js');
const { compiledDataset, csvCells } = await import('../../src/engine/inside.js');
const { EXPORT_COLUMNS } = await import('../../src/export/record.js');
const { exportDataset } = await import('../../src/export/index.js');
const { writeFamily } = await import('../../src/export/parquet.js');
const { FIELD_NAMES, openSync } = await import('../../src/index.js');
const { ByteWriter } = await import('../../src/text/writer.js');
const { SMALL } = await import('../helpers/maxmind.js');

const MEMBER = 'connection_type';
const IP = '81.2.69.160';
const VALUE = 'Cable/DSL';

/** A GeoIP2 City Enterprise database: London with a connection type, Berlin without. */
function cityMmdb(): Buffer {
  const w = new MmdbWriter({ databaseType: 'GeoIP2-Enterprise', description: { en: 'a sourced member' }, languages: ['en'] });
  const put = (cidr: string, record: Record<string, unknown>) => {
    const c = parseCidr(cidr)!;
    w.insert(c.address.version, c.address.words, c.prefix, record as never);
  };
  const place = (city: string, cc: string, latitude: number, longitude: number) => ({
    city: { names: { en: city } },
    country: { iso_code: cc, names: { en: cc } },
    location: { latitude, longitude, time_zone: cc === 'GB' ? 'Europe/London' : 'Europe/Berlin' },
  });
  put('81.2.69.0/24', { ...place('London', 'GB', 51.5, -0.1), traits: { connection_type: VALUE } });
  put('5.145.128.0/20', place('Berlin', 'DE', 52.5, 13.4));
  return w.toBuffer();
}

describe('a member with a value from the sources, in the template and one adapter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-sourced-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is in every output derived from the template, in its place, with its source value', async () => {
    const geo = join(dir, 'city.mmdb');
    writeFileSync(geo, cityMmdb());
    const engine = openSync({ geo: [geo], asn: SMALL.asn });
    try {
      // JSON text and bytes: after region_type, the source's value; null where the source has none.
      const parsed = JSON.parse(engine.lookupJson(IP)) as Record<string, unknown>;
      const keys = Object.keys(parsed);
      expect(keys[keys.indexOf('region_type') + 1]).toBe(MEMBER);
      expect(parsed[MEMBER]).toBe(VALUE);
      expect((JSON.parse(engine.lookupJson('5.145.128.1')) as Record<string, unknown>)[MEMBER]).toBeNull();
      const target = Buffer.alloc(4096);
      const clockless = (s: string) => s.replace(/"current_time":"[^"]*"/, '').replace(/"count":"\d+"/, '');
      expect(clockless(target.toString('utf8', 0, engine.writeJson(IP, target)))).toBe(clockless(engine.lookupJson(IP)));
      // select(), fields as a list, enrich's CSV cells, the member lists.
      expect(engine.select([MEMBER, 'city'])(IP)).toEqual({ [MEMBER]: VALUE, city: 'London' });
      expect(engine.lookup(IP, { fields: [MEMBER, 'ip'] as never })).toEqual({ [MEMBER]: VALUE, ip: IP });
      const out = new ByteWriter(256);
      expect(csvCells(engine, [MEMBER, 'city'])(IP, out, { message: '' })).toBe(true);
      expect(out.toString()).toBe(`,${VALUE},London`);
      expect(FIELD_NAMES.indexOf(MEMBER as never)).toBe(FIELD_NAMES.indexOf('region_type') + 1);
      expect(EXPORT_COLUMNS).toContain(MEMBER);

      // The CSV export: a column of its own, London's network holding the value.
      const csv = join(dir, 'records.csv');
      await exportDataset(engine, { format: 'csv', out: csv });
      const [header, ...lines] = readFileSync(csv, 'utf8').trim().split('\n');
      const column = header.split(',').indexOf(MEMBER);
      expect(column).toBeGreaterThan(0);
      const london = lines.find((l) => l.startsWith('81.2.69.0/24,'))!;
      expect(london.split(',')[column]).toBe(VALUE);

      // The MMDB export, read by the maxmind reader.
      const mmdb = join(dir, 'records.mmdb');
      await exportDataset(engine, { format: 'mmdb', out: mmdb });
      const reader = new Reader<Record<string, unknown>>(readFileSync(mmdb));
      expect(reader.get(IP)?.[MEMBER]).toBe(VALUE);

      // The Parquet export's IPv4 file, written here (the export's worker threads load the modules unmocked), read by DuckDB.
      const parquet = join(dir, 'records-ipv4.parquet');
      const fd = openFile(parquet, 'w');
      try {
        await writeFamily(engine, compiledDataset(engine), 4, fd, () => {});
      } finally {
        closeSync(fd);
      }
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      await c.run('SET threads = 1');
      const rows = (await c.runAndReadAll(`SELECT ${MEMBER} FROM read_parquet('${parquet}') WHERE city = 'London'`)).getRowObjectsJson();
      expect(rows.map((r) => r[MEMBER])).toEqual([VALUE]);
      c.closeSync();
    } finally {
      engine.close();
    }
  });
});
