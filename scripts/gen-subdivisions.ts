// @ts-nocheck: a one-off generator over untyped JSON sources.
/**
 * Generates src/country/subdivisions.json: for each country, one line (the
 * format is in src/country/regions.ts) of its first-level ISO 3166-2
 * subdivisions, each with its type in English and every name by which geo
 * databases write it or a place within it (normalised), for `region_code`
 * and `region_type`.
 *
 * Sources:
 * - iso-codes (Debian's ISO 3166-2 list, https://salsa.debian.org/iso-codes-team/iso-codes):
 *   the current codes, their level (`parent`), type and names, English
 *   names from `iso_3166-2/en.po`. Authoritative: nothing else adds a code.
 *   Pass a checkout: ISO_CODES=/path/to/iso-codes (v4.20.1 for the table in
 *   the repository); it also writes the entries as they are, with their
 *   English names, to fixtures/reference/iso-3166-2.json.gz, the tests'
 *   reference. Without one, that file is the source.
 * - iso3166-2-db (npm i --no-save iso3166-2-db@2): the English and GeoNames
 *   names that geo databases use. Its codes are out of date in places (Iran's
 *   renumbered provinces), so an entry joins a current code only when one of
 *   its names is a name of that code; otherwise by name, else not at all.
 * - `ALIASES` below: names that no source ties to a current subdivision
 *   (regions renamed, merged or split after the geo databases named them),
 *   each group with its reason.
 * A second-level subdivision's names are names of its first-level one
 * (Spain's provinces of their autonomous community, France's departments
 * of their region). Run: ISO_CODES=... npx tsx scripts/gen-subdivisions.ts
 */
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { normalizeRegion, coreRegion } from '../src/country/normalize.js';
import { encodeRows, jaroWinkler, subdivisionType } from '../src/country/regions.js';

const require = createRequire(import.meta.url);
const root = process.env.ISO_CODES;
const REFERENCE = new URL('../fixtures/reference/iso-3166-2.json.gz', import.meta.url);
// Without a checkout, iso-codes' entries as the last run tabled them (the tests' reference) are the source.
const tabled = root ? null : JSON.parse(gunzipSync(readFileSync(REFERENCE)).toString('utf8'));
const iso = tabled
  ? tabled.subdivisions.map(([code, name, type, parent]) => ({ code, name, type, ...(parent === null ? {} : { parent }) }))
  : JSON.parse(readFileSync(join(root, 'data/iso_3166-2.json'), 'utf8'))['3166-2'];
const english = new Map(tabled ? tabled.subdivisions.filter((s) => s[4] !== null).map((s) => [s[0], s[4]]) : []);
if (root) {
  // "#. Name for XX-YY" then msgid and msgstr; a fuzzy entry is a guess (Bashkortostan as "Tatarstan"), left out.
  let code = null;
  for (const line of readFileSync(join(root, 'iso_3166-2/en.po'), 'utf8').split('\n')) {
    const m = /^#\. Name for (\S+)/.exec(line);
    if (m) code = m[1];
    if (line.startsWith('#, fuzzy')) code = null;
    const s = /^msgstr "(.+)"$/.exec(line);
    if (s && code) {
      english.set(code, s[1]);
      code = null;
    }
  }
}
const db = require('iso3166-2-db/data/iso3166-2.json');
const geonames = require('iso3166-2-db/i18n/geonames.json');

/**
 * Names that no source ties to a current first-level subdivision, by country:
 * name -> code. Each group says why.
 */
