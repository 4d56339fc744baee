/**
 * The template is the code: a member added to a copy of it (here a place
 * member, `district`, after `region_type`) is carried by every output
 * derived from the template, with nothing else changed: the dataset's
 * rows and parts, the JSON text and bytes, `select()`, enrich's CSV cells,
 * `FIELD_NAMES` and the export columns. Records as objects are literals
 * (one shape for every record) and are one of the files a new member
 * touches (docs/development.md). A file of the isolated suites: the mock
 * replaces the template module for every module this file loads.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../src/contract/template.js', async (importOriginal) => {
  const { withMember } = await import('../helpers/template-copy.js');
  return withMember(await importOriginal(), 'district', 'region_type', 'places');
});

const { Interner } = await import('../../src/compile/intern.js');
const { RECORD_MEMBERS } = await import('../../src/contract/template.js');
const { CompiledDataset, internedSections } = await import('../../src/compile/write.js');
const { CountryTable } = await import('../../src/country/facts.js');
const { csvCells } = await import('../../src/engine/inside.js');
const { EXPORT_COLUMNS } = await import('../../src/export/record.js');
const { openSync } = await import('../../src/index.js');
const { FIELD_NAMES } = await import('../../src/record/fields.js');
const { ByteWriter } = await import('../../src/text/writer.js');
const { PACKAGE_ZONES } = await import('../../src/time/package-zones.js');

describe('a member added to the template', () => {
  it('is in every output derived from it, in its place', () => {
    const intern = new Interner();
    const place = {
      city: 'Berlin',
      region: 'Land Berlin',
      region_code: 'BE',
      region_type: 'state',
      district: 'Mitte, "Zentrum"',
      latitude: 52.52,
      longitude: 13.4,
      postal: '10115',
    };
    const location = {
      ...place,
      country: new CountryTable('https://flagcdn.com/w320').get('DE'),
      zone: 'Europe/Berlin',
      zoneFrom: 'data',
    } as const;
    const owner = {
      asn: 'AS3320',
      name: 'Deutsche Telekom AG',
      domain: null,
      type: 'isp',
      carrier: null,
      flags: 0,
      typedBy: 'name',
      share: null,
      places: 0,
    } as const;
    const record = intern.record(intern.location(location), intern.network(owner), intern.threat(null, 0, 0, true));
    const family = (width: number) => ({ starts: new Uint32Array(width), refs: Uint32Array.of(((record << 8) | 8) >>> 0), length: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-member-'));
    try {
      const file = join(dir, 'x.iprd');
      const ds = new CompiledDataset(family(1), family(4), internedSections(intern), {
        zones: intern.zones.list,
        timeZones: PACKAGE_ZONES,
        builtAt: '',
        key: '',
        sources: [],
      });
      writeFileSync(file, ds.toBuffer());
      const engine = openSync({ dataset: file });
      // JSON text and bytes: the member after region_type, its value the source's.
      const json = engine.lookupJson('1.2.3.4');
      const parsed = JSON.parse(json) as Record<string, unknown>;
      // Every member of the template (the copy), in its order: the record holds no carrier here.
      expect(Object.keys(parsed)).toEqual(RECORD_MEMBERS.filter((k) => k !== 'carrier'));
      expect(Object.keys(parsed).indexOf('district')).toBe(Object.keys(parsed).indexOf('region_type') + 1);
      expect(parsed.district).toBe(place.district);
      const target = Buffer.alloc(4096);
      const bytes = target.toString('utf8', 0, engine.writeJson('1.2.3.4', target));
      const clockless = (s: string) => s.replace(/"current_time":"[^"]*"/, '').replace(/"count":"\d+"/, '');
      expect(clockless(bytes)).toBe(clockless(json));
      // select(), fields as a list, CSV cells.
      expect(engine.select(['district', 'city'])('1.2.3.4')).toEqual({ district: place.district, city: 'Berlin' });
      expect(engine.lookup('1.2.3.4', { fields: ['district', 'ip'] as never })).toEqual({ district: place.district, ip: '1.2.3.4' });
      const out = new ByteWriter(256);
      expect(csvCells(engine, ['district', 'region_type'])('1.2.3.4', out, { message: '' })).toBe(true);
      expect(out.toString()).toBe(',"Mitte, ""Zentrum""",state');
      // The member lists.
      expect(FIELD_NAMES.indexOf('district' as never)).toBe(FIELD_NAMES.indexOf('region_type') + 1);
      expect(EXPORT_COLUMNS).toContain('district');
      engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
