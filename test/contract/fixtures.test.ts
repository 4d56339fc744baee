/**
 * The generated fixtures: they are what scripts/make-fixtures.ts writes, and
 * the schemas without a MaxMind counterpart (the @ip-location-db flat
 * schema, IPinfo Lite) answer their source's values.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, FIXTURES_DIR, fixtureFiles } from '../../scripts/make-fixtures.js';
import { toBigInt, fromBigInt } from '../../src/ip/ranges.js';
import { openSync } from '../../src/index.js';
import { parseCidr, parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { SMALL, sourceNetworks, testDb } from '../helpers/maxmind.js';

/** First and last address of a network. */
function ends(cidr: string): string[] {
  const c = parseCidr(cidr)!;
  const v = c.address.version;
  const first = toBigInt(c.address);
  const last = first + (1n << BigInt((v === 4 ? 32 : 128) - c.prefix)) - 1n;
  return [first, last].map((n) => formatIp(v, fromBigInt(v, n)));
}

function inRoute(ip: string, route: string): boolean {
  const a = parseIp(ip)!;
  const [first, last] = ends(route).map((t) => toBigInt(parseIp(t)!));
  return a.version === parseIp(route.split('/')[0])!.version && toBigInt(a) >= first && toBigInt(a) <= last;
}

describe('fixtures', () => {
  it('are exactly what scripts/make-fixtures.ts writes (npm run fixtures)', () => {
    const want = fixtureFiles();
    const onDisk: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        // service/ holds what the service's clients send, read from their code, reference/ an outside list, logs/ address
        // text as logs hold it, written by hand, and tz/ tz database releases: not written by this script.
        if (statSync(p).isDirectory()) {
          if (!['service', 'reference', 'logs', 'tz'].includes(relative(FIXTURES_DIR, p))) walk(p);
        } else if (!f.endsWith('.md')) onDisk.push(relative(FIXTURES_DIR, p));
      }
    };
    walk(FIXTURES_DIR);
    expect(onDisk.sort()).toEqual([...want.keys()].sort());
    for (const [rel, buf] of want) expect(readFileSync(join(FIXTURES_DIR, rel)).equals(buf), rel).toBe(true);
    const total = [...want.values()].reduce((n, b) => n + b.length, 0);
    expect(total).toBeLessThan(100_000);
  });

  it.each([FIXTURES.flat.name, FIXTURES.flatUntyped.name])('%s: the flat schema answers its source', (name) => {
    const engine = openSync({ geo: testDb(FIXTURES_DIR, name), asn: SMALL.asn });
    expect(engine.info().databases[0].schema).toBe('flat');
    for (const [network, r] of sourceNetworks(FIXTURES_DIR, name)) {
      for (const ip of ends(network)) {
        const rec = engine.lookup(ip);
        const text = (v: unknown) => (v === '' ? null : v);
        expect({ ip, country: rec.country_code, region: rec.region, city: rec.city, postal: rec.postal }).toEqual({
          ip,
          country: (r.country_code as string).toUpperCase(),
          region: text(r.state1),
          city: text(r.city),
          postal: text(r.postcode),
        });
        // Float coordinates read back as the shortest decimal of the same float.
        expect(Math.fround(rec.latitude!)).toBe(r.latitude);
        expect(Math.fround(rec.longitude!)).toBe(r.longitude);
        expect(String(rec.latitude).length).toBeLessThanOrEqual(9);
        // No zone in the data: one from the coordinates.
        expect(rec.time_zone?.name).toMatch(/^[A-Z][a-z]+\//);
      }
    }
    expect(engine.lookup('5.145.130.1')).toMatchObject({ region_code: 'BE', time_zone: { name: 'Europe/Berlin' }, latitude: 52.5244 });
    expect(engine.lookup('1.0.0.1')).toMatchObject({ region_code: 'QLD', time_zone: { name: 'Australia/Brisbane' } });
  });

  it('IPinfo Lite serves as both geo and ASN database', () => {
    const file = testDb(FIXTURES_DIR, FIXTURES.ipinfo.name);
    const engine = openSync({ geo: file, asn: file });
    expect(engine.info().databases.map((d) => d.schema)).toEqual(['ipinfo-lite', 'ipinfo-lite']);
    for (const [network, r] of sourceNetworks(FIXTURES_DIR, FIXTURES.ipinfo.name)) {
      for (const ip of ends(network)) {
        const rec = engine.lookup(ip);
        expect({ country: rec.country_code, city: rec.city, asn: rec.asn?.asn, name: rec.asn?.name, domain: rec.asn?.domain }).toEqual({
          country: r.country_code,
          city: null,
          asn: r.asn,
          name: r.as_name,
          domain: r.as_domain,
        });
        expect(inRoute(ip, rec.asn!.route), `${ip} in ${rec.asn!.route}`).toBe(true);
      }
    }
  });
});