const ALIASES = {
  // Nicaragua: the autonomous regions' English names since 2014 (iso-codes gives the Spanish).
  NI: { 'north caribbean coast': 'AN', 'south caribbean coast': 'AS' },
  // Yemen: "Sanaa" alone is the capital's own municipality (SA); the governorate around it is SN.
  YE: { 'sanaa governorate': 'SN', sanaa: 'SA', Soqatra: 'SU' },
  // France: the 22 metropolitan regions merged into 13 on 1 January 2016 (loi n° 2015-29).
  FR: {
    alsace: 'GES',
    lorraine: 'GES',
    'champagne ardenne': 'GES',
    aquitaine: 'NAQ',
    'new aquitaine': 'NAQ',
    limousin: 'NAQ',
    'poitou charentes': 'NAQ',
    auvergne: 'ARA',
    'rhone alpes': 'ARA',
    bourgogne: 'BFC',
    burgundy: 'BFC',
    'franche comte': 'BFC',
    'languedoc roussillon': 'OCC',
    'midi pyrenees': 'OCC',
    'nord pas de calais': 'HDF',
    picardie: 'HDF',
    picardy: 'HDF',
    'basse normandie': 'NOR',
    'haute normandie': 'NOR',
    'lower normandy': 'NOR',
    'upper normandy': 'NOR',
    provence: 'PAC',
    centre: 'CVL',
    // Cayenne is French Guiana's prefecture (against Mayenne's match).
    cayenne: '973',
    // Overseas departments by their towns and islands (Martinique, Guadeloupe), and Saint Martin's collectivity.
    'Fort-de-france': '972',
    'Le Marin': '972',
    'Basse-terre': '971',
    'Grande-terre': '971',
    'Collectivity of Saint Martin': 'MF',
  },
  // Argentina: the federal district, not the province around it.
  AR: { 'Buenos Aires F.D.': 'C' },
  // Capital cities, not the state or province around them (against the match of the name without "City" or "-grad").
  MX: { 'Mexico City': 'CMX' },
  BG: { 'Sofia-grad': '22' },
  BY: { 'Minsk City': 'HM', 'Homyel’ Voblasc’': 'HO' },
  MZ: { 'Maputo City': 'MPM' },
  // Names no current subdivision denotes: a city of several municipalities (ISO lists Skopje's ten), the whole of a city-state.
  MK: { 'Grad Skopje': '' },
  MC: { 'Municipality of Monaco': '', 'Commune de Monaco': '' },
  RS: { 'Central Serbia': '' },
  // English names that no source gives.
  CN: { 'Inner Mongolia': 'NM', Tibet: 'XZ' },
  RU: { Kuzbass: 'KEM', 'Orel Oblast': 'ORL' },
  MD: { Transnistria: 'SN' },
  KZ: {
    'Almaty Region': '19',
    Karaganda: '35',
    Aktobe: '15',
    'Zhetysu Region': '33',
    'West Kazakhstan': '27',
    'North Kazakhstan': '59',
    'Jetisu Region': '33',
    'Aktyubinskaya Oblast’': '15',
    'Nur-Sultan': '71',
    'Abai Region': '10',
  },
  AZ: { Baki: 'BA', Sumqayit: 'SM' },
  NZ: { 'Wellington Region': 'WGN', Wellington: 'WGN' },
  SA: { 'Mecca Region': '02', 'Medina Region': '03', 'Al Jouf': '12' },
  PE: { 'Lima Province': 'LMA', 'Cuzco Department': 'CUS' },
  TZ: { Pwani: '19' },
  PL: { Subcarpathia: '18' },
  // Indonesia: Papua's provinces of 2022; Mauritania: Nouakchott's three regions (against a close name's match).
  ID: {
    'Central Papua': 'PT',
    'Highland Papua': 'PE',
    'South Papua': 'PS',
    'Southwest Papua': 'PD',
    'West Papua': 'PB',
    'North Maluku': 'MU',
  },
  MR: { 'Nouakchott South': '15', 'Nouakchott North': '14', 'Nouakchott West': '13' },
  // Norway: the counties of 2024 lie within those ISO 3166-2 still lists (Viken, Vestfold og Telemark, Troms og Finnmark);
  // Sogn og Fjordane and Hordaland merged into Vestland in 2020.
  NO: {
    akershus: '30',
    ostfold: '30',
    buskerud: '30',
    vestfold: '38',
    telemark: '38',
    troms: '54',
    finnmark: '54',
    'vest agder': '42',
    'aust agder': '42',
    'sogn og fjordane': '46',
    hordaland: '46',
  },
  // Names of the default data (DB-IP) that answered no region_code though ISO 3166-2 has their subdivision: English
  // names, old names and spellings no source gives (measured over the compiled default data's IPv4 ranges).
  DO: { Nacional: '40' },
  IR: { 'East Azerbaijan': '03' },
  VE: { 'Estado La Guaira': 'X' },
  CZ: { 'Carlsbad Region': '41' },
  MM: { Rangoon: '06' },
  SC: { 'La Digue and Inner Islands': '15' },
  LV: { Valmiera: '113', 'South Kurzeme Municipality': '112' },
  // Madagascar: ISO 3166-2 lists the six former provinces; geo databases name the 22 regions within them.
  // Measured again over both families (a network of each name DB-IP gives): English and local names, and regions created
  // after ISO 3166-2's list, each filed under the subdivision it lies in (as Norway's counties above).
  // Bahrain: DB-IP writes the Capital Governorate by its city, Manama, and the Northern one in Arabic too.
  BH: { 'Southern Governorate': '14', manama: '13', 'Northern Governorate': '17', 'Al-muhafazat As-samaliyah': '17' },
  QA: { 'Al-Shahaniya': 'SH' },
  UZ: { Fergana: 'FA', 'Tashkent Region': 'TO', Bukhara: 'BU', Karakalpakstan: 'QR' },
  NP: {
    'Province 1': 'P1',
    'Province 2': 'P2',
    'Province 3': 'P3',
    'Province 4': 'P4',
    'Province 5': 'P5',
    'Province 6': 'P6',
    'Province 7': 'P7',
  },
  // Victoria is the city of Rabat, Gozo; Newland is Uusimaa's English name (Nyland).
  MT: { Victoria: '45' },
  FI: { Tampere: '11', Newland: '18' },
  LB: { 'North Lebanon': 'AS', Bekaa: 'BI' },
  HR: { 'County of Zagreb': '01' },
  GL: { Avannaata: 'AV' },
  GE: { Achara: 'AJ' },
  MN: { 'East Govi': '063', Eastern: '061' },
  SY: { Suwayda: 'SU', Raqqa: 'RA' },
  IQ: { Duhok: 'KR', Erbil: 'KR', Halabja: 'KR' },
  // Ethiopia's regions of 2023, split from the Southern Nations (SN); the Central African Republic's Lim-Pendé (2020), from Ouham-Pendé.
  ET: { 'Central Ethiopia Regional State': 'SN', 'South Ethiopia Regional State': 'SN' },
  CF: { 'Lim-Pende': 'OP' },
  // Uganda: DB-IP names the four geographical regions that group the districts; ISO 3166-2 lists them (UG-C, UG-E, UG-N, UG-W).
  UG: { 'Central Region': 'C', 'Eastern Region': 'E', 'Northern Region': 'N', 'Western Region': 'W' },
  MG: {
    analamanga: 'T',
    bongolava: 'T',
    itasy: 'T',
    vakinankaratra: 'T',
    diana: 'D',
    sava: 'D',
    "Amoron'i Mania": 'F',
    'haute matsiatra': 'F',
    'upper matsiatra': 'F',
    ihorombe: 'F',
    'vatovavy fitovinany': 'F',
    vatovavy: 'F',
    fitovinany: 'F',
    'atsimo atsinanana': 'F',
    boeny: 'M',
    betsiboka: 'M',
    melaky: 'M',
    sofia: 'M',
    'alaotra mangoro': 'A',
    analanjirofo: 'A',
    atsinanana: 'A',
    androy: 'U',
    anosy: 'U',
    'atsimo andrefana': 'U',
    menabe: 'U',
  },
};

