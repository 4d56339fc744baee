/**
 * Generates the test databases under fixtures/ with iprecord's own MMDB
 * writer (`npm run fixtures`). The layout mirrors MaxMind's test data:
 * `source-data/<name>.json` (a list of `{ network: record }`) is what each
 * `test-data/<name>.mmdb` was written from, so the same contract test reads
 * both; `bad-data/` holds damaged databases, each broken in one known way.
 *
 * The networks are examples made up for the tests (public ranges, so that
 * the engine answers records rather than private/reserved errors).
 * Generation is deterministic: a test regenerates everything in memory and
 * compares it with the committed files.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCidr } from '../src/ip/address.js';
import { MmdbFile } from '../src/mmdb/reader.js';
import { MmdbWriter, Typed, type WritableValue } from '../src/mmdb/writer.js';

/** 2026-01-01T00:00:00Z: a fixed build date keeps the output byte-stable. */
const BUILD_EPOCH = 1_767_225_600;

type Source = readonly (readonly [cidr: string, record: Record<string, WritableValue>])[];

const names = (en: string, de?: string): Record<string, string> => (de === undefined ? { en } : { de, en });
const country = (iso: string, en: string) => ({
  geoname_id: new Typed('uint32', iso.charCodeAt(0) * 1000 + iso.charCodeAt(1)),
  iso_code: iso,
  names: names(en),
});

