/**
 * The MMDB exports in MaxMind's schemas (`iprecord export --schema`) read
 * by MaxMind's typed readers, Python's (Debian's python3-geoip2) and Node's
 * (`@maxmind/geoip2-node` 6, `readers/geoip2-node.ts`), through the
 * method of each schema (`city()`, `asn()`, `anonymous_ip()`,
 * `enterprise()`), not by iprecord's: `npm run check:maxmind` (`node
 * --import tsx test/engines/maxmind-schemas.ts`, about 5 minutes on 2
 * cores); CI runs it with `--fixtures`.
 *
 * - The fixtures' data (with MaxMind's Anonymous-IP fixture): all four
 *   schemas, each range's first, a random and its last address (IPv4 also
 *   as ::ffff:, ::a.b.c.d and 64:ff9b::).
 * - The default data with the 70 shared feeds compiled in: the Enterprise
 *   file (City's members, ASN's and the anonymity flags in one), for
 *   100 000 random addresses inside announced networks (half of each
 *   family); `--all` writes and reads all four schemas of it, `--fixtures`
 *   leaves it out (seconds, for the edit loop).
 * - Both: `fixtures/logs/address-forms.txt` and private addresses.
 *
 * - nginx with Debian's geoip2 module (`nginx.ts`) over the fixtures' City
 *   and Anonymous-IP files and the default data's Enterprise file (5 000
 *   of its addresses): each header as lookup() answers.
 *
 * Every member the reader gives must equal what `lookup()` answers for the
 * address (country, continent, EU membership, subdivision code and name,
 * city, coordinates, zone, postal, ASN number and name, each flag), and
 * the reader must find no record where `lookup()` answers an error; where
 * the record has none of a schema's members the file holds no network (the
 * reader's "not found", every member empty). Each file's `database_type`
 * must pass the rules Elasticsearch's processor and Logstash's filter
 * apply to it (`TYPE_RULES`). Prints what it checked; exits 1 on a
 * difference.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { isIP } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { distinctAddresses } from '../../bench/mix.js';
import { buildDataset } from '../../src/compile/feeds/build.js';
import type { Engine } from '../../src/engine/engine.js';
import { exportDataset } from '../../src/export/index.js';
import { DATABASE_TYPES, type MaxmindSchema } from '../../src/export/maxmind.js';
import { open, type IpRecord } from '../../src/index.js';
import { readMetadata } from '../../src/mmdb/metadata.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { hasSharedData, seed } from '../helpers/env.js';
import { sharedFeedConfig } from '../helpers/feeds.js';
import { SMALL, testDb } from '../helpers/maxmind.js';
import { ADDRESS_FORMS } from '../helpers/recipes.js';
import { rangeAddresses } from '../helpers/range-addresses.js';
import { hasNginx, nginxHeaders, type Variables } from './nginx.js';
import { geoip2NodeAnswers } from './readers/geoip2-node.js';

const PYTHON = '/usr/bin/python3';
const READER = join(import.meta.dirname, 'readers', 'python', 'geoip2_read.py');
const SCHEMAS: readonly MaxmindSchema[] = ['city', 'asn', 'anonymous-ip', 'enterprise'];

/**
 * What a reader that follows each engine asks of a file's `database_type`
 * to read it as a schema: Elasticsearch's ingest geoip processor
 * (IpDataLookupFactories.getMaxmindDatabase: the type ends with `-City`,
 * `-ASN`, `-Anonymous-IP`, `-Enterprise`), Logstash's geoip filter
 * (Database.fromDatabaseType: the type contains `City`, `GeoLite2-ASN`,
 * `Enterprise`, `GeoIP2-Anonymous-IP`, tried in its order: City before
 * Enterprise), and geoip2's readers (the method's type in the file's).
 */
const TYPE_RULES: Readonly<Record<MaxmindSchema, readonly [string, (type: string) => boolean][]>> = {
  city: [
    ['Elasticsearch', (t) => t.endsWith('-City')],
    ['Logstash', (t) => t.includes('City')],
    ['geoip2', (t) => t.includes('City')],
  ],
  asn: [
    ['Elasticsearch', (t) => t.endsWith('-ASN')],
    ['Logstash', (t) => !t.includes('City') && !t.includes('Country') && !t.includes('GeoIP2-Domain') && t.includes('GeoLite2-ASN')],
    ['geoip2', (t) => t.includes('GeoLite2-ASN')],
  ],
  'anonymous-ip': [
    ['Elasticsearch', (t) => t.endsWith('-Anonymous-IP')],
    ['Logstash', (t) => !/City|Country|GeoIP2-Domain|GeoLite2-ASN|GeoIP2-ISP|Enterprise/.test(t) && t.includes('GeoIP2-Anonymous-IP')],
    ['geoip2', (t) => t.includes('GeoIP2-Anonymous-IP')],
  ],
  enterprise: [
    ['Elasticsearch', (t) => t.endsWith('-Enterprise')],
    ['Logstash', (t) => !/City|Country|GeoIP2-Domain|GeoLite2-ASN|GeoIP2-ISP/.test(t) && t.includes('Enterprise')],
    ['geoip2', (t) => t.includes('Enterprise')],
  ],
};

