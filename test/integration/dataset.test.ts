/**
 * The compiled dataset against a record assembled the plain way from the
 * sources themselves (`helpers/reference.ts`): every network's edges and
 * random addresses of both families answered by an engine opened on the
 * databases (compiled on open) byte for byte as the reference answers
 * them (but for `current_time`), on the fixture databases of every
 * schema, with an Anonymous-IP database and threat feeds (merged into
 * the dataset of the databases, and compiled with them), with the full and
 * basic threat object.
 */

import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync as openFileSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildDataset, buildThreat } from '../../src/compile/feeds/build.js';
import { describe, expect, it } from 'vitest';
import { InvalidDatasetError, isIprecordError, open, openSync, type Engine, type OpenOptions } from '../../src/index.js';
import { parseCidr } from '../../src/ip/address.js';
import { toBigInt } from '../../src/ip/ranges.js';
import { formatIp } from '../../src/ip/format.js';
import { MmdbFile } from '../../src/mmdb/reader.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { testDb } from '../helpers/maxmind.js';
import { Reference } from '../helpers/reference.js';
import { compileDataset } from '../../src/compile/dataset.js';
import { specialTable } from '../../src/ip/special.js';
import { Sources } from '../../src/compile/sources.js';
import { ThreatTree } from '../../src/compile/feeds/tree.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { compiledDataset } from '../../src/engine/inside.js';
import { HEADER } from '../../src/dataset/layout.js';
import type { AnswerOptions } from '../../src/engine/engine.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-dataset-'));
const threatBin = join(dir, 'threat.bin');
/** The threat feeds' blocks, whose edges are probed too. */
const blocks: string[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bogon list's blocks. */
const bogons: string[] = [];

/** A threat.bin of random blocks of both families in four categories, two of them blocklists (built before the tests). */
beforeAll(async () => {
  const next = xorshift32(seed() ^ 0x5eed);
  const lists = ['attacker', 'vpn', 'abuser', 'bogon'].map((category, i) => {
    const lines = Array.from({ length: 400 }, (_, j) =>
      j % 3 === 0
        ? `${formatIp(6, [0x20010000 | (next() & 0xffff), next(), 0, 0])}/${32 + (next() % 33)}`
        : `${formatIp(4, [0, 0, 0, next()])}/${8 + (next() % 25)}`,
    );
    // The bogon list also lists networks the network data routes (as an old full-bogons list does).
    if (category === 'bogon') {
      const isp = new MmdbFile(readFileSync(db('GeoIP2-ISP-Fixture')), 'isp');
      for (const version of [4, 6] as const)
        isp.forEachNetwork(version, (w, prefix) => void (lines.length < 460 && lines.push(`${formatIp(version, w)}/${prefix}`)));
    }
    writeFileSync(join(dir, `${category}.txt`), lines.join('\n'));
    blocks.push(...lines);
    if (category === 'bogon') bogons.push(...lines);
    return {
      name: category,
      source: `${category}.txt`,
      format: 'list',
      categories: [category],
      ...(i !== 1 ? { blocklist: { name: category, site: `https://example.com/${category}` } } : {}),
    };
  });
  const built = await buildThreat(parseThreatConfig({ feeds: lists }, dir), null, { threads: 1 });
  writeFileSync(threatBin, built.buffer);
});

const db = (name: string) => testDb(FIXTURES_DIR, name);

/** The record as `writeJson` writes it into a buffer, as text. */
function bytesOf(engine: Engine, ip: string, options?: AnswerOptions): string {
  const target = Buffer.allocUnsafe(8192);
  const n = engine.writeJson(ip, target, 0, options);
  return target.toString('utf8', 0, n);
}

/** Addresses to compare: the edges of every network of the databases (first, last, and one outside each), and random ones. */
function probes(paths: readonly string[], edgesOf: readonly string[], random: number): string[] {
  const out: string[] = [];
  const text = (version: 4 | 6, x: bigint) =>
    formatIp(version, version === 4 ? [0, 0, 0, Number(x)] : [0, 1, 2, 3].map((i) => Number((x >> BigInt(96 - 32 * i)) & 0xffffffffn)));
  for (const path of paths) {
    const file = new MmdbFile(readFileSync(path), path);
    for (const version of [4, 6] as const) {
      const width = version === 4 ? 32n : 128n;
      file.forEachNetwork(version, (w, prefix) => {
        const lo = version === 4 ? BigInt(w[3]) : (BigInt(w[0]) << 96n) | (BigInt(w[1]) << 64n) | (BigInt(w[2]) << 32n) | BigInt(w[3]);
        const hi = lo + (1n << (width - BigInt(prefix))) - 1n;
        for (const x of [lo - 1n, lo, hi, hi + 1n]) if (x >= 0n && x < 1n << width) out.push(text(version, x));
      });
    }
  }
  for (const block of edgesOf) {
    const c = parseCidr(block);
    if (c === null) continue;
    const width = c.address.version === 4 ? 32n : 128n;
    const lo = (toBigInt(c.address) >> (width - BigInt(c.prefix))) << (width - BigInt(c.prefix));
    const hi = lo + (1n << (width - BigInt(c.prefix))) - 1n;
    for (const x of [lo - 1n, lo, hi, hi + 1n]) if (x >= 0n && x < 1n << width) out.push(text(c.address.version, x));
  }
  const next = xorshift32(seed());
  for (let i = 0; i < random; i++)
    out.push(i % 2 === 0 ? formatIp(4, [0, 0, 0, next()]) : formatIp(6, [0x20000000 | (next() & 0x1fffffff), next(), next(), next()]));
  return out;
}

const timeless = (s: string) => s.replace(/"current_time":"[^"]*"/, '"current_time":null');

/** An engine's answer: the record's JSON text, or `error: ` and the message. */
function answer(f: () => string): string {
  try {
    return f();
  } catch (e) {
    if (!isIprecordError(e)) throw e;
    return `error: ${e.message}`;
  }
}

describe.each([
  ['DB-IP City Lite and GeoLite2 ASN', { geo: [db('DBIP-City-Lite-Fixture')], asn: [db('GeoLite2-ASN-Fixture')] }],
  [
    'GeoIP2 City before GeoLite2 Country, and GeoIP2 ISP (carriers)',
    { geo: [db('GeoIP2-City-Fixture'), db('GeoLite2-Country-Fixture')], asn: [db('GeoIP2-ISP-Fixture')] },
  ],
  [
    'IPinfo Lite for both, and an untyped flat geo file',
    { geo: [db('IPinfo-Lite-Fixture'), db('Untyped-Flat-Fixture')], asn: [db('IPinfo-Lite-Fixture')] },
  ],
  [
    'DB-IP and GeoLite2 ASN, flags from another base URL (written per lookup)',
    { geo: [db('DBIP-City-Lite-Fixture')], asn: [db('GeoLite2-ASN-Fixture')], flagBaseUrl: 'https://cdn.example/"flags"' },
  ],
  [
    'DB-IP and GeoLite2 ASN with an Anonymous-IP database and threat feeds',
    {
      geo: [db('DBIP-City-Lite-Fixture')],
      asn: [db('GeoLite2-ASN-Fixture')],
      anonymous: [db('GeoIP2-Anonymous-IP-Fixture')],
      threat: 'threat.bin',
    },
  ],
] as [string, OpenOptions][])('the dataset compiled from %s', (_name, given) => {
  it('answers as the records assembled from the databases themselves, byte for byte', () => {
    const options = given.threat === undefined ? given : { ...given, threat: threatBin };
    const geo = options.geo as string[];
    const asn = options.asn as string[];
    const anonymous = (options.anonymous as string[] | undefined) ?? [];
    const reference = new Reference(
      { geo, asn, anonymous },
      options.threat === undefined ? null : new ThreatTree(readFileSync(threatBin), threatBin),
      options.flagBaseUrl,
    );
    const engine = openSync({ ...options, memory: 'read' });
    const ips = probes([...geo, ...asn, ...anonymous], given.threat === undefined ? [] : blocks, 3_000);
    let records = 0;
    for (const basic of [false, true]) {
      for (const ip of ips) {
        const want = timeless(reference.json(ip, '7', basic, Date.now()));
        const options = { count: '7', basicThreat: basic };
        // Records as bytes, as text and as objects: three ways of reading the dataset.
        for (const [way, got] of [
          ['bytes', answer(() => bytesOf(engine, ip, options))],
          ['text', answer(() => engine.lookupJson(ip, options))],
          ['object', answer(() => JSON.stringify(engine.lookup(ip, options)))],
        ]) {
          if (timeless(got) !== want) expect({ ip, basic, way, got: timeless(got) }).toEqual({ ip, basic, way, got: want });
        }
        if (!want.startsWith('error')) records++;
      }
    }
    engine.close();
    expect(records).toBeGreaterThan(ips.length);
  });
});

describe('threat feeds compiled into the dataset', () => {
  it('answer every operation as the same feeds merged into the dataset compiled without them (what open() and build do), over the same ranges, and as the reference', () => {
    const options: OpenOptions = {
      geo: [db('GeoIP2-City-Fixture'), db('DBIP-City-Lite-Fixture')],
      asn: [db('GeoIP2-ISP-Fixture')],
      anonymous: [db('GeoIP2-Anonymous-IP-Fixture')],
      threat: threatBin,
      memory: 'read',
    };
    const files = { geo: options.geo as string[], asn: options.asn as string[], anonymous: options.anonymous as string[] };
    const tree = new ThreatTree(readFileSync(threatBin), threatBin);
    const file = join(dir, 'threat-compiled-in.iprd');
    writeFileSync(file, compileDataset(new Sources(files), tree, specialTable(), 'fixtures with threat feeds').toBuffer());
    const reference = new Reference(files, tree);
    // open() compiles the databases alone, then merges the feeds in (compile/merge.ts).
    const laid = openSync(options);
    const compiled = openSync({ dataset: file, memory: 'read' });
    expect(compiledDataset(laid).meta.threat).toEqual(tree.meta);
    for (const key of ['starts4', 'starts6'] as const) expect(compiledDataset(laid)[key]).toEqual(compiledDataset(compiled)[key]);
    // Without what changes between calls; JSON text parsed first.
    const stable = (v: unknown): unknown =>
      typeof v === 'string' && v.startsWith('{')
        ? stable(JSON.parse(v))
        : JSON.parse(JSON.stringify(v), (k, x) => (k === 'current_time' || k === 'count' ? null : x));
    const outcome = (f: () => unknown) => {
      try {
        return { value: stable(f()) };
      } catch (e) {
        if (!isIprecordError(e)) throw e;
        return { error: e.message, code: e.code };
      }
    };
    const ips = probes([...files.geo, ...files.asn, ...files.anonymous], blocks, 2_000);
    for (const ip of ips) {
      const want = timeless(reference.json(ip, '3', false, Date.now()));
      const got = timeless(answer(() => compiled.lookupJson(ip, { count: '3' })));
      if (got !== want) expect({ ip, got }).toEqual({ ip, got: want });
      for (const [name, call] of [
        ['lookup', (e: typeof laid) => e.lookup(ip)],
        ['lookup fields', (e: typeof laid) => e.lookup(ip, { fields: 'threat,ip,asn,carrier,time_zone' })],
        ['lookupJson', (e: typeof laid) => e.lookupJson(ip, { count: '3' })],
        ['writeJson basic', (e: typeof laid) => bytesOf(e, ip, { basicThreat: true })],
        ['field', (e: typeof laid) => e.field(ip, 'region_code')],
        ['threat', (e: typeof laid) => e.threat(ip)],
        ['threat basic', (e: typeof laid) => e.threat(ip, { basicThreat: true })],
      ] as const) {
        const a = outcome(() => call(laid));
        const b = outcome(() => call(compiled));
        if (JSON.stringify(b) !== JSON.stringify(a)) expect({ ip, name, got: b }).toEqual({ ip, name, got: a });
      }
    }
    expect(stable(compiled.bulk(ips.slice(0, 300)))).toEqual(stable(laid.bulk(ips.slice(0, 300))));
    // A bogon list's listing stands where the network data has no route, and not where it has one.
    const listed = bogons.map((b) => {
      const c = parseCidr(b)!;
      const width = c.address.version === 4 ? 32n : 128n;
      const lo = (toBigInt(c.address) >> (width - BigInt(c.prefix))) << (width - BigInt(c.prefix));
      return [c.address.version, lo, lo + (1n << (width - BigInt(c.prefix))) - 1n] as const;
    });
    const seen = { routed: 0, unrouted: 0 };
    for (const ip of ips) {
      const a = parseCidr(`${ip}/${ip.includes(':') ? 128 : 32}`)!.address;
      if (!listed.some(([v, lo, hi]) => v === a.version && toBigInt(a) >= lo && toBigInt(a) <= hi)) continue;
      const r = outcome(() => compiled.lookup(ip)) as { value?: { asn: unknown; threat: { is_bogon: boolean } } };
      if (r.value === undefined) continue;
      seen[r.value.asn === null ? 'unrouted' : 'routed']++;
      expect(r.value.threat.is_bogon, ip).toBe(r.value.asn === null);
    }
    console.log(`bogon list: ${JSON.stringify(seen)} listed addresses`);
    expect(seen.routed).toBeGreaterThan(10);
    expect(seen.unrouted).toBeGreaterThan(10);
    expect(Object.isFrozen(compiled.threat(ips[0].includes(':') ? '8.8.8.8' : ips[0]))).toBe(true);
    laid.close();
    compiled.close();
  });
});

describe('a dataset checked before it answers', () => {
  const compiled = compileDataset(
    new Sources({ geo: [db('DBIP-City-Lite-Fixture')], asn: [db('GeoLite2-ASN-Fixture')], anonymous: [] }),
    null,
    specialTable(),
    'verify',
  ).toBuffer();

  it('passes on a compiled dataset, seals it, and info() names the dataset', () => {
    const file = join(dir, 'verify.iprd');
    writeFileSync(file, compiled);
    const good = openSync({ dataset: file, memory: 'read' });
    good.verify();
    expect(good.info().dataset).toEqual({ path: file, bytes: compiled.length, builtAt: expect.any(String) });
    good.close();
    expect(existsSync(`${file}.verified`)).toBe(true);
  });

  it('refuses at open() and openSync() a file with any byte changed in place, sealed before or not: every byte of the header, and bytes drawn from the rest', async () => {
    const file = join(dir, 'flips.iprd');
    writeFileSync(file, compiled);
    openSync({ dataset: file }).close();
    // The seal of the good file is there: a write in place must void it.
    expect(existsSync(`${file}.verified`)).toBe(true);
    const next = xorshift32(seed());
    const rng = () => next() / 2 ** 32;
    const header = Array.from({ length: HEADER }, (_, at) => at);
    const drawn = Array.from({ length: 40 }, () => HEADER + Math.floor(rng() * (compiled.length - HEADER)));
    for (const at of [...header, ...drawn]) {
      const fd = openFileSync(file, 'r+');
      writeSync(fd, Buffer.from([compiled[at] ^ (1 + Math.floor(rng() * 255))]), 0, 1, at);
      closeSync(fd);
      expect(() => openSync({ dataset: file }), `byte ${at}`).toThrow(InvalidDatasetError);
      expect(() => openSync({ dataset: file, memory: 'read' }), `byte ${at}`).toThrow(InvalidDatasetError);
      await expect(open({ dataset: file }), `byte ${at}`).rejects.toThrow(InvalidDatasetError);
      writeFileSync(file, compiled);
    }
  });
});

describe.skipIf(process.platform === 'win32')('files that are not regular files', () => {
  it('refuses a FIFO as the dataset, as `current` or as threat.bin at once, with a typed error', async () => {
    const fifoDir = mkdtempSync(join(tmpdir(), 'iprecord-fifo-'));
    const fifo = join(fifoDir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const data = join(fifoDir, 'data');
    mkdirSync(data);
    symlinkSync(fifo, join(data, 'current'));
    const cases: [string, OpenOptions][] = [
      ['dataset', { dataset: fifo }],
      ['current', { data }],
      ['threat.bin', { threat: fifo, geo: [db('DBIP-City-Lite-Fixture')], asn: [db('GeoLite2-ASN-Fixture')] }],
    ];
    for (const [what, options] of cases) {
      const started = Date.now();
      expect(() => openSync(options), what).toThrow(InvalidDatasetError);
      await expect(open(options), what).rejects.toThrow(/not a regular file/);
      // A bound on a hang (the FIFO waited on), not a speed.
      expect(Date.now() - started, what).toBeLessThan(30_000);
    }
    rmSync(fifoDir, { recursive: true, force: true });
  });
});

/** The CIDR blocks of `spreadAsn()`'s networks. */
const spreadBlocks: string[] = [];

/**
 * An ASN CSV of three organisations whose names state no type, over the GeoIP2 City fixture's IPv4 networks (each
 * in a place of its own): Quux over the first, Hostco over the last (which `spreadFeeds()` lists as datacenter
 * space), Acme over those between.
 */
function spreadAsn(): string {
  const file = join(dir, 'spread-asn.csv');
  const city = new MmdbFile(readFileSync(db('GeoIP2-City-Fixture')), 'city');
  const nets: [number, number][] = [];
  city.forEachNetwork(4, (w, prefix) => void nets.push([w[3], prefix]));
  expect(nets.length).toBeGreaterThanOrEqual(6);
  const lines = nets.map(([lo, prefix], i) => {
    const from = formatIp(4, [0, 0, 0, lo]);
    spreadBlocks.push(`${from}/${prefix}`);
    const owner = i === 0 ? '64500,Quux Holding AB' : i === nets.length - 1 ? '64502,Hostco Holding AB' : '64501,Acme Holding AB';
    return `${from},${formatIp(4, [0, 0, 0, lo + 2 ** (32 - prefix) - 1])},${owner}`;
  });
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** A threat.bin of one datacenter list: Hostco's network (the last of `spreadBlocks`). */
async function spreadFeeds(): Promise<string> {
  writeFileSync(join(dir, 'hosts.txt'), spreadBlocks[spreadBlocks.length - 1] + '\n');
  const built = await buildThreat(
    parseThreatConfig({ feeds: [{ name: 'hosts', source: 'hosts.txt', format: 'list', categories: ['datacenter'] }] }, dir),
    null,
    { threads: 1 },
  );
  const file = join(dir, 'spread-threat.bin');
  writeFileSync(file, built.buffer);
  return file;
}

/**
 * The engine's answers at the edges of `spreadBlocks` and random addresses, each the reference's byte for byte (it
 * closes the engine); each network's type by name, with `, datacenter` where its threat says so.
 */
function networkTypes(reference: Reference, engine: Engine): Record<string, string> {
  const types: Record<string, string> = {};
  try {
    for (const ip of probes([db('GeoIP2-City-Fixture')], spreadBlocks, 2_000)) {
      const want = timeless(reference.json(ip, '7', false, Date.now()));
      const got = timeless(answer(() => engine.lookupJson(ip, { count: '7' })));
      if (got !== want) expect({ ip, got }).toEqual({ ip, got: want });
      const r = want.startsWith('error')
        ? null
        : (JSON.parse(want) as { asn: { name: string; type: string } | null; threat: { is_datacenter: boolean } });
      if (r?.asn) types[r.asn.name] = `${r.asn.type}${r.threat.is_datacenter ? ', datacenter' : ''}`;
    }
  } finally {
    engine.close();
  }
  return types;
}

describe('network types weighed against the data where the name states nothing', () => {
  it('types isp over many places, business in one, hosting where the datacenter lists hold it: merged or compiled whole, as the reference counts them', async () => {
    const files = { geo: [db('GeoIP2-City-Fixture')], asn: [spreadAsn()] };
    const threat = await spreadFeeds();
    const tree = new ThreatTree(readFileSync(threat), threat);
    const whole = join(dir, 'spread-whole.iprd');
    writeFileSync(whole, compileDataset(new Sources({ ...files, anonymous: [] }), tree, specialTable(), 'spread, whole').toBuffer());
    const answers = {
      'without feeds': networkTypes(new Reference(files, null), openSync({ ...files, memory: 'read' })),
      'feeds merged': networkTypes(new Reference(files, tree), openSync({ ...files, threat, memory: 'read' })),
      'compiled whole': networkTypes(new Reference(files, tree), openSync({ dataset: whole, memory: 'read' })),
    };
    expect(answers).toEqual({
      'without feeds': { 'Quux Holding AB': 'business', 'Acme Holding AB': 'isp', 'Hostco Holding AB': 'business' },
      'feeds merged': { 'Quux Holding AB': 'business', 'Acme Holding AB': 'isp', 'Hostco Holding AB': 'hosting, datacenter' },
      'compiled whole': { 'Quux Holding AB': 'business', 'Acme Holding AB': 'isp', 'Hostco Holding AB': 'hosting, datacenter' },
    });
  });
});

describe('network types the network registry states', () => {
  it('win over the data: a registry type is kept with the feeds merged (iprecord build) or compiled whole, as the reference resolves it', async () => {
    const files = { geo: [db('GeoIP2-City-Fixture')], asn: [spreadAsn()] };
    const threat = await spreadFeeds();
    // PeeringDB's network objects: Acme says it is an enterprise, Hostco (in a datacenter list) too; Quux is not in it.
    const registry = join(dir, 'net.json');
    writeFileSync(
      registry,
      JSON.stringify({
        data: [64501, 64502].map((asn) => ({ asn, name: `AS${asn}`, info_type: 'Enterprise', info_types: ['Enterprise'] })),
      }),
    );
    const tree = new ThreatTree(readFileSync(threat), threat);
    const whole = join(dir, 'registry-whole.iprd');
    writeFileSync(
      whole,
      compileDataset(new Sources({ ...files, anonymous: [], networks: [registry] }), tree, specialTable(), 'registry, whole').toBuffer(),
    );
    // What iprecord build does: the databases and the registry compiled, then the feeds merged in.
    const built = join(dir, 'registry-build');
    const config = parseThreatConfig(
      {
        feeds: [{ name: 'hosts', source: 'hosts.txt', format: 'list', categories: ['datacenter'] }],
        sources: { ...files, networks: [registry] },
      },
      dir,
    );
    await buildDataset(config, built, dir);
    const reference = new Reference({ ...files, networks: [registry] }, tree);
    const answers = {
      built: networkTypes(reference, openSync({ data: built, memory: 'read' })),
      'compiled whole': networkTypes(reference, openSync({ dataset: whole, memory: 'read' })),
    };
    const want = { 'Quux Holding AB': 'business', 'Acme Holding AB': 'business', 'Hostco Holding AB': 'business, datacenter' };
    expect(answers).toEqual({ built: want, 'compiled whole': want });
  });
});

describe("the catalogue's opt-in feeds", () => {
  it("load when a configuration names them: Avastel's lists give is_proxy and their blocklist entry, above the confidence asked", async () => {
    const files = { geo: [db('GeoIP2-City-Fixture')], asn: [db('GeoLite2-ASN-Fixture')] };
    // Small lists in Avastel's two forms (its 1-day sample; its 5-day blocklist with a confidence a range).
    writeFileSync(join(dir, 'avastel-1d.txt'), '# Avastel 1 day proxy bots IPs\n\nip_address;autonomous_system\n81.2.69.160;Example ISP\n');
    writeFileSync(
      join(dir, 'avastel-5d.txt'),
      '# Avastel 5 day proxy bots IPs blocklist\n\nip_address;autonomous_system;confidence\n89.160.20.112/28;Sure;1.0\n216.160.83.56/29;Less sure;0.95\n',
    );
    const built = join(dir, 'catalogue-build');
    const config = parseThreatConfig(
      {
        feeds: [
          { name: 'avastel_proxy_1d', source: 'avastel-1d.txt' },
          { name: 'avastel_proxy_blocklist_5d', source: 'avastel-5d.txt', options: { minConfidence: 1 } },
        ],
        sources: files,
      },
      dir,
    );
    expect(config.feeds.map((f) => [f.name, f.format, f.categories])).toEqual([
      ['avastel_proxy_1d', 'csv', ['proxy']],
      ['avastel_proxy_blocklist_5d', 'csv', ['proxy']],
    ]);
    await buildDataset(config, built, dir);
    const e = openSync({ data: built, memory: 'read' });
    try {
      const threat = (ip: string) => {
        const t = e.lookup(ip).threat;
        return [t.is_proxy, t.blocklists.map((b) => `${b.name} ${b.type} ${b.site}`)];
      };
      const site = 'https://github.com/antoinevastel/avastel-bot-ips-lists';
      expect(threat('81.2.69.160')).toEqual([true, [`Avastel proxy bot IPs (1 day) proxy ${site}`]]);
      expect(threat('89.160.20.120')).toEqual([true, [`Avastel proxy bot IPs blocklist (5 days) proxy ${site}`]]);
      expect(threat('216.160.83.57')).toEqual([false, []]);
      expect(e.info().feeds.map((f) => [f.name, f.entries])).toEqual([
        ['avastel_proxy_1d', 1],
        ['avastel_proxy_blocklist_5d', 1],
      ]);
    } finally {
      e.close();
    }
  });
});
