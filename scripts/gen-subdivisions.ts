// @ts-nocheck: a one-off generator over untyped JSON sources.
/**
 * Generates src/country/subdivisions.json: for each country, one line (the
 * format is in src/country/regions.ts) of its ISO 3166-2 subdivisions with
 * their type and every name by which geo databases write them (normalised),
 * for `region_code` and `region_type`.
 *
 * Sources (install them for this script only, they are not dependencies):
 *   npm i --no-save iso-3166@4 iso-3166-2@1 iso3166-2-db@2
 * - iso-3166 (wooorm): the current code list and local names (authoritative);
 * - iso-3166-2: the subdivision type (State, Province, Governorate, ...);
 * - iso3166-2-db: names in English, GeoNames and other languages.
 * A source entry whose code is not current is joined to a current code by
 * name. Run: npx tsx scripts/gen-subdivisions.ts
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { normalizeRegion, coreRegion } from '../src/country/normalize.js';
import { encodeRows } from '../src/country/regions.js';

const require = createRequire(import.meta.url);
const { iso31662 } = await import('iso-3166/2.js');
const old = require('iso-3166-2');
const db = require('iso3166-2-db/data/iso3166-2.json');
const geonames = require('iso3166-2-db/i18n/geonames.json');

/** cc -> Map(code -> { type, names:Set }) */
const table = new Map();
const byName = new Map(); // cc|name -> code
// First-level subdivisions first, so that a name shared with a second-level
// one (a city and its district) goes to the first level.
const current = [...iso31662].sort((a, b) => Number(a.parent.length > 2) - Number(b.parent.length > 2));
for (const s of current) {
  const [cc, code] = [s.code.slice(0, 2), s.code.slice(3)];
  if (!table.has(cc)) table.set(cc, new Map());
  table.get(cc).set(code, { type: null, names: new Set() });
}
function add(cc: string, code: string, name: string) {
  const entry = table.get(cc)?.get(code);
  if (!entry || !name) return false;
  for (const k of [normalizeRegion(name), coreRegion(name)]) {
    // Geo databases write region names in Latin script.
    if (!k || !/^[a-z0-9 ]+$/.test(k)) continue;
    entry.names.add(k);
    if (!byName.has(`${cc}|${k}`)) byName.set(`${cc}|${k}`, code);
  }
  return true;
}
for (const s of current) add(s.code.slice(0, 2), s.code.slice(3), s.name);
/** Adds a source entry: by its code when current, else by any of its names. */
function join(cc: string, code: string, names: string[]) {
  let target = table.get(cc)?.has(code) ? code : null;
  if (!target) {
    for (const n of names) {
      const hit = n && (byName.get(`${cc}|${normalizeRegion(n)}`) ?? byName.get(`${cc}|${coreRegion(n)}`));
      if (hit) {
        target = hit;
        break;
      }
    }
  }
  if (!target) return null;
  for (const n of names) add(cc, target, n);
  return target;
}
for (const [cc, c] of Object.entries(old.data)) {
  for (const [full, s] of Object.entries(c.sub)) {
    const target = join(cc, full.slice(full.indexOf('-') + 1), [s.name]);
    const entry = target && table.get(cc).get(target);
    if (entry && !entry.type && s.type) entry.type = s.type.toLowerCase();
  }
}
for (const [cc, c] of Object.entries(db)) for (const r of c.regions) join(cc, r.iso, [r.name, ...Object.values(r.names ?? {})]);
for (const [cc, c] of Object.entries(geonames)) for (const r of c.regions) join(cc, r.iso, [r.name]);

const out = {};
for (const [cc, subs] of [...table].sort(([a], [b]) => a.localeCompare(b))) {
  out[cc] = encodeRows([...subs].sort(([a], [b]) => a.localeCompare(b)).map(([code, e]) => [code, e.type, ...[...e.names].sort()]));
}
writeFileSync(new URL('../src/country/subdivisions.json', import.meta.url), JSON.stringify(out) + '\n');
console.log(`wrote ${Object.keys(out).length} countries, ${Object.values(out).reduce((a, l) => a + l.split('|').length, 0)} subdivisions`);
