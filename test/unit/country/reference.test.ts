/**
 * `region_code` and `region_type` against ISO 3166-2 as Debian's iso-codes
 * lists it (fixtures/reference/iso-3166-2.json.gz: its entries as they are,
 * written by scripts/gen-subdivisions.ts from the release the table comes
 * from), for every distinct (country, region) pair of the default geo data,
 * and the records of the default engine at one address of each pair.
 *
 * The first level of a country is its subdivisions without a parent, or
 * whose parent is a group that is not an administration (Indonesia's
 * islands, the Marshall Islands' chains).
 */

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { hasSubdivisions, matchRegion, subdivisionType } from '../../../src/country/regions.js';
import { normalizeRegion } from '../../../src/country/normalize.js';
import { defaultGeoPaths } from '../../../src/data.js';
import { flatGeo } from '../../../src/compile/geo/adapters/flat.js';
import { maxmindGeo } from '../../../src/compile/geo/adapters/maxmind.js';
import { detectSchema } from '../../../src/compile/geo/schema.js';
import { openSync } from '../../../src/index.js';
import { formatIp } from '../../../src/ip/format.js';
import { MmdbFile } from '../../../src/mmdb/reader.js';
import { ROOT } from '../../helpers/env.js';

type Entry = [code: string, name: string, type: string, parent: string | null, english: string | null];
const reference = JSON.parse(gunzipSync(readFileSync(`${ROOT}/fixtures/reference/iso-3166-2.json.gz`)).toString('utf8')) as { source: string; subdivisions: Entry[] };

const byCode = new Map(reference.subdivisions.map((e) => [e[0], e]));
const parentOf = (e: Entry) => (e[3] === null ? undefined : byCode.get(e[3].includes('-') ? e[3] : `${e[0].slice(0, 2)}-${e[3]}`));
// Groups of first-level subdivisions, not administrations: Indonesia's islands, the Marshall Islands' chains, Uganda's and Cape Verde's geographical regions.
const isGroup = (e: Entry) => e[2] === 'Geographical unit' || e[2] === 'Geographical region' || e[2] === 'Chain (of islands)';
const firstLevel = (e: Entry) => !isGroup(e) && (e[3] === null || isGroup(parentOf(e)!));
function top(e: Entry | undefined): Entry | undefined {
  while (e !== undefined && !firstLevel(e)) e = parentOf(e);
  return e;
}
/** country|normalised name -> the first-level codes whose own names, or names of places within them, it is. */
const named = new Map<string, Set<string>>();
for (const e of reference.subdivisions) {
  const t = top(e);
  if (t === undefined) continue;
  for (const n of [e[1], e[4] ?? '', ...e[1].split(/[[\]/,]/)]) {
    const key = `${e[0].slice(0, 2)}|${normalizeRegion(n)}`;
    if (!named.has(key)) named.set(key, new Set());
    named.get(key)!.add(t[0]);
  }
}

interface Pair {
  addresses: number;
  sample: string | null;
}

