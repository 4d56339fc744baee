/**
 * The lite edition of a compiled dataset, for the edge (`iprecord export
 * --format lite`, `writeLiteDataset` of `iprecord/build`): every range's
 * country and its facts, its network (`asn` with its route, `carrier`) and
 * its threat object, as in the full dataset; no city, region, postal code,
 * coordinates or time zone (null in its records). Neighbouring ranges that
 * differ only in what it leaves out become one, which is most of its
 * saving: the default data's 8.9 million ranges and 270 MB make about a
 * tenth. A dataset like any other (`open({ dataset })` reads it too),
 * marked `edition: 'lite'` in its metadata. Build time only.
 */

import { ASN_STORED, CARRIER_MEMBERS } from '../contract/template.js';
import {
  CARRIER_AT,
  COUNTRY,
  COUNTRY_VALUES,
  CTY,
  Dataset,
  LOC,
  LOCATION,
  NET,
  NET_PART,
  NET_TYPED_BY,
  NETWORK,
  PACKED,
  RECORD,
  THR,
  THREAT,
} from '../dataset/format.js';
import { renameSync, rmSync } from 'node:fs';
import type { CountryFacts } from '../country/facts.js';
import type { IpVersion } from '../ip/parse.js';
import { carriesIpv4 } from '../ip/embedded.js';
import { Interner } from './intern.js';
import type { Location } from './sources.js';
import { CompiledDataset, internedSections, type Family } from './write.js';
import { readFileRange } from '../files/read.js';
import { removeLeftTemps } from '../files/write.js';

/** A lite dataset made from a full one's bytes (a lite one is made again the same). */
export function liteDataset(bytes: Uint8Array, name: string, builtAt = new Date()): CompiledDataset {
  const base = new Dataset(bytes, name);
  const intern = new Interner();
  const value = (rows: Uint32Array, at: number): unknown => JSON.parse(base.json(rows, at));
  // Per base row, its row in the lite dataset (-1: not yet made).
  const made = (n: number) => new Int32Array(n).fill(-1);
  const locations = made(base.locations.length / LOCATION);
  const countries = made(base.countries.length / COUNTRY);
  const networks = made(base.networks.length / NETWORK);
  const threats = made(base.threats.length / THREAT);
  const records = made(base.recordCount);
  const row = new Uint32Array(Math.max(NETWORK, THREAT));

  const location = (l: number): number => {
    if (locations[l] >= 0) return locations[l];
    const c = base.locations[l * LOCATION + LOC.country];
    if (countries[c] < 0) {
      // One location of the country per country row: the location of the lite dataset holds nothing else.
      const facts = Object.fromEntries(
        COUNTRY_VALUES.map((k) => [k, value(base.countries, c * COUNTRY + CTY[k])]),
      ) as unknown as CountryFacts;
      countries[c] = intern.location(countryOnly(facts.country_code === null ? null : facts));
    }
    return (locations[l] = countries[c]);
  };
  const network = (n: number): number => {
    if (networks[n] >= 0) return networks[n];
    const at = n * NETWORK;
    row.fill(0);
    for (const k of ASN_STORED) intern.text.put(value(base.networks, at + NET[k]), row, NET[k]);
    for (const k of CARRIER_MEMBERS) intern.text.put(value(base.networks, at + CARRIER_AT[k]), row, CARRIER_AT[k]);
    row.fill(0, NET_PART.head, NET_TYPED_BY);
    row[NET_TYPED_BY] = base.networks[at + NET_TYPED_BY];
    return (networks[n] = intern.tables.networks.row(row.subarray(0, NETWORK)));
  };
  const threat = (t: number): number => {
    if (threats[t] >= 0) return threats[t];
    const at = t * THREAT;
    row.fill(0);
    row.set(intern.text.add(base.json(base.threats, at + THR.object)), THR.object);
    row.set(intern.text.add(base.json(base.threats, at + THR.basic)), THR.basic);
    row[THR.flags] = base.threats[at + THR.flags];
    return (threats[t] = intern.tables.threats.row(row.subarray(0, THREAT)));
  };
  const record = (r: number): number => {
    if (records[r] >= 0) return records[r];
    const at = r * RECORD;
    return (records[r] = intern.record(location(base.records[at]), network(base.records[at + 1]), threat(base.records[at + 2])));
  };
  /** A range's ref in the lite dataset: its record's there, the same route prefix. */
  const liteRef = (ref: number) => ((record(ref >>> 8) << 8) | (ref & 255)) >>> 0;
  const family = (version: IpVersion): Family => {
    const refs = version === 4 ? base.refs4 : base.refs6;
    const starts = version === 4 ? base.starts4 : base.starts6;
    const width = version === 4 ? 1 : 4;
    // A block's end may add a range.
    const outRefs = new Uint32Array(refs.length + 2);
    const outStarts = new Uint32Array(starts.length + 8);
    let n = 0;
    const emit = (from: ArrayLike<number>, at: number, ref: number) => {
      if (n > 0 && outRefs[n - 1] === ref) return;
      outRefs[n] = ref;
      for (let w = 0; w < width; w++) outStarts[n * width + w] = from[at + w];
      n++;
    };
    // IPv6 ranges inside the /96 blocks answered as IPv4 (`ip/embedded.ts`: ::/96 holds a copy of every IPv4 range of
    // the default data) are never looked up: the range before stands for them, and the last one's ref starts again
    // after the block where the next range starts later.
    let carried = -1;
    const after = new Uint32Array(4);
    for (let i = 0; i < refs.length; i++) {
      if (refs[i] >>> 8 >= base.recordCount) throw base.badRef(refs[i]);
      if (version === 6 && n > 0 && carriesIpv4(starts.subarray(i * 4, i * 4 + 4))) {
        carried = refs[i];
        after.set([starts[i * 4], 0, 1, 0]);
        continue;
      }
      if (carried >= 0 && compareWords(starts, i * 4, after) > 0) emit(after, 0, liteRef(carried));
      carried = -1;
      emit(starts, i * width, liteRef(refs[i]));
    }
    if (carried >= 0) emit(after, 0, liteRef(carried));
    return { starts: outStarts.subarray(0, n * width), refs: outRefs.subarray(0, n), length: n };
  };
  const v4 = family(4);
  const v6 = family(6);
  return new CompiledDataset(
    v4,
    v6,
    internedSections(intern),
    {
      ...base.meta,
      zones: [],
      timeZones: { ...base.meta.timeZones, zones: {}, rules: [] },
      builtAt: builtAt.toISOString(),
      key: `lite:${base.meta.key}`,
      edition: 'lite',
    },
    undefined,
    PACKED.v6 | PACKED.parts,
  );
}