/** GeoIP2 City shape: country, subdivisions, city, postal, location. */
const CITY: Source = [
  [
    '81.2.64.0/20',
    {
      city: { names: names('London') },
      country: country('GB', 'United Kingdom'),
      location: { accuracy_radius: new Typed('uint16', 20), latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
      postal: { code: 'EC2V' },
      subdivisions: [{ iso_code: 'ENG', names: names('England') }],
    },
  ],
  [
    '89.160.20.0/24',
    {
      city: { names: names('Linköping') },
      country: country('SE', 'Sweden'),
      location: { latitude: 58.4167, longitude: 15.6167, time_zone: 'Europe/Stockholm' },
      subdivisions: [{ iso_code: 'E', names: names('Östergötland County') }],
    },
  ],
  [
    '216.160.83.0/24',
    {
      city: { names: names('Milton') },
      country: country('US', 'United States'),
      location: { latitude: 47.2513, longitude: -122.3149, time_zone: 'America/Los_Angeles' },
      postal: { code: '98354' },
      subdivisions: [{ iso_code: 'WA', names: names('Washington') }],
    },
  ],
  [
    '175.16.199.0/24',
    {
      city: { names: names('Changchun') },
      country: country('CN', 'China'),
      location: { latitude: 43.88, longitude: 125.3228, time_zone: 'Asia/Shanghai' },
      subdivisions: [{ iso_code: 'JL', names: names('Jilin Sheng') }],
    },
  ],
  // No location time zone: the engine derives it from the coordinates.
  ['202.196.224.0/20', { country: country('PH', 'Philippines'), location: { latitude: 13, longitude: 122 } }],
  // Registered country only.
  ['67.43.156.0/24', { registered_country: country('BT', 'Bhutan') }],
  ['2001:218::/32', { country: country('JP', 'Japan'), location: { latitude: 35.69, longitude: 139.69, time_zone: 'Asia/Tokyo' } }],
  [
    '2a02:d300::/29',
    {
      city: { names: names('Kyiv') },
      country: country('UA', 'Ukraine'),
      location: { latitude: 50.4547, longitude: 30.5238, time_zone: 'Europe/Kyiv' },
      subdivisions: [{ iso_code: '30', names: names('Kyiv City') }],
    },
  ],
];

/** GeoLite2 Country shape: country and registered country only. */
const COUNTRY: Source = CITY.map(([cidr, r]) => {
  const out: Record<string, WritableValue> = {};
  if (r.country !== undefined) out.country = r.country;
  out.registered_country = r.registered_country ?? r.country;
  return [cidr, out] as const;
});

const ASN: Source = [
  ['1.0.0.0/24', { autonomous_system_number: new Typed('uint32', 13335), autonomous_system_organization: 'Cloudflare, Inc.' }],
  ['8.8.8.0/24', { autonomous_system_number: new Typed('uint32', 15169), autonomous_system_organization: 'Google LLC' }],
  ['81.2.64.0/20', { autonomous_system_number: new Typed('uint32', 20712), autonomous_system_organization: 'Andrews & Arnold Ltd' }],
  ['128.101.0.0/16', { autonomous_system_number: new Typed('uint32', 217), autonomous_system_organization: 'University of Minnesota' }],
  ['2600:1f00::/24', { autonomous_system_number: new Typed('uint32', 16509), autonomous_system_organization: 'Amazon.com, Inc.' }],
];

const ISP: Source = [
  [
    '1.128.0.0/11',
    {
      autonomous_system_number: new Typed('uint32', 1221),
      autonomous_system_organization: 'Telstra Pty Ltd',
      isp: 'Telstra Internet',
      organization: 'Telstra Internet',
    },
  ],
  // Mobile networks: country and network codes give `carrier`.
  [
    '149.101.100.0/28',
    {
      autonomous_system_number: new Typed('uint32', 6167),
      autonomous_system_organization: 'Cellco Partnership DBA Verizon Wireless',
      isp: 'Verizon Wireless',
      mobile_country_code: '310',
      mobile_network_code: '004',
      organization: 'Verizon Wireless',
    },
  ],
  [
    '31.13.64.0/24',
    {
      autonomous_system_number: new Typed('uint32', 21928),
      autonomous_system_organization: 'T-Mobile USA, Inc.',
      isp: 'T-Mobile',
      mobile_country_code: '310',
      mobile_network_code: '260',
      organization: 'T-Mobile',
    },
  ],
  // An ISP record without an AS number: no `asn`.
  ['4.0.0.0/9', { isp: 'Level 3 Communications', organization: 'Level 3 Communications' }],
];

const ANONYMOUS: Source = [
  ['71.160.223.0/24', { is_anonymous: true, is_hosting_provider: true }],
  [
    '81.2.69.0/24',
    {
      is_anonymous: true,
      is_anonymous_vpn: true,
      is_hosting_provider: true,
      is_public_proxy: true,
      is_residential_proxy: true,
      is_tor_exit_node: true,
    },
  ],
  ['186.30.236.0/24', { is_anonymous: true, is_public_proxy: true }],
  ['65.4.0.0/16', { is_anonymous: true, is_tor_exit_node: true }],
  ['2a02:1840::/32', { is_anonymous: true, is_anonymous_vpn: true }],
];

/** @ip-location-db flat schema (DB-IP Lite): "" for unknown, float coordinates. */
const FLAT: Source = [
  [
    '1.0.0.0/24',
    {
      city: 'South Brisbane',
      country_code: 'AU',
      latitude: new Typed('float', -27.4748),
      longitude: new Typed('float', 153.017),
      postcode: '',
      state1: 'Queensland',
      state2: '',
      timezone: '',
    },
  ],
  [
    '5.145.128.0/20',
    {
      city: 'Berlin',
      country_code: 'DE',
      latitude: new Typed('float', 52.5244),
      longitude: new Typed('float', 13.4105),
      postcode: '10178',
      state1: 'Berlin',
      state2: '',
      timezone: '',
    },
  ],
  [
    '41.32.0.0/16',
    {
      city: 'Cairo',
      country_code: 'EG',
      latitude: new Typed('float', 30.0626),
      longitude: new Typed('float', 31.2497),
      postcode: '',
      state1: 'Cairo Governorate',
      state2: '',
      timezone: '',
    },
  ],
  [
    '2800:40::/32',
    {
      city: 'Buenos Aires',
      country_code: 'AR',
      latitude: new Typed('float', -34.6131),
      longitude: new Typed('float', -58.3772),
      postcode: '',
      state1: 'Buenos Aires F.D.',
      state2: '',
      timezone: '',
    },
  ],
];

/** IPinfo Lite: country level location and the network owner in one record. */
const IPINFO: Source = [
  [
    '8.8.8.0/24',
    {
      as_domain: 'google.com',
      as_name: 'Google LLC',
      asn: 'AS15169',
      continent: 'North America',
      continent_code: 'NA',
      country: 'United States',
      country_code: 'US',
    },
  ],
  [
    '77.88.0.0/18',
    {
      as_domain: 'yandex.ru',
      as_name: 'YANDEX LLC',
      asn: 'AS13238',
      continent: 'Europe',
      continent_code: 'EU',
      country: 'Russia',
      country_code: 'RU',
    },
  ],
  [
    '2c0f:f248::/32',
    {
      as_domain: 'safaricom.co.ke',
      as_name: 'Safaricom PLC',
      asn: 'AS33771',
      continent: 'Africa',
      continent_code: 'AF',
      country: 'Kenya',
      country_code: 'KE',
    },
  ],
];

/** Fixture databases: name, `database_type` and source. */
export const FIXTURES = {
  city: { name: 'GeoIP2-City-Fixture', type: 'GeoIP2-City', source: CITY },
  country: { name: 'GeoLite2-Country-Fixture', type: 'GeoLite2-Country', source: COUNTRY },
  asn: { name: 'GeoLite2-ASN-Fixture', type: 'GeoLite2-ASN', source: ASN },
  isp: { name: 'GeoIP2-ISP-Fixture', type: 'GeoIP2-ISP', source: ISP },
  anonymous: { name: 'GeoIP2-Anonymous-IP-Fixture', type: 'GeoIP2-Anonymous-IP', source: ANONYMOUS },
  flat: { name: 'DBIP-City-Lite-Fixture', type: 'dbip-city-lite', source: FLAT },
  // No telling database_type: the schema is recognised from the first record.
  flatUntyped: { name: 'Untyped-Flat-Fixture', type: 'custom-geo', source: FLAT },
  ipinfo: { name: 'IPinfo-Lite-Fixture', type: 'ipinfo lite.mmdb', source: IPINFO },
} as const;

function build(type: string, source: Source): Buffer {
  const writer = new MmdbWriter({
    databaseType: type,
    description: { en: `iprecord test fixture (${type})` },
    languages: ['en'],
    buildEpoch: BUILD_EPOCH,
  });
  for (const [cidr, record] of source) {
    const c = parseCidr(cidr);
    if (c === null) throw new Error(`bad fixture network ${cidr}`);
    writer.insert(c.address.version, c.address.words, c.prefix, record);
  }
  return writer.toBuffer();
}

/** The source JSON as MaxMind writes it (typed values as plain numbers). */
function sourceJson(source: Source): string {
  const plain = (v: WritableValue): unknown => {
    if (v instanceof Typed) return typeof v.value === 'bigint' ? Number(v.value) : v.type === 'float' ? Math.fround(v.value) : v.value;
    if (Array.isArray(v)) return v.map(plain);
    if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
    return v;
  };
  return (
    JSON.stringify(
      source.map(([cidr, r]) => ({ [cidr]: plain(r) })),
      null,
      2,
    ) + '\n'
  );
}

/** Replaces the bytes of `marker` (which must occur once) in `buf`. */
function patch(buf: Buffer, marker: string, bytes: number[]): Buffer {
  const out = Buffer.from(buf);
  const at = out.indexOf(marker);
  if (at < 0 || out.indexOf(marker, at + 1) >= 0) throw new Error(`marker ${marker} not found once`);
  Buffer.from(bytes).copy(out, at);
  return out;
}

/**
 * Databases broken in one way each. Every one gives InvalidDatasetError at
 * open or at lookup, except `tree-cycle.mmdb`, whose loop only `verify()`
 * can see (a lookup walks at most 128 steps and finds no data).
 */
function badDatabases(): Record<string, Buffer> {
  const good = build('GeoIP2-City', CITY);
  const nodeCount = new MmdbFile(good, 'fixture').metadata.nodeCount;
  const record = (buf: Buffer, node: number, bit: number) => buf.readUIntBE(node * 6 + bit * 3, 3); // 24-bit records
  const pastData = Buffer.from(good);
  for (let n = 0; n < nodeCount; n++)
    for (const bit of [0, 1]) if (record(good, n, bit) > nodeCount) pastData.writeUIntBE(0xffffff, n * 6 + bit * 3, 3);
  const cycle = Buffer.from(good);
  cycle.writeUIntBE(0, 6, 3); // node 1's left record points back to the root
  // Databases with one record for 0.0.0.0/1 (all IPv4 lookups below 128.0.0.0).
  const one = (value: WritableValue) => build('GeoIP2-City', [['0.0.0.0/1', { country: value }]]);
  let nested: WritableValue = 'bottom';
  for (let i = 0; i < 40; i++) nested = [nested];
  return {
    // Cut in the middle of the search tree: no metadata.
    'truncated.mmdb': good.subarray(0, Math.floor((nodeCount * 6) / 2)),
    // Every data record of the tree points far past the data section.
    'tree-points-past-data.mmdb': pastData,
    'tree-cycle.mmdb': cycle,
    // A string whose bytes are not UTF-8.
    'invalid-utf8.mmdb': patch(one({ iso_code: 'QQQQQQ' }), 'QQQQQQ', [0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0]),
    // Arrays nested 40 deep (the decoder stops at 32).
    'deep-nesting.mmdb': one({ deep: nested }),
    // A map that claims 16 million entries in a few bytes.
    'map-size-past-end.mmdb': claimHugeMap(one({ zz: 'v' })),
  };
}

/** Rewrites the control byte of the one-entry map `{ zz: 'v' }` to claim 65 821 + 2^24 - 1 entries. */
function claimHugeMap(buf: Buffer): Buffer {
  const key = Buffer.from([0x42, 0x7a, 0x7a]); // the string "zz"
  const at = buf.indexOf(key);
  if (at < 1 || buf[at - 1] !== 0xe1 || buf.indexOf(key, at + 1) >= 0) throw new Error('map { zz } not found once');
  // 0xe1 is a map of one entry; 0xff a map whose size is in the next three
  // bytes, here 0xffffff (over the key's bytes).
  const out = Buffer.from(buf);
  out[at - 1] = 0xff;
  out.fill(0xff, at, at + 3);
  return out;
}

/** Every fixture file, by path relative to fixtures/. */
export function fixtureFiles(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const f of Object.values(FIXTURES)) {
    files.set(`source-data/${f.name}.json`, Buffer.from(sourceJson(f.source)));
    files.set(`test-data/${f.name}.mmdb`, build(f.type, f.source));
  }
  for (const [name, buf] of Object.entries(badDatabases())) files.set(`bad-data/${name}`, buf);
  return files;
}

export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const sub of ['source-data', 'test-data', 'bad-data']) rmSync(join(FIXTURES_DIR, sub), { recursive: true, force: true });
  let bytes = 0;
  const files = fixtureFiles();
  for (const [rel, buf] of files) {
    const path = join(FIXTURES_DIR, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, buf);
    bytes += buf.length;
  }
  console.log(`wrote ${files.size} files, ${bytes} bytes, under ${FIXTURES_DIR}`);
}
