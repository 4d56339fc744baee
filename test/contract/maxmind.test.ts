/**
 * The adapters against test databases: for every network of the source
 * JSON, a lookup of its first address in the matching test database answers
 * the source's values. And every corrupt database gives a typed error, never
 * a crash or a hang. Two sets: iprecord's generated fixtures (always) and
 * MaxMind's own test databases (../shared, when present).
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, describe, expect, it as itAlways } from 'vitest';
import { compileTo } from '../../src/compile/run.js';
import { datasetKey } from '../../src/dataset/locate.js';
import { toBigInt, fromBigInt } from '../../src/ip/ranges.js';
import { InvalidDatasetError, isIprecordError, openSync } from '../../src/index.js';
import { parseCidr } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { MmdbFile } from '../../src/mmdb/reader.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { hasSharedData, SHARED_DATA } from '../helpers/env.js';
import { SMALL, sourceNetworks, testDb, type SourceRecord } from '../helpers/maxmind.js';
import { withCompilerProcess } from '../helpers/compile-here.js';
import { HANG_MS } from '../helpers/wait.js';

const present = hasSharedData();
/** Datasets compiled on this thread from damaged databases that compile. */
const scratch = mkdtempSync(join(tmpdir(), 'iprecord-maxmind-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const MAXMIND = join(SHARED_DATA, 'maxmind-test');

interface Suite {
  readonly label: string;
  readonly root: string;
  readonly present: boolean;
  readonly geo: readonly string[];
  readonly asn: string;
  readonly isp: string;
  readonly anonymous: string;
  /** Fewest networks each test must check (MaxMind's sources list some networks their databases lack). */
  readonly least: { geo: number; asn: number; isp: number; anonymous: number } | 'all';
}

const SUITES: readonly Suite[] = [
  {
    label: 'fixtures',
    root: FIXTURES_DIR,
    present: true,
    geo: ['GeoIP2-City-Fixture', 'GeoLite2-Country-Fixture'],
    asn: 'GeoLite2-ASN-Fixture',
    isp: 'GeoIP2-ISP-Fixture',
    anonymous: 'GeoIP2-Anonymous-IP-Fixture',
    least: 'all',
  },
  {
    label: 'MaxMind test databases',
    root: MAXMIND,
    present,
    geo: ['GeoIP2-City-Test', 'GeoLite2-City-Test', 'GeoIP2-Country-Test', 'GeoLite2-Country-Test'],
    asn: 'GeoLite2-ASN-Test',
    isp: 'GeoIP2-ISP-Test',
    anonymous: 'GeoIP2-Anonymous-IP-Test',
    least: { geo: 20, asn: 50, isp: 500, anonymous: 5 },
  },
];

/**
 * The first address of a network, as text. (Only the first: some test
 * databases hold less than their source lists, which mmdb-lib confirms.)
 */
function edges(cidr: string): string[] {
  const c = parseCidr(cidr)!;
  return [formatIp(c.address.version, fromBigInt(c.address.version, toBigInt(c.address)))];
}

type Get = (r: SourceRecord) => unknown;
const at =
  (path: string): Get =>
  (r) =>
    path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], r) ?? null;

/** Looks up every edge of every source network; checks that enough were. */
function check(
  suite: Suite,
  role: 'geo' | 'asn' | 'isp' | 'anonymous',
  name: string,
  expectations: (r: SourceRecord) => Record<string, unknown>,
  pick: (ip: string, source: SourceRecord) => Record<string, unknown>,
): number {
  let checked = 0;
  const networks = sourceNetworks(suite.root, name);
  for (const [network, record] of networks) {
    for (const ip of edges(network)) {
      let got: Record<string, unknown>;
      try {
        got = pick(ip, record);
      } catch (e) {
        // Private and reserved networks (MaxMind uses documentation ranges) answer errors, as the service does.
        if (isIprecordError(e) && (e.code === 'PRIVATE_IP' || e.code === 'RESERVED_IP')) continue;
        throw e;
      }
      expect({ ip, network, ...got }).toEqual({ ip, network, ...expectations(record) });
      checked++;
    }
  }
  expect(checked).toBeGreaterThanOrEqual(suite.least === 'all' ? networks.length : suite.least[role]);
  return checked;
}