const byCode = new Map(iso.map((s) => [s.code, s]));
const parentOf = (s) => (s.parent ? byCode.get(s.parent.includes('-') ? s.parent : s.code.slice(0, 2) + '-' + s.parent) : null);
/**
 * Whether a subdivision is first-level: it has no parent, or its parent is a
 * group of them that is not an administration (Indonesia's islands, whose
 * provinces are the first level; the Marshall Islands' two chains;
 * Uganda's four and Cape Verde's two geographical regions, whose districts
 * and municipalities are).
 */
const isGroup = (s) => s.type === 'Geographical unit' || s.type === 'Geographical region' || s.type === 'Chain (of islands)';
const firstLevel = (s) => !isGroup(s) && (!s.parent || isGroup(parentOf(s)));
/** The first-level subdivision a subdivision lies in (itself when first-level; null for a group). */
function top(s) {
  while (s && !firstLevel(s)) s = parentOf(s);
  return s;
}

/** cc -> Map(code -> { type, names:Set }), first-level only. */
const table = new Map();
const byName = new Map(); // cc|normalised name -> code
/**
 * Adds a name to a subdivision (code '' for names of no subdivision),
 * normalised; a name stays with the first subdivision given it.
 */
function add(cc, code, name) {
  const entry = table.get(cc)?.get(code);
  if (!entry || !name) return;
  const full = normalizeRegion(name);
  // Geo databases write region names in Latin script.
  if (!full || !/^[a-z0-9 ]+$/.test(full)) return;
  // The country's own code is no region's name (a source's English name of Malta's Victoria is "mt").
  if (full === cc.toLowerCase()) return;
  const owner = byName.get(`${cc}|${full}`);
  if (owner !== undefined && owner !== code) return;
  entry.names.add(full);
  byName.set(`${cc}|${full}`, code);
}
/** A name and its variants as ISO writes them ("Illes Balears [Islas Baleares]", "Bruxelles-Capitale, Région de"). */
function variants(name) {
  // ISO marks North Macedonia's municipalities of the City of Skopje with a dagger ("Centar †"): the name is without it.
  name = name.replace(/\s*†$/, '');
  const out = [name];
  const bracket = /^(.*?)\s*\[(.*)\]$/.exec(name);
  if (bracket) out.push(bracket[1], bracket[2]);
  const comma = /^(.*?), (.*)$/.exec(name);
  if (comma) out.push(`${comma[2]} ${comma[1]}`, comma[1]);
  for (const n of [...out]) if (n.includes('/')) out.push(...n.split('/'));
  return out;
}
for (const s of iso) {
  if (!firstLevel(s)) continue;
  const cc = s.code.slice(0, 2);
  if (!table.has(cc)) table.set(cc, new Map());
  table.get(cc).set(s.code.slice(3), { type: subdivisionType(s.type), names: new Set() });
}
for (const cc of Object.keys(ALIASES)) table.get(cc)?.set('', { type: null, names: new Set() });
// A group of first-level subdivisions that a database names (Uganda's regions) is a row of its own.
for (const [cc, names] of Object.entries(ALIASES)) {
  for (const code of Object.values(names)) {
    const group = byCode.get(`${cc}-${code}`);
    if (group && isGroup(group) && !table.get(cc).has(code))
      table.get(cc).set(code, { type: subdivisionType(group.type), names: new Set() });
  }
}
for (const [cc, names] of Object.entries(ALIASES)) {
  for (const [name, code] of Object.entries(names)) {
    if (!table.get(cc)?.has(code)) throw new Error(`alias ${cc} ${name}: ${cc}-${code} is not a first-level subdivision`);
    add(cc, code, name);
  }
}
// Names in order of trust: a first-level subdivision's own, then those of places within it.
for (const s of iso)
  if (firstLevel(s))
    for (const n of [...variants(s.name), ...variants(english.get(s.code) ?? '')]) add(s.code.slice(0, 2), s.code.slice(3), n);
