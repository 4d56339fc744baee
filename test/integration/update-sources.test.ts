/**
 * `iprecord update` refreshing the geo and ASN databases from URLs, served
 * by a real HTTP server on 127.0.0.1: good files (a DB-IP City MMDB written
 * by the MMDB writer, an ASN range CSV, a gzipped GeoLite2 ASN MMDB), then
 * faulted ones (a truncated MMDB, an MMDB of the wrong schema, a CSV shrunk
 * tenfold, HTTP 500, a body that stalls). None replaces good data; an
 * engine watching the directory reloads to new data with no failed lookup.
 */

import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, openSync } from '../../src/index.js';
import { parseCidr } from '../../src/ip/address.js';
import { MmdbWriter } from '../../src/mmdb/writer.js';
import { localSources, sourcePath } from '../../src/compile/origins/local.js';
import { updateSources } from '../../src/compile/origins/update.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { updateDataset, type UpdateOptions } from '../../src/compile/feeds/update.js';
import { ROOT } from '../helpers/env.js';

/** A DB-IP City Lite MMDB: 1.0.0.0/24 in `city` (Australia), Berlin, and 300 more /24 networks. */
function geoMmdb(city: string, epoch: number): Buffer {
  const w = new MmdbWriter({ databaseType: 'dbip-city-lite', description: { en: 'update test' }, languages: ['en'], buildEpoch: epoch });
  const put = (cidr: string, record: Record<string, string | number>) => {
    const c = parseCidr(cidr)!;
    w.insert(c.address.version, c.address.words, c.prefix, record);
  };
  put('1.0.0.0/24', { city, country_code: 'AU', state1: 'Queensland', latitude: -27.5, longitude: 153 });
  put('5.145.128.0/20', { city: 'Berlin', country_code: 'DE', state1: 'Berlin', latitude: 52.5, longitude: 13.4 });
  // Each its own latitude: networks side by side with one record would be one network in the file.
  for (let i = 0; i < 300; i++)
    put(`11.${i >> 8}.${i & 255}.0/24`, {
      city: 'Somewhere',
      country_code: 'US',
      state1: 'California',
      latitude: 37 + i / 1000,
      longitude: -122,
    });
  return w.toBuffer();
}

/** ASN ranges: 1.0.0.0/24 of AS13335, then `rows - 1` more. */
function asnCsv(rows: number): string {
  const lines = ['1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."'];
  for (let i = 1; i < rows; i++)
    lines.push(`12.${i >> 8}.${i & 255}.0,12.${i >> 8}.${i & 255}.255,${64500 + (i % 10)},Example Network ${i % 10}`);
  return lines.join('\n') + '\n';
}

type Route = { status?: number; body?: Buffer; stall?: boolean; lastModified?: string; notModifiedToAny?: boolean };