describe.each(SUITES)('$label', (suite) => {
  const it = suite.present ? itAlways : itAlways.skip;
  it.each(suite.geo)('%s: location of every network', (name) => {
    const engine = openSync({ geo: testDb(suite.root, name), asn: SMALL.asn });
    const sub = (r: SourceRecord) => (r.subdivisions as SourceRecord[] | undefined)?.[0];
    check(
      suite,
      'geo',
      name,
      (r) => ({
        country_code: at('country.iso_code')(r) ?? at('registered_country.iso_code')(r),
        city: at('city.names.en')(r),
        region: sub(r) ? at('names.en')(sub(r)!) : null,
        region_code: sub(r) ? at('iso_code')(sub(r)!) : null,
        latitude: at('location.latitude')(r),
        longitude: at('location.longitude')(r),
        postal: at('postal.code')(r),
        zone: at('location.time_zone')(r),
      }),
      (ip, source) => {
        const rec = engine.lookup(ip);
        // Where the source has no zone, the engine derives one from the coordinates or the country.
        const zone = at('location.time_zone')(source) === null ? null : (rec.time_zone?.name ?? null);
        return {
          country_code: rec.country_code,
          city: rec.city,
          region: rec.region,
          region_code: rec.region_code,
          latitude: rec.latitude,
          longitude: rec.longitude,
          postal: rec.postal,
          // The database's zone when it has one; else the one derived from coordinates.
          zone: zone,
        };
      },
    );
  });

  it('ASN: number and organisation of every network', () => {
    const engine = openSync({ geo: SMALL.geo, asn: testDb(suite.root, suite.asn) });
    check(
      suite,
      'asn',
      suite.asn,
      (r) => ({ asn: `AS${r.autonomous_system_number as number}`, name: r.autonomous_system_organization ?? null }),
      (ip) => {
        const a = engine.lookup(ip).asn!;
        return { asn: a.asn, name: a.name };
      },
    );
  });

  it('ISP: ASN, and the carrier of mobile networks', () => {
    const engine = openSync({ geo: SMALL.geo, asn: testDb(suite.root, suite.isp) });
    check(
      suite,
      'isp',
      suite.isp,
      (r) => ({
        asn: r.autonomous_system_number === undefined ? null : `AS${r.autonomous_system_number as number}`,
        carrier:
          r.mobile_country_code !== undefined && r.mobile_network_code !== undefined
            ? { name: (r.isp ?? r.organization ?? null) as string | null, mcc: r.mobile_country_code, mnc: r.mobile_network_code }
            : null,
      }),
      (ip) => {
        const rec = engine.lookup(ip);
        return { asn: rec.asn?.asn ?? null, carrier: rec.carrier ?? null };
      },
    );
  });

  it('Anonymous-IP: Tor, VPN, proxy and hosting flags', () => {
    const engine = openSync({ ...SMALL, anonymous: testDb(suite.root, suite.anonymous) });
    check(
      suite,
      'anonymous',
      suite.anonymous,
      (r) => ({
        is_tor: r.is_tor_exit_node === true,
        is_vpn: r.is_anonymous_vpn === true,
        is_proxy: r.is_public_proxy === true || r.is_residential_proxy === true,
        hosting: r.is_hosting_provider === true,
      }),
      (ip, source) => {
        const t = engine.threat(ip);
        // A hosting network is a datacenter; others may be one by their ASN as well.
        return {
          is_tor: t.is_tor,
          is_vpn: t.is_vpn,
          is_proxy: t.is_proxy,
          hosting: source.is_hosting_provider === true ? t.is_datacenter : false,
        };
      },
    );
  });
});

/** Damaged databases: `bad-data/` (any depth) and the Broken/Invalid test databases. */
function damaged(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.mmdb')) files.push(p);
    }
  };
  walk(join(root, 'bad-data'));
  for (const f of readdirSync(join(root, 'test-data'))) if (/broken|invalid/i.test(f)) files.push(join(root, 'test-data', f));
  return files;
}

const probes = [
  '1.1.1.1',
  '2.125.160.216',
  '81.2.69.160',
  '216.160.83.56',
  '2001:218::1',
  '::1.1.1.1',
  '89.160.20.128',
  '67.43.156.1',
  '8000::1',
  'c000::1',
];
for (let i = 1; i < 224; i += 3) probes.push(`${i}.1.2.3`);

/**
 * Opens a database as geo data and looks up every probe; returns the first
 * iprecord error about the data, or null. `viaChild`: as a user opens it
 * (`openSync`, whose compile runs in a child process and answers its
 * error as JSON); else compiled on this thread by the child's own function
 * (`compileTo`) and the dataset opened, which answers the same without a
 * process started per file (a quarter of a second or more each).
 */