/** A location of a country alone (no country: none at all). */
function countryOnly(country: CountryFacts | null): Location {
  return {
    city: null,
    region: null,
    region_code: null,
    region_type: null,
    latitude: null,
    longitude: null,
    postal: null,
    country,
    zone: null,
    zoneFrom: 'none',
  } as Location;
}

/** What `writeLiteDataset` wrote. */
export interface LiteResult {
  readonly ranges: { readonly v4: number; readonly v6: number };
  readonly records: number;
  readonly bytes: number;
}

/**
 * Writes the lite edition of the dataset file `from` to `out` (a
 * temporary file beside it, checked whole as every open checks it, then
 * renamed into place: readers see the old file or the new one).
 * @throws InvalidDatasetError when `from` is not a dataset; a system error when `out` cannot be written
 */
export function writeLiteDataset(from: string, out: string): LiteResult {
  const lite = liteDataset(readFileRange(from, Buffer.allocUnsafe), from);
  const tmp = `${out}.${process.pid}.tmp`;
  removeLeftTemps(out);
  try {
    const bytes = lite.writeFile(tmp);
    new Dataset(readFileRange(tmp, Buffer.allocUnsafe), out).verify();
    renameSync(tmp, out);
    return { ranges: lite.ranges, records: lite.records, bytes };
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** The order of the address at `at` of `a` and the address `b` (four words each). */
function compareWords(a: ArrayLike<number>, at: number, b: ArrayLike<number>): number {
  for (let w = 0; w < 4; w++) if (a[at + w] !== b[w]) return a[at + w] < b[w] ? -1 : 1;
  return 0;
}