for (const s of iso) {
  const t = top(s);
  if (t && t !== s)
    for (const n of [...variants(s.name), ...variants(english.get(s.code) ?? '')]) add(s.code.slice(0, 2), t.code.slice(3), n);
}

/**
 * Where a source entry's names go (`names`; `all`, in every language,
 * decide where): to its code when one of them is, or is close to, a name of
 * that code (Jaro-Winkler 0.85: "Seoul" and "Seoul-teukbyeolsi"); else to
 * the subdivision one of them names; else to its code if current, unless
 * the source's codes for that country are shown out of date (an entry whose
 * names are another code's: Iran renumbered its provinces, and the source
 * files "Tehran" under the code Fars has now); else nowhere.
 */
function target(cc, code, names, all, stale) {
  const entry = table.get(cc)?.get(code);
  const keys = [...names, ...all]
    .filter(Boolean)
    .flatMap((n) => [normalizeRegion(n), coreRegion(n)])
    .filter((k) => k);
  if (entry && keys.some((k) => entry.names.has(k) || [...entry.names].some((n) => jaroWinkler(n, k) >= 0.85))) return { code, by: 'name' };
  // By full names only: without generic words, a region and its city are one name ("Moscow Oblast" and "Moscow").
  for (const n of [...names, ...all].filter(Boolean)) {
    const named = byName.get(`${cc}|${normalizeRegion(n)}`);
    if (named !== undefined) return { code: named, by: 'name' };
  }
  // An entry without a code is no subdivision's (Nepal's Patheka), not the row of names that denote none.
  return entry && code !== '' && !stale.has(cc) ? { code, by: 'code' } : null;
}
const entries = [
  ...Object.entries(db).flatMap(([cc, c]) =>
    c.regions.map((r) => [cc, r.iso, [r.name, r.names?.en, r.names?.geonames], Object.values(r.names ?? {})]),
  ),
  ...Object.entries(geonames).flatMap(([cc, c]) => c.regions.map((r) => [cc, r.iso, [r.name], []])),
];
const stale = new Set();
for (const [cc, code, names, all] of entries) {
  const t = target(cc, code, names, all, new Set());
  if (t && t.code !== code && table.get(cc)?.has(code)) stale.add(cc);
}
const byCodeAlone = [];
for (const [cc, code, names, all] of entries) {
  const t = target(cc, code, names, all, stale);
  if (t?.by === 'code') byCodeAlone.push(`${cc}-${code} ${names.filter(Boolean).join(' / ')}`);
  if (t) for (const n of names) add(cc, t.code, n);
}

