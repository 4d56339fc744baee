/**
 * `Engine.explain()` over the 70 shared feeds built into a dataset
 * directory: its record is lookup()'s, and its lists agree with the list
 * files themselves, read here line by line (the plain lists: an address
 * or a CIDR block first on each line): addresses drawn from each file are
 * explained as listed by it, within a range that holds them, and every
 * list an explanation names as holding an address holds it in its file.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type Engine, type Explanation } from '../../src/index.js';
import { createServer } from '../../src/server/index.js';
import { parseCidr, parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import tzLookup from '@photostructure/tz-lookup';
import maxmind from 'maxmind';
import { wordsType } from '../../src/compile/asn/classify.js';
import { ACCESS_PLACES, HOSTING_SHARE } from '../../src/dataset/layout.js';
import { hasSharedData, prng, ROOT, seed, SHARED_DATA } from '../helpers/env.js';
import { SHARED_FEEDS } from '../helpers/feeds.js';
import { sharedFeedsData } from '../helpers/shared-build.js';

const d = hasSharedData() ? describe : describe.skip;
/** The shipped hosting-ASN list, read from its file. */
const HOSTING_LIST = new Set<number>(
  (JSON.parse(readFileSync(join(ROOT, 'src/compile/asn/hosting-asns.json'), 'utf8')) as { asns: number[] }).asns,
);