describe('iprecord update: geo and ASN sources from URLs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-sources-'));
  const routes = new Map<string, Route>();
  let server: Server;
  let base = '';
  const requests: string[] = [];
  const agents: (string | undefined)[] = [];
  const OLD = Date.UTC(2020, 0, 1) / 1000;
  const good = { geo: geoMmdb('South Brisbane', OLD), asn: Buffer.from(asnCsv(200)) };

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url!);
      agents.push(req.headers['user-agent']);
      const r = routes.get(req.url!);
      if (r === undefined) return void res.writeHead(404).end();
      if (r.status !== undefined) return void res.writeHead(r.status).end('failure');
      if (r.notModifiedToAny && (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined))
        return void res.writeHead(304).end();
      const etag = `"${r.body!.length}-${r.body!.subarray(0, 64).toString('hex').length}-${r.body!.readUInt32BE(r.body!.length - 4)}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
      const headers = { 'content-length': String(r.body!.length), etag, 'last-modified': r.lastModified ?? new Date().toUTCString() };
      if (r.stall) {
        res.writeHead(200, headers);
        res.write(r.body!.subarray(0, r.body!.length >> 1));
        return; // and never the rest
      }
      res.writeHead(200, headers).end(r.body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const a = server.address() as { port: number };
    base = `http://127.0.0.1:${a.port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const config = (maxCsvBytes?: number) =>
    parseThreatConfig(
      {
        feeds: [],
        sources: {
          geo: [`${base}/geo.mmdb`],
          asn: [`${base}/asn.csv`, `${base}/asn.mmdb.gz`],
          checks: [{ ip: '1.0.0.1', country: 'AU', asn: 13335 }],
          minNetworks: 2,
          maxCsvBytes,
        },
      },
      dir,
    );
  const opts: UpdateOptions = { retries: 1, backoffMs: 10, sourceTimeoutMs: 1500 };
  const geoFile = () => sourcePath(dir, 'geo', 0, `${base}/geo.mmdb`);
  const lookup = () => {
    const e = openSync({ data: dir });
    try {
      const r = e.lookup('1.0.0.1');
      return `${r.city} ${r.country_code} ${r.asn?.asn} ${r.asn?.name}`;
    } finally {
      e.close();
    }
  };

  it('downloads, validates and compiles them; nothing changed: 304s', async () => {
    routes.set('/geo.mmdb', { body: good.geo });
    routes.set('/asn.csv', { body: good.asn });
    routes.set('/asn.mmdb.gz', { body: gzipSync(readFileSync(join(ROOT, 'fixtures/test-data/GeoLite2-ASN-Fixture.mmdb'))) });
    const first = await updateDataset(config(), dir, opts);
    expect(first.sources.map((s) => [s.role, s.state, s.networks])).toEqual([
      ['geo', 'updated', 302],
      ['asn', 'updated', 200],
      ['asn', 'updated', 5],
    ]);
    expect(first.ok).toBe(true);
    expect(lookup()).toBe('South Brisbane AU AS13335 Cloudflare, Inc.');
    const engine = openSync({ data: dir });
    const info = engine.info();
    engine.close();
    expect(info.databases.map((d) => [d.role, d.origin, d.from])).toEqual([
      ['geo', 'download', `${base}/geo.mmdb`],
      ['asn', 'download', `${base}/asn.csv`],
      ['asn', 'download', `${base}/asn.mmdb.gz`],
    ]);
    // Old data is said: the geo MMDB says it was built in 2020, the ASN MMDB fixture in January 2026; the CSV is dated now by its Last-Modified.
    expect(info.warnings).toHaveLength(2);
    expect(info.warnings[0]).toMatch(
      /^location data is \d+ days old \(http:\/\/127\.0\.0\.1:\d+\/geo\.mmdb, 2020-01-01\): run iprecord update\.$/,
    );
    expect(info.warnings[1]).toMatch(
      /^network data is \d+ days old \(http:\/\/127\.0\.0\.1:\d+\/asn\.mmdb\.gz, 2026-01-01\): run iprecord update\.$/,
    );

    const again = await updateDataset(config(), dir, opts);
    expect(again.sources.map((s) => s.state)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(again.ok).toBe(true);
  });

  it('keeps the last good data when a download is truncated, of the wrong schema, shrunk, refused or stalled', async () => {
    const before = readFileSync(geoFile());
    const answer = lookup();
    const faults: [string, Route, string, RegExp][] = [
      ['/geo.mmdb', { body: good.geo.subarray(0, good.geo.length >> 1) }, 'geo', /metadata|MaxMind|not a|invalid/i],
      [
        '/geo.mmdb',
        { body: readFileSync(join(ROOT, 'fixtures/test-data/GeoLite2-ASN-Fixture.mmdb')) },
        'geo',
        /holds network owner data \(asn\), not location data \(geo\)/,
      ],
      ['/asn.csv', { body: Buffer.from(asnCsv(20)) }, 'asn', /20 networks, down from 200/],
      ['/geo.mmdb', { status: 500 }, 'geo', /HTTP 500/],
      ['/geo.mmdb', { body: geoMmdb('Elsewhere', OLD), stall: true }, 'geo', /within 1500 ms|cut short/],
    ];
    for (const [path, route, role, reason] of faults) {
      const saved = routes.get(path)!;
      routes.set(path, route);
      const result = await updateDataset(config(), dir, opts);
      routes.set(path, saved);
      const failed = result.sources.filter((s) => s.state === 'failed');
      expect(
        failed.map((s) => s.role),
        path,
      ).toEqual([role]);
      expect(failed[0].error).toMatch(reason);
      expect(failed[0].error).toMatch(/kept the last good download$/);
      expect(result.ok).toBe(false);
      expect(readFileSync(geoFile()).equals(before)).toBe(true);
      expect(lookup()).toBe(answer);
    }
  });

  it('refuses a CSV cut short or covering less space, takes no source when one is refused, and takes a smaller one when told', async () => {
    const before = readFileSync(geoFile());
    const answer = lookup();
    const text = good.asn.toString();
    // Cut at 60 % of its bytes, in a line; then at a line's end with a quarter of the networks gone (under the 50 % rule).
    const cut = Buffer.from(text.slice(0, Math.floor(text.length * 0.6)));
    const quarter = Buffer.from(asnCsv(150));
    // Past the size whose rows update holds in memory (sources.maxCsvBytes, here 1 MiB; its default of 128 MiB is
    // the config suite's): refused before they are read.
    const huge = Buffer.alloc((1 << 20) + 1, 0x0a);
    good.asn.copy(huge);
    const cases: [Buffer, RegExp, number | undefined][] = [
      [huge, /^1048577 bytes of CSV, over sources.maxCsvBytes \(1048576\)/, 1 << 20],
      [cut, /does not end at the end of a line/, undefined],
      [quarter, /IPv4 networks cover 75\.0 % of the addresses/, undefined],
    ];
    for (const [body, reason, maxCsvBytes] of cases) {
      routes.set('/asn.csv', { body });
      // A new geo file that passes on its own: not taken while the ASN file is refused.
      routes.set('/geo.mmdb', { body: geoMmdb('Brisbane', OLD + 1) });
      const result = await updateDataset(config(maxCsvBytes), dir, opts);
      const states = Object.fromEntries(result.sources.map((u) => [u.url.slice(base.length), u]));
      expect(states['/asn.csv'].state).toBe('failed');
      expect(states['/asn.csv'].error).toMatch(reason);
      expect(states['/geo.mmdb'].state).toBe('failed');
      expect(states['/geo.mmdb'].error).toMatch(/not taken: asn .* failed/);
      expect(result.ok).toBe(false);
      expect(readFileSync(geoFile()).equals(before)).toBe(true);
      expect(lookup()).toBe(answer);
    }
    // Told: the smaller file is taken, and the geo file with it.
    const told = await updateDataset(config(), dir, { ...opts, allowShrink: true });
    expect(told.sources.map((u) => u.state)).toEqual(['updated', 'updated', 'unchanged']);
    expect(lookup()).toBe('Brisbane AU AS13335 Cloudflare, Inc.');
    routes.set('/asn.csv', { body: good.asn });
    routes.set('/geo.mmdb', { body: good.geo });
    expect((await updateDataset(config(), dir, opts)).ok).toBe(true);
    expect(lookup()).toBe(answer);
  });

  it('cuts a source string past 256 bytes (a 1 MB AS name) at a character, so no record carries it', async () => {
    const long = 'Ünïcödé Networks '.repeat(60_000);
    routes.set('/asn.csv', { body: Buffer.from(asnCsv(200).replace('"Cloudflare, Inc."', JSON.stringify(long))) });
    const result = await updateDataset(config(), dir, opts);
    expect(result.sources[1].state).toBe('updated');
    const e = openSync({ data: dir });
    const name = e.lookup('1.0.0.1').asn?.name as string;
    expect(e.lookupJson('1.0.0.1').length).toBeLessThan(3000);
    e.close();
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(256);
    expect(Buffer.byteLength(name)).toBeGreaterThan(252);
    expect(long.startsWith(name)).toBe(true);
    routes.set('/asn.csv', { body: good.asn });
    expect((await updateDataset(config(), dir, opts)).ok).toBe(true);
  });

  it('swaps new data under an engine that watches the directory, with no failed lookup', async () => {
    const engine = await open({ data: dir, watch: true });
    let failures = 0;
    let lookups = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          engine.lookup('1.0.0.1');
          engine.lookupJson('5.145.130.1');
          lookups++;
        } catch {
          failures++;
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    routes.set('/geo.mmdb', { body: geoMmdb('Brisbane', Math.floor(Date.now() / 1000)) });
    const result = await updateDataset(config(), dir, opts);
    expect(result.sources[0].state).toBe('updated');
    const deadline = Date.now() + 10_000;
    while (engine.lookup('1.0.0.1').city !== 'Brisbane' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    running = false;
    await loop;
    expect(engine.lookup('1.0.0.1').city).toBe('Brisbane');
    // The new geo data is dated now: only the ASN fixture's age is said.
    expect(engine.info().warnings.map((w) => w.split(' ')[0])).toEqual(['network']);
    engine.close();
    expect(lookups).toBeGreaterThan(100);
    expect(failures).toBe(0);
  });

  it("downloads a source whose URL changed whole: the old download's validators are not sent to the new URL", async () => {
    // The same file name at a new URL (the same place in sources/), from a server that answers any conditional request 304.
    routes.set('/v2/geo.mmdb', { body: geoMmdb('Fortitude Valley', OLD), notModifiedToAny: true });
    const moved = parseThreatConfig(
      {
        feeds: [],
        sources: {
          geo: [`${base}/v2/geo.mmdb`],
          asn: [`${base}/asn.csv`, `${base}/asn.mmdb.gz`],
          checks: [{ ip: '1.0.0.1', country: 'AU' }],
          minNetworks: 2,
        },
      },
      dir,
    );
    const r = await updateDataset(moved, dir, opts);
    expect(r.sources[0]).toMatchObject({ role: 'geo', state: 'updated' });
    expect(lookup()).toMatch(/^Fortitude Valley AU /);
    // Asked again at the same URL, its own validators are sent and its 304 keeps it.
    expect((await updateDataset(moved, dir, opts)).sources[0]).toMatchObject({ state: 'unchanged' });
    expect((await updateDataset(config(), dir, opts)).sources[0]).toMatchObject({ state: 'updated' });
  });

  it('refuses a 304 when there is no earlier download: nothing is said unchanged that was never had', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'iprecord-sources-304-'));
    try {
      routes.set('/never.csv', { status: 304 });
      const c = parseThreatConfig({ feeds: [], sources: { asn: [`${base}/never.csv`], minNetworks: 2 } }, fresh);
      // The sources step alone: a build would compile the installed default data in its place.
      const sources = await updateSources(c.sources, fresh, {
        timeoutMs: 1500,
        maxBytes: 1 << 20,
        retries: 0,
        backoffMs: 10,
        maxShrink: 0.5,
        maxCoverageShrink: 0.1,
        allowShrink: false,
      });
      expect(sources.map((u) => [u.state, u.error])).toEqual([
        ['failed', 'the server answered 304 Not Modified, but there is no earlier download'],
      ]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('compiles the installed default data for a geo or ASN URL not downloaded yet', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'iprecord-sources-none-'));
    try {
      const c = parseThreatConfig(
        {
          feeds: [],
          sources: { geo: ['https://example.invalid/geo.mmdb'], asn: [join(ROOT, 'x.csv')], anonymous: ['https://example.invalid/a.mmdb'] },
        },
        fresh,
      );
      expect(localSources(c.sources, fresh)).toEqual({ geo: null, asn: [join(ROOT, 'x.csv')], anonymous: [] });
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  /** The geo and ASN sources with network registries (`networks`), into `into`. */
  const registryConfig = (into: string, networks: string[], more: Record<string, unknown> = {}) =>
    parseThreatConfig(
      {
        feeds: [],
        sources: {
          geo: [`${base}/geo.mmdb`],
          asn: [`${base}/asn.csv`],
          networks,
          checks: [{ ip: '1.0.0.1', country: 'AU', asn: 13335 }],
          minNetworks: 2,
          ...more,
        },
      },
      into,
    );

  it('downloads a network registry (sources.networks) beside them: the types it states answer; one that is not a registry is refused and the last good kept', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'iprecord-sources-registry-'));
    try {
      const c = registryConfig(fresh, [`${base}/net.json.gz`]);
      routes.set('/geo.mmdb', { body: good.geo });
      routes.set('/asn.csv', { body: good.asn });
      // PeeringDB's network objects, gzipped as a mirror serves them: Cloudflare (named a host by its brand) says NSP.
      const registry = {
        data: [
          { asn: 13335, name: 'Cloudflare', info_type: 'NSP', info_types: ['NSP'] },
          { asn: 64500, info_type: 'Not Disclosed' },
        ],
      };
      routes.set('/net.json.gz', { body: gzipSync(JSON.stringify(registry)) });
      const type = () => {
        const e = openSync({ data: fresh });
        try {
          return e.lookup('1.0.0.1').asn?.type;
        } finally {
          e.close();
        }
      };
      const first = await updateDataset(c, fresh, opts);
      expect(first.sources.map((u) => [u.role, u.state, u.networks])).toEqual([
        ['geo', 'updated', 302],
        ['asn', 'updated', 200],
        ['networks', 'updated', 2],
      ]);
      expect(type()).toBe('isp');
      const e = openSync({ data: fresh });
      expect(e.info().databases.filter((d) => d.role === 'networks')).toMatchObject([
        { schema: 'peeringdb-net', origin: 'download', from: `${base}/net.json.gz`, nodeCount: 2 },
      ]);
      e.close();
      routes.set('/net.json.gz', { body: gzipSync('<html>rate limited</html>') });
      const second = await updateDataset(c, fresh, opts);
      expect(second.sources.find((u) => u.role === 'networks')).toMatchObject({
        state: 'failed',
        error: expect.stringMatching(/cannot be read as a network registry.*; kept the last good download$/),
      });
      expect(type()).toBe('isp');
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("downloads bgp.tools' AS classes and tags and IPinfo Lite with its token from the environment: types, domains and explain() from them", async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'iprecord-sources-bgptools-'));
    // A token with characters a query must encode; the URL names it, and it is never shown.
    const token = 's3cr+t/=';
    process.env.IPRECORD_TEST_IPINFO_TOKEN = token;
    const ipinfoUrl = `${base}/ipinfo_lite.csv.gz?token=\${IPRECORD_TEST_IPINFO_TOKEN}`;
    const userAgent = 'iprecord-test/1 (ops@example.com)';
    try {
      const c = registryConfig(fresh, [`${base}/asns.csv`, `${base}/tags/uni.csv`, `${base}/tags/vpsh.csv`, ipinfoUrl], { userAgent });
      routes.set('/geo.mmdb', { body: good.geo });
      routes.set('/asn.csv', { body: good.asn });
      // "Example Network N" is an access network by its name's word; the registries say otherwise of 64501 (a class) and
      // 64503 (the academic tag).
      routes.set('/asns.csv', {
        body: Buffer.from('asn,name,class,cc\nAS64501,Example Network 1,Content,US\nAS64502,Example Network 2,Unknown,US\n'),
      });
      routes.set('/tags/uni.csv', { body: Buffer.from('AS64503,Example Network 3\n') });
      // A weak statement (a hosting tag, which bgp.tools gives carriers too) yields to the type the name states.
      routes.set('/tags/vpsh.csv', { body: Buffer.from('AS64504,Example Network 4\n') });
      routes.set(`/ipinfo_lite.csv.gz?token=${encodeURIComponent(token)}`, {
        body: gzipSync(
          'network,country,country_code,continent,continent_code,asn,as_name,as_domain\n' +
            '12.0.1.0/24,United States,US,North America,NA,AS64501,Example Network 1,one.example\n' +
            '12.0.3.0/24,United States,US,North America,NA,AS64503,Example Network 3,three.example\n',
        ),
      });
      const at = agents.length;
      const first = await updateDataset(c, fresh, opts);
      expect(first.sources.map((u) => [u.role, u.state, u.url])).toEqual([
        ['geo', 'updated', `${base}/geo.mmdb`],
        ['asn', 'updated', `${base}/asn.csv`],
        ['networks', 'updated', `${base}/asns.csv`],
        ['networks', 'updated', `${base}/tags/uni.csv`],
        ['networks', 'updated', `${base}/tags/vpsh.csv`],
        ['networks', 'updated', ipinfoUrl],
      ]);
      expect(new Set(agents.slice(at))).toEqual(new Set([userAgent]));
      const e = openSync({ data: fresh });
      try {
        const asn = (n: number) => e.lookup(`12.0.${n}.1`).asn;
        expect([1, 2, 3, 4].map((n) => [asn(n)?.type, asn(n)?.domain])).toEqual([
          ['hosting', 'one.example'],
          ['isp', null],
          ['education', 'three.example'],
          ['isp', null],
        ]);
        expect(e.explain('12.0.3.1').asn_type).toMatchObject({
          rule: 'registry',
          evidence: `bgp.tools' tag "uni" (Academic) states it (${base}/tags/uni.csv)`,
        });
        expect(e.explain('12.0.1.1').asn_type?.evidence).toBe(`bgp.tools' class "Content" states it (${base}/asns.csv)`);
        expect(e.explain('12.0.4.1').asn_type?.rule).toBe('name');
        const registries = e.info().databases.filter((d) => d.role === 'networks');
        expect(registries.map((d) => d.schema)).toEqual(['bgptools-asns', 'bgptools-tag', 'bgptools-tag', 'ipinfo-lite-csv']);
        expect(JSON.stringify(e.info())).not.toContain(encodeURIComponent(token));
      } finally {
        e.close();
      }
      const second = await updateDataset(c, fresh, opts);
      expect(second.sources.map((u) => u.state)).toEqual(Array(6).fill('unchanged'));
      // A URL naming a variable the environment does not hold fails, naming it.
      delete process.env.IPRECORD_TEST_IPINFO_TOKEN;
      const third = await updateDataset(c, fresh, opts);
      expect(third.sources.at(-1)).toMatchObject({
        state: 'failed',
        error: `its URL names \${IPRECORD_TEST_IPINFO_TOKEN}, and IPRECORD_TEST_IPINFO_TOKEN is not set in the environment; kept the last good download`,
      });
    } finally {
      delete process.env.IPRECORD_TEST_IPINFO_TOKEN;
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