const out = {};
for (const [cc, subs] of [...table].sort(([a], [b]) => a.localeCompare(b))) {
  out[cc] = encodeRows(
    [...subs]
      .filter(([code, e]) => code !== '' || e.names.size > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([code, e]) => [code, e.type, ...[...e.names].sort()]),
  );
}
writeFileSync(new URL('../src/country/subdivisions.json', import.meta.url), JSON.stringify(out) + '\n');
// The reference the tests check against: iso-codes' entries as they are, with their English names.
if (root) {
  const version = /version: '([^']+)'/.exec(readFileSync(join(root, 'meson.build'), 'utf8'))[1];
  const reference = {
    source: `iso-codes ${version} (data/iso_3166-2.json, iso_3166-2/en.po)`,
    subdivisions: iso.map((s) => [s.code, s.name, s.type, s.parent ?? null, english.get(s.code) ?? null]),
  };
  mkdirSync(new URL('../fixtures/reference/', import.meta.url), { recursive: true });
  writeFileSync(REFERENCE, gzipSync(JSON.stringify(reference), { level: 9 }));
}
console.log(`codes out of date in the name source: ${[...stale].sort().join(' ')}`);
if (process.env.VERBOSE) console.log(`joined by code alone:\n${byCodeAlone.join('\n')}`);
console.log(`wrote ${Object.keys(out).length} countries, ${Object.values(out).reduce((a, l) => a + l.split('|').length, 0)} subdivisions`);