/** A list file's blocks, IPv4 and IPv6, as [version, first, last], read as a plain list: the first field of each line that is not a comment (less a proxy's scheme and port). */
function blocks(file: string): [4 | 6, bigint, bigint][] {
  const out: [4 | 6, bigint, bigint][] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    // Proxy lists write `scheme://address:port`.
    const text = line
      .trim()
      .split(/[\s,;#]/)[0]
      ?.replace(/^[a-z0-9]+:\/\//i, '')
      .replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1');
    if (text === '' || text === undefined) continue;
    const cidr = text.includes('/') ? parseCidr(text) : null;
    const ip = cidr?.address ?? parseIp(text);
    if (ip == null) continue;
    const width = ip.version === 4 ? 32n : 128n;
    const prefix = BigInt(cidr?.prefix ?? Number(width));
    const first = (toBigInt(ip) >> (width - prefix)) << (width - prefix);
    out.push([ip.version, first, first + (1n << (width - prefix)) - 1n]);
  }
  return out;
}

/** A random IPv4 address, or (`v6`) one of the IPv6 space allocated so far (2000:: to 2c0f::). */
const drawAddress = (next: () => number, v6: boolean) =>
  v6
    ? formatIp(6, [0x20000000 + Math.floor(next() * 0x0c100000), Math.floor(next() * 2 ** 32), 0, 1])
    : formatIp(4, [0, 0, 0, Math.floor(next() * 2 ** 32)]);

/** Without what moves between two calls: the clock (`time_zone.current_time`) and the count of lookups, refreshed each minute (and a process's own). */
const timeless = (v: unknown) => JSON.stringify(v, (k, x) => (k === 'current_time' || k === 'count' ? null : x));

d('explain() over the shared feeds', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await open({ data: (await sharedFeedsData()).dir });
  }, 300_000);
  afterAll(() => engine?.close());

  it("answers lookup()'s record, and the lists that hold an address as their files hold it", () => {
    const next = prng(seed());
    const plain = SHARED_FEEDS.filter((f) => f.format === 'list' && !('options' in f));
    const files = new Map(plain.map((f) => [f.name, blocks(join(SHARED_DATA, 'feeds', f.source))]));
    const holds = (name: string, version: 4 | 6, x: bigint) => files.get(name)!.some(([v, lo, hi]) => v === version && lo <= x && x <= hi);
    let explained = 0;
    let named = 0;
    const wrong: string[] = [];
    for (const feed of plain) {
      const list = files.get(feed.name)!;
      for (let k = 0; k < Math.min(3, list.length); k++) {
        const [version, lo, hi] = list[Math.floor(next() * list.length)];
        const x = lo + ((hi - lo) * BigInt(Math.floor(next() * 1000))) / 1000n;
        const ip = formatIp(version, fromBigInt(version, x));
        let e;
        try {
          e = engine.explain(ip);
        } catch {
          // A private or reserved address a list holds: lookup() answers an error, and so does explain().
          expect(() => engine.lookup(ip)).toThrow();
          continue;
        }
        explained++;
        if (timeless(e.record) !== timeless(engine.lookup(ip))) wrong.push(`${ip}: the record differs from lookup()'s`);
        const mine = e.lists?.find((l) => l.name === feed.name);
        if (mine === undefined || !mine.listed) wrong.push(`${ip}: ${feed.name}'s file holds it, explain() says ${JSON.stringify(mine)}`);
        for (const l of e.lists ?? []) {
          if (!l.listed || !files.has(l.name)) continue;
          named++;
          if (!holds(l.name, version, x)) wrong.push(`${ip}: explain() names ${l.name} (${l.range}), its file does not hold it`);
        }
      }
    }
    console.log(
      `explain: ${explained} addresses drawn from ${plain.length} plain lists, ${named} lists named as holding them checked against their files`,
    );
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(explained).toBeGreaterThan(100);
  });

  it('iprecord explain <ip> --data dir prints the same as JSON; an address without a record exits 1', async () => {
    const { dir } = await sharedFeedsData();
    const ip = formatIp(4, fromBigInt(4, blocks(join(SHARED_DATA, 'feeds/tor/tor_exits.ipset')).find(([v]) => v === 4)![1]));
    const cli = join(ROOT, 'dist', 'cli.js');
    const printed = JSON.parse(
      execFileSync(process.execPath, [cli, 'explain', ip, '--data', dir, '--quiet'], { encoding: 'utf8' }),
    ) as Explanation;
    expect(timeless({ ...printed, sources: null })).toBe(timeless({ ...engine.explain(ip), sources: null }));
    const r = spawnSync(process.execPath, [cli, 'explain', '10.1.2.3', '--data', dir, '--quiet'], { encoding: 'utf8' });
    expect([r.status, r.stderr.trim()]).toEqual([1, 'iprecord: 10.1.2.3: 10.1.2.3 is a private IP address']);
  });

  it('GET /explain/<ip> answers the same over HTTP as a request of the quota, JSONP as documented, naming no path of the server', async () => {
    const { dir } = await sharedFeedsData();
    const QUOTA = 3;
    const server = await createServer({
      engine,
      keys: {
        keys: [
          { key: 'explain-key-1', plan: 'free', quota: QUOTA },
          { key: 'explain-key-2', plan: 'free' },
        ],
      },
    });
    const { port } = await server.listen(0, '127.0.0.1');
    try {
      const ip = formatIp(4, fromBigInt(4, blocks(join(SHARED_DATA, 'feeds/tor/tor_exits.ipset')).find(([v]) => v === 4)![1]));
      const get = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${port}${path}`);
        const text = await r.text();
        return { status: r.status, type: r.headers.get('content-type'), text };
      };
      const expected = engine.explain(ip);
      for (let i = 0; i < QUOTA - 1; i++) {
        const r = await get(`/explain/${ip}?api-key=explain-key-1`);
        expect(r.status).toBe(200);
        const body = JSON.parse(r.text) as Explanation;
        expect(timeless({ ...body, sources: null })).toBe(timeless({ ...expected, sources: null }));
        // Every file by its name: the data directory and the database files' folders are nowhere in the answer.
        expect(r.text).not.toContain(dir);
        expect(body.sources.databases.map((d) => d.path)).toEqual(
          expected.sources.databases.map((d) => (isAbsolute(d.path) ? basename(d.path) : d.path)),
        );
        expect(body.sources.threat?.path).toBe(basename(expected.sources.threat!.path));
      }
      // Wrapped as every JSON answer is; the third request of the quota.
      const wrapped = await get(`/explain/${ip}?api-key=explain-key-1&callback=show`);
      expect([wrapped.status, wrapped.type]).toEqual([200, 'application/javascript; charset=utf-8']);
      expect(wrapped.text).toMatch(/^show\(\{"ip":/);
      // The quota is spent: explanations and lookups alike are refused.
      const past = await get(`/explain/${ip}?api-key=explain-key-1`);
      expect(past).toEqual(await get(`/${ip}?api-key=explain-key-1`));
      expect(past.status).toBe(403);
      expect((await get(`/explain/${ip}`)).status).toBe(401);
      // An address without a record is answered as its lookup is.
      expect(await get('/explain/10.1.2.3?api-key=explain-key-2')).toEqual(await get('/10.1.2.3?api-key=explain-key-2'));
    } finally {
      await server.close();
    }
  });

  it('gives the sources, and each listing with its range, first and last seen and download day', () => {
    const torExit = blocks(join(SHARED_DATA, 'feeds/tor/tor_exits.ipset')).find(([v]) => v === 4)!;
    const ip = formatIp(4, fromBigInt(4, torExit[1]));
    const e = engine.explain(ip);
    console.log(
      `explain(${ip}):\n${JSON.stringify({ ...e, record: { ip: e.record.ip, asn: e.record.asn, threat: e.record.threat }, sources: { ...e.sources, databases: e.sources.databases.map((db) => db.from) } }, null, 2)}`,
    );
    expect(e.record.threat.is_tor).toBe(true);
    const tor = e.lists!.find((l) => l.name === 'tor_exits')!;
    expect(tor).toMatchObject({ categories: ['tor'], listed: true });
    expect(tor.range).toMatch(/^[\d.]+\/\d+$|^[\d.]+ - [\d.]+$/);
    expect(tor.first_seen <= tor.last_seen && tor.last_seen === tor.downloaded).toBe(true);
    // The installed packages state their data's licence (DB-IP Lite: CC BY 4.0).
    expect(e.sources.databases.map((db) => db.licence)).toEqual(e.sources.databases.map(() => 'CC-BY-4.0'));
    expect(e.sources.timeZones.tzdata).toMatch(/^\d{4}[a-z]$/);
    // Without feeds, nothing keeps the lists' history.
    expect(engine.explain('8.8.8.8').lists).not.toBeNull();
  });
});

describe('explain() with a second location database (compare)', () => {
  it("sets its country beside the record's, as the database read by maxmind says, for random addresses; the CLI's --compare the same", async () => {
    const second = join(ROOT, 'node_modules/@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
    const engine = await open({ compare: second });
    const reader = await maxmind.open(second);
    try {
      const next = prng(seed());
      let compared = 0;
      let agreed = 0;
      const wrong: string[] = [];
      for (let i = 0; i < 3000; i++) {
        const ip = drawAddress(next, i % 4 === 3);
        let e: Explanation;
        try {
          e = engine.explain(ip);
        } catch {
          continue;
        }
        const code = (reader.get(ip) as { country_code?: string } | null)?.country_code ?? null;
        const want = [
          {
            source: second,
            country_code: code,
            agrees: code === null || e.record.country_code === null ? null : code === e.record.country_code,
          },
        ];
        if (JSON.stringify(e.agreement) !== JSON.stringify(want))
          wrong.push(`${ip}: ${JSON.stringify(e.agreement)}, maxmind ${JSON.stringify(want)}`);
        if (want[0].agrees !== null) {
          compared++;
          if (want[0].agrees) agreed++;
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      console.log(
        `country of the default data and of geo-whois-asn-country: ${agreed} of ${compared} addresses agree (${((100 * agreed) / compared).toFixed(1)} %)`,
      );
      expect(compared).toBeGreaterThan(1000);
      const out = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'explain', '8.8.8.8', '--compare', second], {
        encoding: 'utf8',
        env: { ...process.env, IPRECORD_QUIET: '1' },
      });
      expect(JSON.parse(out.stdout).agreement).toEqual(engine.explain('8.8.8.8').agreement);
      // A database that is not there, or not a location database, is refused at open(), named.
      await expect(open({ compare: join(ROOT, 'no-such.mmdb') })).rejects.toThrow(/Cannot read database .*no-such\.mmdb: ENOENT/);
      await expect(open({ compare: join(ROOT, 'package.json') })).rejects.toThrow(/package\.json is not an MMDB file/);
      // A device or a folder, before any compile is begun (and said on standard error).
      const refused = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'explain', '8.8.8.8', '--compare', '/dev/zero'], {
        encoding: 'utf8',
      });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain('iprecord: Cannot read database /dev/zero: /dev/zero is not a regular file\n');
      expect(refused.stderr).not.toMatch(/compiling/);
      await expect(open({ compare: ROOT })).rejects.toThrow(`Cannot read database ${ROOT}: ${ROOT} is a directory`);
      // Without it, no agreement is told.
      const plain = await open();
      expect(plain.explain('8.8.8.8').agreement).toBeNull();
      plain.close();
    } finally {
      engine.close();
    }
  });
});

describe('explain() without threat feeds', () => {
  it('answers the record and no lists (null)', async () => {
    const engine = await open();
    try {
      const e = engine.explain('8.8.8.8');
      expect(e.lists).toBeNull();
      expect(timeless(e.record)).toBe(timeless(engine.lookup('8.8.8.8')));
      expect(() => engine.explain('10.0.0.1')).toThrow(/private/i);
    } finally {
      engine.close();
    }
  });
});

/**
 * How each record's `asn.type` was decided and where its zone came from,
 * for random public IPv4 and IPv6 addresses: each rule gives the type it
 * names, and only where the rules before it say nothing (a name stating a
 * type by its words is never weighed by the data); the places decide
 * exactly at ACCESS_PLACES, the datacenter share at HOSTING_SHARE; a zone
 * "from the coordinates" is the zone tz-lookup finds there, and one
 * chosen otherwise is not.
 */
function checkProvenance(engine: Engine, feeds: boolean, count: number, more: readonly string[] = []): Record<string, number> {
  const next = prng(seed());
  const rules: Record<string, number> = {};
  const wrong: string[] = [];
  const drawn = Array.from({ length: count }, (_, i) => drawAddress(next, i % 5 === 4));
  for (const ip of [...drawn, ...more]) {
    let e: Explanation;
    try {
      e = engine.explain(ip);
    } catch {
      continue;
    }
    const { asn, latitude, longitude, time_zone } = e.record;
    const t = e.asn_type;
    if ((asn === null) !== (t === null)) wrong.push(`${ip}: asn ${JSON.stringify(asn)}, asn_type ${JSON.stringify(t)}`);
    if (asn !== null && t !== null) {
      rules[t.rule] = (rules[t.rule] ?? 0) + 1;
      const worded = asn.name === null ? null : wordsType(asn.name);
      const weighed = t.rule === 'datacenter' || t.rule === 'places' || t.rule === 'default' || t.rule === 'list';
      const listed = HOSTING_LIST.has(Number(asn.asn.slice(2)));
      const ok =
        t.type === asn.type &&
        {
          none: asn.type === null,
          registry: true,
          brand: true,
          name: worded === asn.type,
          datacenter: asn.type === 'hosting',
          places: asn.type === 'isp',
          default: asn.type === 'business',
          list: asn.type === 'hosting' && listed,
        }[t.rule] &&
        (!weighed || (worded === null && t.places !== null)) &&
        (t.rule !== 'places' || t.places! >= ACCESS_PLACES) &&
        // The shipped hosting list decides before the places do.
        ((t.rule !== 'places' && t.rule !== 'default') || !listed) &&
        (t.rule !== 'default' || t.places! < ACCESS_PLACES) &&
        (t.rule !== 'datacenter' || (feeds && t.datacenter_share! >= HOSTING_SHARE)) &&
        (t.datacenter_share === null || t.rule === 'datacenter' || t.datacenter_share < HOSTING_SHARE);
      if (!ok) wrong.push(`${ip}: ${JSON.stringify(asn)} ${JSON.stringify(t)} (its name's words: ${worded})`);
    }
    if ((time_zone === null) !== (e.time_zone === null) || (time_zone !== null && time_zone.name !== e.time_zone!.name))
      wrong.push(`${ip}: ${JSON.stringify(time_zone)} ${JSON.stringify(e.time_zone)}`);
    else if (e.time_zone !== null && latitude !== null && longitude !== null && e.time_zone.from !== 'data') {
      rules[`zone from ${e.time_zone.from}`] = (rules[`zone from ${e.time_zone.from}`] ?? 0) + 1;
      const there = tzLookup(latitude, longitude);
      if ((e.time_zone.from === 'coordinates') !== (there === e.time_zone.name))
        wrong.push(`${ip}: ${e.time_zone.name} from ${e.time_zone.from}, tz-lookup ${there} at ${latitude},${longitude}`);
    }
  }
  expect(wrong.slice(0, 5)).toEqual([]);
  return rules;
}

d('explain() of asn.type and time_zone over the shared feeds', () => {
  it('says how each was decided, as the rules read again say', async () => {
    const engine = await open({ data: (await sharedFeedsData()).dir });
    try {
      // explain() reads the build's seen.bin (10 MB with the shared feeds) each call: fewer addresses, half of them on a
      // datacenter list.
      const next = prng(seed() + 1);
      const listed = blocks(join(SHARED_DATA, 'feeds/datacenter/x4bnet/ipv4.txt')).filter(([v]) => v === 4);
      const more = Array.from({ length: 200 }, () => {
        const [, lo, hi] = listed[Math.floor(next() * listed.length)];
        return formatIp(4, fromBigInt(4, lo + BigInt(Math.floor(next() * Number(hi - lo + 1n)))));
      });
      const rules = checkProvenance(engine, true, 200, more);
      console.log(`with the shared feeds: ${JSON.stringify(rules)}`);
      expect(rules.datacenter).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  });
});

describe('explain() of asn.type and time_zone on the default data', () => {
  it('says how each was decided, as the rules read again say', async () => {
    const engine = await open();
    try {
      const rules = checkProvenance(engine, false, 4000);
      console.log(`default data: ${JSON.stringify(rules)}`);
      for (const rule of ['name', 'places', 'default', 'zone from coordinates']) expect(rules[rule], rule).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  });
});