/** MaxMind's `user_type` for each `asn.type`, as docs/exports.md states it. */
const USER_TYPES: Record<string, string> = {
  isp: 'residential',
  hosting: 'hosting',
  business: 'business',
  education: 'college',
  government: 'government',
};

/** What the reader gives where the file holds no network: every member empty, flags false. */
const NOT_FOUND = { flag: false, value: null };

/** The members a schema's model gives, from lookup()'s record (null where it answers an error). */
function expected(schema: MaxmindSchema, r: IpRecord | null): Record<string, unknown> | null {
  if (r === null) return null;
  const city = {
    continent_code: r.continent_code,
    continent_name: r.continent_name,
    country_code: r.country_code,
    country_name: r.country_name,
    // A file has no null: a reader answers false where lookup() knows no country (null).
    is_eu: r.is_eu ?? false,
    region_code: r.region_code,
    region: r.region,
    city: r.city,
    latitude: r.latitude,
    longitude: r.longitude,
    time_zone: r.time_zone?.name ?? null,
    postal: r.postal,
  };
  const t = r.threat;
  const anonymity = {
    is_anonymous: t.is_anonymous,
    is_anonymous_vpn: t.is_vpn === true,
    is_hosting_provider: t.is_datacenter,
    is_public_proxy: t.is_proxy,
    is_residential_proxy: false,
    is_tor_exit_node: t.is_tor,
  };
  const asn = { asn: r.asn === null ? null : Number(r.asn.asn.slice(2)), asn_name: r.asn?.name ?? null };
  if (schema === 'city') return city;
  if (schema === 'asn') return asn;
  if (schema === 'anonymous-ip') return anonymity;
  const carrier = r.carrier ?? null;
  return {
    ...city,
    ...anonymity,
    ...asn,
    organization: r.asn?.name ?? null,
    domain: r.asn?.domain ?? null,
    user_type: carrier !== null ? 'cellular' : r.asn?.type == null ? null : USER_TYPES[r.asn.type],
    connection_type: carrier === null ? null : 'Cellular',
    mobile_country_code: carrier?.mcc ?? null,
    mobile_network_code: carrier?.mnc ?? null,
  };
}

/** The reader's answer where it found nothing: each member as `NOT_FOUND` has it. */
const empty = (want: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(want).map(([k, v]) => [k, typeof v === 'boolean' ? NOT_FOUND.flag : NOT_FOUND.value]));

const failures: string[] = [];

/** Exports `schemas` of the engine's data into `dir`, reads `ips` with geoip2 and compares with lookup(). */
async function check(
  name: string,
  engine: Engine,
  dir: string,
  schemas: readonly MaxmindSchema[],
  ips: readonly string[],
): Promise<{ files: Partial<Record<MaxmindSchema, string>>; records: (IpRecord | null)[] }> {
  const files: string[] = [];
  const written: Partial<Record<MaxmindSchema, string>> = {};
  for (const schema of schemas) {
    const out = join(dir, `${name.replace(/\W+/g, '-')}-${schema}.mmdb`);
    const started = performance.now();
    const r = await exportDataset(engine, { format: 'mmdb', schema, out });
    const type = readMetadata(readFileSync(out), out).metadata.databaseType;
    if (type !== DATABASE_TYPES[schema]) failures.push(`${name} ${schema}: database_type ${type}`);
    for (const [reader, rule] of TYPE_RULES[schema])
      if (!rule(type)) failures.push(`${name} ${schema}: ${reader} would not read ${type} as ${schema}`);
    console.log(
      `${name} ${schema}: ${(r.bytes / 1e6).toFixed(1)} MB, ${r.rows} networks, written in ${((performance.now() - started) / 1000).toFixed(1)} s (database_type ${type})`,
    );
    files.push(`${schema}=${out}`);
    written[schema] = out;
  }
  const records = ips.map((ip) => {
    try {
      return engine.lookup(ip);
    } catch {
      return null;
    }
  });
  const lines = execFileSync(PYTHON, [READER, ...files], { input: ips.join('\n') + '\n', maxBuffer: 1 << 30 })
    .toString()
    .trimEnd()
    .split('\n');
  const python = lines.map((line) => JSON.parse(line) as Record<string, Record<string, unknown> | null> & { standard: boolean });
  for (const schema of schemas) {
    compare(
      `${name} ${schema}`,
      'geoip2 (Python)',
      schema,
      ips,
      records,
      (i) => python[i][schema],
      (i) => python[i].standard,
    );
    const node = geoip2NodeAnswers(schema, written[schema]!, ips);
    // Node's own parser takes a zone id (fe80::1%eth0), which iprecord refuses: the reader's own reading.
    const standard = (k: number) => isIP(ips[k]) !== 0 && !ips[k].includes('%');
    compare(`${name} ${schema}`, '@maxmind/geoip2-node', schema, ips, records, (k) => node[k], standard);
  }
  return { files: written, records };
}

