/**
 * `region_code` and `region_type` against ISO 3166-2 as Debian's iso-codes
 * lists it (fixtures/reference/iso-3166-2.json.gz: its entries as they are,
 * written by scripts/gen-subdivisions.ts from the release the table comes
 * from), for every distinct (country, region) pair the default engine
 * answers (read from its compiled data, each range once), and its records
 * at one address of each pair.
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
import { COUNTRY, CTY, LOC, LOCATION, PL, PLACE, RECORD } from '../../../src/dataset/layout.js';
import { compiledDataset } from '../../../src/engine/inside.js';
import { openSync } from '../../../src/index.js';
import { formatIp } from '../../../src/ip/format.js';
import { ROOT } from '../../helpers/env.js';

type Entry = [code: string, name: string, type: string, parent: string | null, english: string | null];
const reference = JSON.parse(gunzipSync(readFileSync(`${ROOT}/fixtures/reference/iso-3166-2.json.gz`)).toString('utf8')) as {
  source: string;
  subdivisions: Entry[];
};

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

/**
 * Every distinct (country, region) the default engine answers: its IPv4 addresses, one address in it (IPv4 where it has one), and the
 * region_code and region_type answered there (one pass over the compiled default data's ranges, for every test here).
 */
interface Answered extends Pair {
  code: string | null;
  type: string | null;
}
let walked: Map<string, Answered> | undefined;
function pairs(): Map<string, Answered> {
  if (walked !== undefined) return walked;
  const out = new Map<string, Answered>();
  const engine = openSync();
  try {
    const ds = compiledDataset(engine);
    const { starts4, refs4, starts6, refs6, records, locations, places, countries } = ds;
    // By location row: the pair's entry, or null without a country and a region.
    // By location row: the pair's entry, or null without a country and a region (undefined: not seen yet).
    const byLocation: (Answered | null | undefined)[] = new Array(locations.length / LOCATION);
    const pairOf = (ref: number, sample: () => string): Answered | null => {
      const loc = records[(ref >>> 8) * RECORD];
      let p = byLocation[loc];
      if (p === undefined) {
        const place = locations[loc * LOCATION + LOC.place] * PLACE;
        const cc = ds.string(countries, locations[loc * LOCATION + LOC.country] * COUNTRY + CTY.country_code);
        const region = ds.string(places, place + PL.region);
        p = null;
        if (cc !== null && region !== null) {
          const key = `${cc}|${region}`;
          p = out.get(key) ?? {
            addresses: 0,
            sample: sample(),
            code: ds.string(places, place + PL.region_code),
            type: ds.string(places, place + PL.region_type),
          };
          out.set(key, p);
        }
        byLocation[loc] = p;
      }
      return p;
    };
    for (let i = 0; i < starts4.length; i++) {
      const p = pairOf(refs4[i], () => formatIp(4, [0, 0, 0, starts4[i]]));
      if (p !== null) p.addresses += (i + 1 < starts4.length ? starts4[i + 1] : 2 ** 32) - starts4[i];
    }
    // Pairs only IPv6 addresses have (their addresses not counted).
    for (let i = 0; i < refs6.length; i++)
      if (byLocation[records[(refs6[i] >>> 8) * RECORD]] === undefined)
        pairOf(refs6[i], () => formatIp(6, Array.from(starts6.subarray(i * 4, i * 4 + 4))));
  } finally {
    engine.close();
  }
  walked = out;
  return out;
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(2)} %`;

describe(`regions against ISO 3166-2 (${reference.source})`, () => {
  it('are a current first-level subdivision of the country (or a group of them the data names), typed, answered wherever the reference names one so, and never one the reference gives another name', () => {
    const all = pairs();
    let total = 0;
    const sums = { coded: 0, byReference: 0, byOtherNames: 0, none: 0, noneNamed: 0, contradicted: 0 };
    const notFirstLevel: string[] = [];
    const badType: string[] = [];
    const contradicted: string[] = [];
    const namedNotCoded: string[] = [];
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
        if (only !== null) {
          sums.noneNamed += p.addresses;
          namedNotCoded.push(`${key}: the reference names ${only} so (${p.addresses} addresses)`);
        }
        continue;
      }
      const code = `${cc}-${sub.code}`;
      const entry = byCode.get(code);
      // A group of first-level subdivisions where the data names the group (Uganda's regions) is a code of ISO 3166-2 too.
      if (entry === undefined || !(firstLevel(entry) || isGroup(entry))) notFirstLevel.push(`${key} -> ${code}`);
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
    // A region the reference names by the very name the data gives answers its code.
    expect(namedNotCoded).toEqual([]);
    expect(sums.contradicted / total).toBeLessThanOrEqual(0.005);
    expect(sums.coded / total).toBeGreaterThan(0.95);
  });

  it('are what the default engine answers for each pair, in its data and at an address of it', () => {
    const engine = openSync({ memory: 'read' });
    const wrong: string[] = [];
    for (const [key, p] of pairs()) {
      const [cc, region] = key.split('|');
      const sub = matchRegion(cc, region);
      const want = `${sub?.code ?? null} ${sub?.type ?? null}`;
      if (`${p.code} ${p.type}` !== want) wrong.push(`${key}: ${p.code} ${p.type}, the reference's rule ${want}`);
      const r = engine.lookup(p.sample!);
      if (r.country_code !== cc || r.region !== region || `${r.region_code} ${r.region_type}` !== want)
        wrong.push(`${p.sample} ${key}: ${r.country_code} ${r.region} ${r.region_code} ${r.region_type}`);
    }
    engine.close();
    expect(pairs().size).toBeGreaterThan(3000);
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
