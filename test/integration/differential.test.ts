/**
 * The engine against references: a direct mmdb-lib read of the same geo
 * files, and a plain sweep over the ASN CSV, on 40 000 random addresses.
 */

import { readFileSync } from 'node:fs';
import { Reader } from 'mmdb-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { splitCsvLine } from '../../src/text/csv.js';
import { toBigInt, fromBigInt } from '../../src/ip/ranges.js';
import { defaultAsnSources, defaultGeoPaths } from '../../src/dataset/defaults.js';
import { isIprecordError, open, type Engine } from '../../src/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { prng, seed } from '../helpers/env.js';

const N = 40_000;

interface Row {
  lo: bigint;
  hi: bigint;
  asn: number;
  name: string;
}

function readAsnCsv(file: string): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const f = splitCsvLine(line)!;
    rows.push({ lo: toBigInt(parseIp(f[0])!), hi: toBigInt(parseIp(f[1])!), asn: Number(f[2]), name: f[3] });
  }
  return rows.sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
}

/**
 * Plain sweep: addresses sorted, ranges sorted by start, one pass over both.
 * Where ranges nest (the CSV has a few), the narrowest covering range
 * answers, as in routing (longest prefix): the covering range with the
 * latest start.
 */
function sweep(rows: Row[], values: bigint[]): (Row | null)[] {
  const order = values.map((_, i) => i).sort((a, b) => (values[a] < values[b] ? -1 : values[a] > values[b] ? 1 : 0));
  const out: (Row | null)[] = new Array(values.length).fill(null);
  let p = -1; // last range starting at or before the address
  for (const i of order) {
    const v = values[i];
    while (p + 1 < rows.length && rows[p + 1].lo <= v) p++;
    for (let q = p; q >= 0 && q >= p - 8; q--) {
      if (rows[q].hi >= v) {
        out[i] = rows[q];
        break;
      }
    }
  }
  return out;
}

let engine: Engine;
let v4rows: Row[];
let v6rows: Row[];
beforeAll(async () => {
  engine = await open();
  const { files } = defaultAsnSources();
  v4rows = readAsnCsv(files[0]);
  v6rows = readAsnCsv(files[1]);
});

describe('differential', () => {
  it(`agrees with mmdb-lib and the ASN CSV on ${N} random addresses`, () => {
    const rand = prng(seed());
    const [geo4, geo6] = defaultGeoPaths().map((p) => new Reader<Record<string, unknown>>(readFileSync(p)));
    const ips: string[] = [];
    for (let i = 0; i < N; i++) {
      if (i % 5 !== 0) {
        ips.push(formatIp(4, [0, 0, 0, Math.floor(rand() * 2 ** 32)]));
      } else {
        // IPv6 drawn from networks present in the data (random IPv6 is nearly always empty).
        const row = v6rows[Math.floor(rand() * v6rows.length)];
        const span = row.hi - row.lo;
        const off = (BigInt(Math.floor(rand() * 2 ** 32)) * BigInt(Math.floor(rand() * 2 ** 32))) % (span + 1n);
        ips.push(formatIp(6, fromBigInt(6, row.lo + off)));
      }
    }
    const parsed = ips.map((ip) => parseIp(ip)!);
    const v4 = sweep(
      v4rows,
      parsed.map((a) => (a.version === 4 ? toBigInt(a) : -1n)),
    );
    const v6 = sweep(
      v6rows,
      parsed.map((a) => (a.version === 6 ? toBigInt(a) : -1n)),
    );
    let answered = 0;
    let withAsn = 0;
    const wrong: { ip: string; got: unknown; want: unknown }[] = [];
    for (let i = 0; i < N; i++) {
      const ip = ips[i];
      let rec;
      try {
        rec = engine.lookup(ip);
      } catch (e) {
        if (isIprecordError(e) && (e.code === 'PRIVATE_IP' || e.code === 'RESERVED_IP')) continue;
        throw e;
      }
      answered++;
      const g = (parsed[i].version === 4 ? geo4 : geo6).get(ip);
      const text = (k: string) => (g && typeof g[k] === 'string' && g[k] !== '' ? g[k] : null);
      // Compared as text, each address once (an expect per member and address took most of the test's time).
      const lat = g?.latitude as number | undefined;
      const row = parsed[i].version === 4 ? v4[i] : v6[i];
      const route = row ? parseIp(rec.asn!.route.split('/')[0])! : null;
      const got = {
        cc: rec.country_code,
        region: rec.region,
        city: rec.city,
        at: lat === undefined ? [rec.latitude, rec.longitude] : [Math.fround(rec.latitude!), Math.fround(rec.longitude!)],
        asn: rec.asn?.asn ?? null,
        name: rec.asn?.name ?? null,
        routeInRow: route === null ? null : toBigInt(route) >= row!.lo && toBigInt(route) <= row!.hi,
      };
      const want = {
        cc: text('country_code'),
        region: text('state1'),
        city: text('city'),
        at: lat === undefined ? [null, null] : [lat, g!.longitude as number],
        asn: row ? `AS${row.asn}` : null,
        name: row ? row.name || null : null,
        routeInRow: row ? true : null,
      };
      if (JSON.stringify(got) !== JSON.stringify(want) && wrong.length < 10) wrong.push({ ip, got, want });
      if (row) withAsn++;
    }
    expect(wrong).toEqual([]);
    expect(answered).toBeGreaterThan(N * 0.8);
    expect(withAsn).toBeGreaterThan(N * 0.5);
  });
});