/** The variables docs/exports.md's nginx configuration sets from a City file, an Anonymous-IP file, and both from an Enterprise file. */
const CITY_VARS = {
  country: 'country iso_code',
  region: 'subdivisions 0 iso_code',
  city: 'city names en',
  latitude: 'location latitude',
  longitude: 'location longitude',
  zone: 'location time_zone',
  postal: 'postal code',
  eu: 'country is_in_european_union',
};
const FLAG_VARS = {
  anonymous: 'is_anonymous',
  vpn: 'is_anonymous_vpn',
  hosting: 'is_hosting_provider',
  proxy: 'is_public_proxy',
  tor: 'is_tor_exit_node',
};
const traits = (vars: Record<string, string>) => Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, `traits ${v}`]));

/**
 * A double as nginx's ngx_sprintf writes it with `%.5f` (the geoip2 module's format): the fraction scaled, 0.5 added and
 * truncated in double arithmetic, which rounds some values otherwise than toFixed (-0.107875 is -0.10788 there).
 */
function nginxFixed(x: number): string {
  const f = Math.abs(x);
  let whole = Math.trunc(f);
  let frac = Math.trunc((f - whole) * 100_000 + 0.5);
  if (frac === 100_000) {
    whole++;
    frac = 0;
  }
  return `${x < 0 ? '-' : ''}${whole}.${String(frac).padStart(5, '0')}`;
}

/** The headers nginx sets for lookup()'s record: nothing where it answers an error, a flag as 1 where true, coordinates to 5 places. */
function headersOf(r: IpRecord | null, city: boolean, flags: boolean): Record<string, string> {
  if (r === null) return {};
  const t = r.threat;
  const all: Record<string, string | number | null | false> = {
    ...(city
      ? {
          country: r.country_code,
          region: r.region_code,
          city: r.city,
          latitude: r.latitude === null ? null : nginxFixed(r.latitude),
          longitude: r.longitude === null ? null : nginxFixed(r.longitude),
          zone: r.time_zone?.name ?? null,
          postal: r.postal,
          eu: r.is_eu === true && '1',
        }
      : {}),
    ...(flags
      ? {
          anonymous: t.is_anonymous && '1',
          vpn: t.is_vpn === true && '1',
          hosting: t.is_datacenter && '1',
          proxy: t.is_proxy && '1',
          tor: t.is_tor && '1',
        }
      : {}),
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== null && v !== false)) as Record<string, string>;
}

/** nginx over the files, asked for each address: its headers against lookup()'s record. */
/** `nginxCompare`, a failure to start or answer counted as a difference. */
async function nginxCheck(...args: Parameters<typeof nginxCompare>) {
  try {
    await nginxCompare(...args);
  } catch (e) {
    failures.push(`nginx ${args[0]}: ${(e as Error).message}`);
  }
}

async function nginxCompare(
  name: string,
  dir: string,
  files: readonly (readonly [string, Variables])[],
  ips: readonly string[],
  want: Record<string, string>[],
) {
  const got = await nginxHeaders(dir, files, ips);
  let wrong = 0;
  let set = 0;
  got.forEach((headers, i) => {
    if (Object.keys(headers).length > 0) set++;
    if (!isDeepStrictEqual(headers, want[i]) && wrong++ < 3)
      failures.push(`nginx ${name} ${ips[i]}: headers ${JSON.stringify(headers)}, lookup() ${JSON.stringify(want[i])}`);
  });
  console.log(`nginx (ngx_http_geoip2_module) over ${name}: ${ips.length} requests, ${set} with headers, ${wrong} different`);
}

