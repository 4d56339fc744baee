/**
 * Time zones kept within the country, checked against the tz database's
 * own zone.tab (the system's, an outside reference; the table the engine
 * uses is generated from it) over random addresses of the default data.
 */

import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openSync } from '../../../src/index.js';
import { locateZone, OVERSEAS } from '../../../src/time/country-zone.js';

const zoneOf = (...args: Parameters<typeof locateZone>) => locateZone(...args).zone;
import { seed, unicastV4, xorshift32 } from '../../helpers/env.js';

const ZONE_TAB = '/usr/share/zoneinfo/zone.tab';
const present = existsSync(ZONE_TAB);
if (!present) console.log(`country zone test skipped: ${ZONE_TAB} (Debian's tzdata) is absent`);

describe.skipIf(!present)('time zones', () => {
  const tab = new Map<string, Set<string>>();
  if (present) {
    for (const line of readFileSync(ZONE_TAB, 'utf8').split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const [cc, , zone] = line.split('\t');
      if (!tab.has(cc)) tab.set(cc, new Set());
      tab.get(cc)!.add(zone);
    }
  }

  it('are one of the country zone.tab lists for it, for 50 000 random addresses', () => {
    const engine = openSync({ memory: 'read' });
    const next = xorshift32(seed());
    let checked = 0;
    const wrong: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      let r;
      try {
        r = engine.lookup(unicastV4(next()));
      } catch {
        continue;
      }
      if (r.country_code === null || r.time_zone === null || !tab.has(r.country_code)) continue;
      checked++;
      // The country's zones, or those of one of its territories zone.tab lists apart (France's overseas departments...).
      const allowed = [r.country_code, ...(OVERSEAS[r.country_code] ?? [])].some((cc) => tab.get(cc)?.has(r.time_zone!.name));
      if (!allowed) wrong.push(`${r.ip} ${r.country_code} ${r.time_zone.name}`);
    }
    engine.close();
    console.log(
      `time zones: ${checked} addresses with a country and a zone, ${wrong.length} in a zone zone.tab does not list for their country`,
    );
    expect(checked).toBeGreaterThan(40_000);
    expect(wrong).toEqual([]);
  });

  it("of an address located in a territory the country holds overseas: the territory's zone, as zone.tab lists it", () => {
    const valid = () => true;
    // Kourou (French Guiana), Pointe-à-Pitre (Guadeloupe), Le Port (Réunion), San Juan (Puerto Rico), Willemstad (Curaçao).
    const places: [string, string, number, number][] = [
      ['FR', 'GF', 5.16, -52.65],
      ['FR', 'GP', 16.24, -61.53],
      ['FR', 'RE', -20.94, 55.29],
      ['US', 'PR', 18.47, -66.11],
      ['NL', 'CW', 12.11, -68.93],
    ];
    for (const [country, territory, lat, lon] of places) {
      const zone = zoneOf(null, lat, lon, country, valid);
      expect(tab.get(territory), `${country} at ${lat}, ${lon}`).toContain(zone);
      expect(tab.get(country), `${country} at ${lat}, ${lon}`).not.toContain(zone);
    }
    // Without coordinates, or located at home: the country's own zone.
    expect(zoneOf(null, null, null, 'FR', valid)).toBe('Europe/Paris');
    expect(zoneOf(null, 48.85, 2.35, 'FR', valid)).toBe('Europe/Paris');
    // Every territory is a country of zone.tab, with zones of its own.
    for (const [country, territories] of Object.entries(OVERSEAS))
      for (const t of territories)
        expect([...(tab.get(t) ?? [])].filter((z) => !tab.get(country)?.has(z)).length, `${country} ${t}`).toBeGreaterThan(0);
  });

  it("near a border: the country's nearest zone, not the neighbour's", () => {
    const valid = () => true;
    // Coordinates in Thailand's zone for an address in Vietnam; Panama's west; Timor-Leste.
    expect(zoneOf(null, 13.75, 100.5, 'VN', valid)).toBe('Asia/Ho_Chi_Minh');
    expect(zoneOf(null, 9.93, -84.08, 'PA', valid)).toBe('America/Panama');
    expect(zoneOf(null, -8.55, 125.58, 'TL', valid)).toBe('Asia/Dili');
    // The nearest of several: the US west coast's coordinates, given a wrong zone.
    expect(zoneOf('Asia/Tokyo', 37.42, -122.08, 'US', valid)).toBe('America/Los_Angeles');
    // Just across a border, the zone of the country around them, not the zone whose city is nearest (Phoenix for a town on
    // the Rio Grande in Texas, Menominee for Sault Ste. Marie, Michigan, whose coordinates fall in Ontario).
    expect(zoneOf(null, 26.2306, -98.4447, 'US', valid)).toBe('America/Chicago');
    expect(zoneOf(null, 46.4977, -84.3476, 'US', valid)).toBe('America/Detroit');
    // The zone at the coordinates, kept when it is the country's.
    expect(zoneOf(null, 40.71, -74.0, 'US', valid)).toBe('America/New_York');
    // A database's name for one of the country's zones (a link) is kept as the database gives it.
    expect(zoneOf('Asia/Harbin', 43.88, 125.32, 'CN', (z) => z !== 'Nowhere/Zone')).toBe('Asia/Harbin');
    // No country: the zone at the coordinates as it is.
    expect(zoneOf(null, 13.75, 100.5, null, valid)).toBe('Asia/Bangkok');
  });
});