function openAndProbe(file: string, viaChild: boolean): unknown {
  try {
    const options = { geo: [file], asn: [...SMALL.asn] };
    const sources = { ...options, anonymous: [] };
    const engine = viaChild
      ? withCompilerProcess(() => openSync(options))
      : openSync({ dataset: compileTo(sources, datasetKey(sources), [join(scratch, `${basename(file)}.iprd`)], () => {}) });
    engine.info();
    for (const ip of probes) {
      try {
        engine.lookup(ip);
      } catch (e) {
        if (isIprecordError(e) && e.code === 'INVALID_DATASET') throw e;
        expect(isIprecordError(e)).toBe(true);
      }
    }
  } catch (e) {
    return e;
  }
  return null;
}

describe.each(SUITES.map((s) => ({ ...s, files: s.present ? damaged(s.root) : [] })))('$label: damaged databases', (suite) => {
  const it = suite.present ? itAlways : itAlways.skip;
  const name = (f: string) => relative(suite.root, f);
  // A loop in the search tree is invisible to lookups (a walk takes at most 128 steps); verify() finds it.
  const silent = /tree-cycle/;

  it('are there', () => {
    expect(suite.files.length).toBeGreaterThanOrEqual(suite.root === FIXTURES_DIR ? 6 : 20);
  });

  // Every file on this thread; a few through openSync's child process as well (the error as it reaches a user).
  const throughChild = new Set(suite.files.filter((f) => !silent.test(f)).slice(0, 3));
  it.each(suite.files.filter((f) => !silent.test(f)).map((f) => [name(f), f]))('%s: a typed error at open or at lookup', (_name, file) => {
    const started = Date.now();
    const error = openAndProbe(file, false);
    expect(error).toBeInstanceOf(InvalidDatasetError);
    // In the project's words, naming the file: never a JavaScript engine's message.
    expect((error as Error).message.startsWith(`${file}`)).toBe(true);
    expect((error as Error).message).not.toMatch(/call stack|Unknown type|out of range\. It must|Extended Type|undefined|NaN/);
    if (throughChild.has(file)) expect(openAndProbe(file, true)).toEqual(error);
    expect(Date.now() - started).toBeLessThan(HANG_MS);
  });

  it.each(suite.files.filter((f) => silent.test(f)).map((f) => [name(f), f]))('%s: lookups end without error or hang', (_name, file) => {
    const started = Date.now();
    expect(openAndProbe(file, false)).toBeNull();
    expect(openAndProbe(file, true)).toBeNull();
    expect(Date.now() - started).toBeLessThan(HANG_MS);
  });

  // MaxMind's two files here are damaged only where the tree walk notices (metadata, a tree record).
  it.each(suite.files.filter((f) => !/last-in-metadata|corrupt-search-tree|truncated/.test(f)).map((f) => [name(f), f]))(
    '%s: verify() finds the defect',
    (_name, file) => {
      expect(() => new MmdbFile(readFileSync(file), file).verify()).toThrow(InvalidDatasetError);
    },
  );

  it('a database given for data it does not hold is named with its type and the role it serves', () => {
    const country = testDb(
      suite.root,
      suite.geo.find((name) => name.includes('Country'))!,
    );
    const asn = testDb(suite.root, suite.asn);
    const escaped = country.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(() => openSync({ geo: SMALL.geo, asn: country })).toThrow(
      new RegExp(
        `^${escaped} \\(database_type "[\\w-]*Country"\\) holds location data \\(geo\\), not network owner data \\(asn\\): give it as "geo"\\.$`,
      ),
    );
    expect(() => openSync({ geo: asn, asn: SMALL.asn })).toThrow(
      /\(database_type "GeoLite2-ASN"\) holds network owner data \(asn\), not location data \(geo\): give it as "asn"\./,
    );
  });

  it('every valid test database verifies', () => {
    const dir = join(suite.root, 'test-data');
    const valid = readdirSync(dir).filter((f) => f.endsWith('.mmdb') && !/broken|invalid/i.test(f));
    expect(valid.length).toBeGreaterThanOrEqual(suite.root === FIXTURES_DIR ? 8 : 20);
    for (const f of valid) expect(new MmdbFile(readFileSync(join(dir, f)), f).verify().nodes).toBeGreaterThan(0);
  });
});