/**
 * Counts the addresses whose members a reader gives differently from lookup(): `got` its answer for the i-th address,
 * `standard` whether its own address parser takes the text (a C parser may read 8.8.8 as 8.8.0.8: its own reading).
 */
function compare(
  what: string,
  reader: string,
  schema: MaxmindSchema,
  ips: readonly string[],
  records: readonly (IpRecord | null)[],
  got: (i: number) => Record<string, unknown> | null,
  standard: (i: number) => boolean,
): void {
  let wrong = 0;
  let found = 0;
  let errors = 0;
  let own = 0;
  ips.forEach((ip, i) => {
    const answer = got(i);
    const want = expected(schema, records[i]);
    if (!standard(i) && answer !== null && want === null) return void own++;
    if (want === null) errors++;
    if (answer !== null) found++;
    const ok = want === null ? answer === null : isDeepStrictEqual(answer ?? empty(want), want);
    if (!ok && wrong++ < 3) failures.push(`${what} ${ip}: ${reader} ${JSON.stringify(answer)}, lookup() ${JSON.stringify(want)}`);
  });
  console.log(
    `${what}: ${reader} read ${ips.length} addresses (${errors} where lookup() answers an error, ${found} found; ${own} texts its parser reads its own way), ${wrong} different`,
  );
}

const ODD = ['10.0.0.1', '192.168.1.1', '127.0.0.1', 'fe80::1', '::1', 'fc00::1', 'not an address', ...ADDRESS_FORMS];

if (spawnSync(PYTHON, ['-c', 'import geoip2.database'], { stdio: 'ignore' }).status !== 0) {
  console.log('MaxMind schemas: skipped, python3-geoip2 is not installed (apt install python3-geoip2)');
  process.exit(process.env.IPRECORD_REQUIRE_SHARED_DATA === '1' ? 1 : 0);
}
const dir = mkdtempSync(join(tmpdir(), 'iprecord-maxmind-schemas-'));
try {
  const fixtures = await open({ ...SMALL, anonymous: [testDb(FIXTURES_DIR, 'GeoIP2-Anonymous-IP-Fixture')] });
  const ranged = await rangeAddresses(fixtures, dir);
  const small = await check('fixtures', fixtures, dir, SCHEMAS, [...ranged, ...ODD]);
  fixtures.close();
  const withNginx = hasNginx();
  if (withNginx) {
    // The ranges' addresses and the private ones (ODD's first six; nginx is given canonical addresses only).
    const asked = [...ranged, ...ODD.slice(0, 6)];
    const want = small.records.slice(0, asked.length).map((r) => headersOf(r, true, true));
    const files = [
      [small.files.city!, CITY_VARS],
      [small.files['anonymous-ip']!, FLAG_VARS],
    ] as const;
    await nginxCheck('the fixtures City and Anonymous-IP files', dir, files, asked, want);
  } else {
    console.log('nginx: skipped, nginx or its geoip2 module is not installed (apt install nginx libnginx-mod-http-geoip2)');
    if (process.env.IPRECORD_REQUIRE_SHARED_DATA === '1') failures.push('nginx and libnginx-mod-http-geoip2 are required');
  }
  if (process.argv.includes('--fixtures')) console.log('MaxMind schemas of the default data: left out (--fixtures)');
  else if (hasSharedData()) {
    const data = join(dir, 'shared-feeds');
    await buildDataset(sharedFeedConfig(), data, data);
    const engine = await open({ data });
    const s = seed();
    const ips = [...distinctAddresses(50_000, s, 4), ...distinctAddresses(50_000, s + 1, 6), ...ODD];
    const big = await check(
      'default data with the shared feeds',
      engine,
      dir,
      process.argv.includes('--all') ? SCHEMAS : ['enterprise'],
      ips,
    );
    engine.close();
    if (withNginx) {
      const sample = ips.slice(0, 2_500).concat(ips.slice(50_000, 52_500));
      const want = sample.map((_, i) => headersOf(big.records[i < 2_500 ? i : 50_000 + i - 2_500], true, true));
      const vars = { ...CITY_VARS, ...traits(FLAG_VARS) };
      await nginxCheck("the default data's Enterprise file", dir, [[big.files.enterprise!, vars]], sample, want);
    }
  } else {
    console.log('MaxMind schemas of the default data: skipped, ../shared/data is not there');
    if (process.env.IPRECORD_REQUIRE_SHARED_DATA === '1') failures.push('../shared/data is required');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(failures.join('\n'));
  process.exit(1);
}