/** Every distinct (country, region) of the default geo data: IPv4 addresses and one IPv4 address in it (one walk of the data, for every test here). */
let walked: Map<string, Pair> | undefined;
function pairs(): Map<string, Pair> {
  if (walked !== undefined) return walked;
  const out = new Map<string, Pair>();
  walked = out;
  for (const path of defaultGeoPaths()) {
    const file = new MmdbFile(readFileSync(path), path);
    const adapt = detectSchema(file, path) === 'maxmind-city' ? maxmindGeo : flatGeo;
    const keys = new Map<number, string | null>();
    for (const version of [4, 6] as const) {
      file.forEachNetwork(version, (words, prefix, offset) => {
        let key = keys.get(offset);
        if (key === undefined) {
          const g = adapt(file.decode(offset));
          key = g?.countryCode && g.region ? `${g.countryCode}|${g.region}` : null;
          keys.set(offset, key);
        }
        if (key === null) return;
        let p = out.get(key);
        if (p === undefined) out.set(key, (p = { addresses: 0, sample: null }));
        if (version === 4 && file.metadata.ipVersion === 4) {
          p.addresses += 2 ** (32 - prefix);
          p.sample ??= formatIp(4, words);
        }
      });
    }
  }
  return out;
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(2)} %`;

describe(`regions against ISO 3166-2 (${reference.source})`, () => {
  it('are a current first-level subdivision of the country, typed, and never one the reference gives another name', () => {
    const all = pairs();
    let total = 0;
    const sums = { coded: 0, byReference: 0, byOtherNames: 0, none: 0, noneNamed: 0, contradicted: 0 };
    const notFirstLevel: string[] = [];
    const badType: string[] = [];
    const contradicted: string[] = [];
    const spain = { all: 0, coded: 0 };
    for (const [key, p] of all) {
      total += p.addresses;
      const [cc, region] = key.split('|');
      const sub = matchRegion(cc, region);
      // By the whole name: without generic words a region and its city are one ("Mexico City" and "Mexico").
      const owners = named.get(`${cc}|${normalizeRegion(region)}`);
      const only = owners?.size === 1 ? [...owners][0] : null;
      if (cc === 'ES') {
        spain.all += p.addresses;
        if (sub !== null) spain.coded += p.addresses;
      }
      if (sub === null) {
        sums.none += p.addresses;
        if (only !== null) sums.noneNamed += p.addresses;
        continue;
      }
      const code = `${cc}-${sub.code}`;
      const entry = byCode.get(code);
      if (entry === undefined || !firstLevel(entry)) notFirstLevel.push(`${key} -> ${code}`);
      else if (sub.type !== subdivisionType(entry[2])) badType.push(`${key} -> ${code} ${sub.type} (${entry[2]})`);
      sums.coded += p.addresses;
      if (only !== null && only !== code) {
        contradicted.push(`${key} -> ${code}, the reference names ${only} so (${p.addresses} addresses)`);
        sums.contradicted += p.addresses;
      } else if (owners?.has(code)) sums.byReference += p.addresses;
      else sums.byOtherNames += p.addresses;
    }
    console.log(
      `regions (${reference.source}): ${all.size} distinct (country, region) pairs, ${total} IPv4 addresses with a region; ` +
        `coded ${pct(sums.coded, total)} (by the reference's own names ${pct(sums.byReference, total)}, by other names ${pct(sums.byOtherNames, total)}), ` +
        `no code ${pct(sums.none, total)} (of which the reference names one subdivision so: ${pct(sums.noneNamed, total)}); ` +
        `code contradicted by the reference ${pct(sums.contradicted, total)}; not a first-level code ${notFirstLevel.length}, type not the reference's ${badType.length}; ` +
        `Spain coded ${pct(spain.coded, spain.all)}, all first-level`,
    );
    if (contradicted.length > 0) console.log(contradicted.join('\n'));
    expect(all.size).toBeGreaterThan(3000);
    expect(notFirstLevel).toEqual([]);
    expect(badType).toEqual([]);
    expect(sums.contradicted / total).toBeLessThanOrEqual(0.005);
    expect(sums.coded / total).toBeGreaterThan(0.95);
  });

  it('are what the default engine answers at an address of each pair', () => {
    const engine = openSync({ memory: 'read' });
    const wrong: string[] = [];
    let checked = 0;
    for (const [key, p] of pairs()) {
      if (p.sample === null) continue;
      const [cc, region] = key.split('|');
      const r = engine.lookup(p.sample);
      // A later source (the threat or ASN data) never changes the location; the sample is the pair's own address.
      if (r.country_code !== cc || r.region !== region) continue;
      checked++;
      const sub = matchRegion(cc, region);
      if (r.region_code !== (sub?.code ?? null) || r.region_type !== (sub?.type ?? null)) wrong.push(`${p.sample} ${key}: ${r.region_code} ${r.region_type}`);
    }
    engine.close();
    expect(checked).toBeGreaterThan(3000);
    expect(wrong).toEqual([]);
  });

  it('match at least 95 % of the distinct pairs in countries with ISO 3166-2 subdivisions', () => {
    let coded = 0;
    let applicable = 0;
    let codedApplicable = 0;
    for (const key of pairs().keys()) {
      const [cc, region] = key.split('|');
      const hit = matchRegion(cc, region) !== null;
      if (hit) coded++;
      if (hasSubdivisions(cc)) {
        applicable++;
        if (hit) codedApplicable++;
      }
    }
    const share = (100 * codedApplicable) / applicable;
    console.log(
      `region_code coverage: ${codedApplicable}/${applicable} pairs in countries with ISO 3166-2 subdivisions (${share.toFixed(1)} %); ` +
        `${coded}/${pairs().size} of all distinct pairs (${((100 * coded) / pairs().size).toFixed(1)} %)`,
    );
    expect(share).toBeGreaterThanOrEqual(95);
  });
});
