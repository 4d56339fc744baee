/**
 * `updateDataset` against a real HTTP server on 127.0.0.1 that serves the
 * shared feeds and injects faults: timeouts, HTTP 500 and 404, truncated
 * bodies, garbage, a list shrunk tenfold. None of them may replace good data.
 */

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSync } from '../../src/index.js';
import { feedCachePath, resolveDataset } from '../../src/compile/feeds/build.js';
import { parseThreatConfig, type ThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap, updateDataset } from '../../src/compile/feeds/update.js';
import { CURRENT_FILE } from '../../src/dataset/store.js';
import { HANG_MS } from '../helpers/wait.js';
import { hasSharedData, SHARED_DATA } from '../helpers/env.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

const present = hasSharedData();
const d = present ? describe : describe.skip;

type Fault =
  'ok' | 'timeout' | '500' | '404' | 'truncated' | 'garbage' | 'shrunk' | 'gzip' | 'gzip-truncated' | '304' | 'everything' | 'ninths';

const FEEDS = [
  { name: 'tor', file: 'tor/tor_exits.ipset', format: 'list', categories: ['tor'] },
  { name: 'nordvpn', file: 'vpn/open-source-vpn-ip-lists/nordvpn.txt', format: 'list', categories: ['vpn'] },
  { name: 'aws', file: 'datacenter/cloud-ip-ranges/aws-ip-ranges.json', format: 'aws-json', categories: ['datacenter'] },
  { name: 'ipsum', file: 'attacker/ipsum/ipsum.txt', format: 'list', categories: ['attacker'], options: { minHits: 3 } },
  { name: 'google_one', file: 'vpn/GoogleOneVPNIPRanges.csv', format: 'csv', categories: ['vpn'], options: { column: 'IPRange' } },
  { name: 'blocklist_de', file: 'abuser/blocklist_de.ipset', format: 'list', categories: ['abuser'] },
  { name: 'relay', file: 'relay/icloud-private-relay-iplist/ip-ranges.txt', format: 'list', categories: ['icloud_relay'] },
] as const;

d('iprecord update against a faulty server', () => {
  const faults = new Map<string, Fault>();
  const requests = new Map<string, number>();
  let server: Server;
  let base: string;
  let dir: string;
  let config: ThreatConfig;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      requests.set(name, (requests.get(name) ?? 0) + 1);
      // `moved-<name>`: another list at a new URL, from a server that answers any conditional request 304 (as one whose
      // files all carry one date would answer the old download's validators).
      if (name.startsWith('moved-')) {
        if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined)
          return void res.writeHead(304).end();
        return void res
          .writeHead(200, { 'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT' })
          .end(readFileSync(join(SHARED_DATA, 'feeds', FEEDS[1].file)));
      }
      const feed = FEEDS.find((f) => f.name === name);
      if (!feed) return void res.writeHead(404).end();
      const body = readFileSync(join(SHARED_DATA, 'feeds', feed.file));
      const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
      switch (faults.get(name) ?? 'ok') {
        case 'timeout':
          return; // never answers
        case '500':
          return void res.writeHead(500).end('oops');
        case '404':
          return void res.writeHead(404).end();
        case '304':
          return void res.writeHead(304).end();
        case 'truncated':
          res.writeHead(200, { 'content-length': body.length });
          res.write(body.subarray(0, body.length >> 1));
          return void setTimeout(() => res.socket?.destroy(), 20);
        case 'gzip':
        case 'gzip-truncated': {
          // HTTP compression: Content-Length counts the compressed bytes.
          const packed = gzipSync(body);
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': packed.length });
          if (faults.get(name) === 'gzip') return void res.end(packed);
          res.write(packed.subarray(0, packed.length >> 1));
          return void setTimeout(() => res.socket?.destroy(), 20);
        }
        case 'garbage':
          return void res.writeHead(200).end(randomBytes(body.length));
        case 'everything':
          // The list as it was, and one valid line more that lists every address of a family.
          return void res.writeHead(200).end(Buffer.concat([body, Buffer.from(name === 'relay' ? '\n::/0\n' : '\n0.0.0.0/0\n')]));
        case 'ninths': {
          // The list as it was, and every /9 of 1.0.0.0-126.255.255.255: no entry wider than a /8, half the IPv4 space.
          const ninths = Array.from({ length: 252 }, (_, i) => `${1 + (i >> 1)}.${(i & 1) * 128}.0.0/9`);
          return void res.writeHead(200).end(Buffer.concat([body, Buffer.from(`\n${ninths.join('\n')}\n`)]));
        }
        case 'shrunk': {
          const lines = body.toString('utf8').split('\n');
          return void res.writeHead(200).end(lines.filter((_, i) => i % 10 === 0 || lines[i].startsWith('#')).join('\n'));
        }
        default:
          if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
          return void res.writeHead(200, { etag, 'content-length': body.length }).end(body);
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'iprecord-update-'));
    config = parseThreatConfig(
      { feeds: FEEDS.map(({ file: _f, ...f }) => ({ ...f, source: `${base}/${f.name}` })), sources: SMALL_SOURCES },
      dir,
    );
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  // A limit that stops a hang, never one a busy machine's download can miss; the feed that never answers is given a
  // short one of its own (below), which it misses however fast the machine is.
  const options = { timeoutMs: 60_000, retries: 2, backoffMs: 10 };
  /** Some listed addresses of each feed, and how the engine answers them. */
  const probes = ['185.220.101.1', '77.90.185.20', '3.5.140.1', '104.28.28.1', '136.23.48.1', '2.57.122.53'];
  const answers = () => {
    const engine = openSync({ data: dir });
    const out = probes.map((ip) => engine.threat(ip));
    engine.close();
    return out;
  };

  it('downloads, validates and builds every feed', async () => {
    const r = await updateDataset(config, dir, options);
    expect(r.feeds.map((f) => [f.name, f.state])).toEqual(FEEDS.map((f) => [f.name, 'updated']));
    expect(r.ok).toBe(true);
    expect(resolveDataset(dir)).toBe(r.buildDir);
    const a = answers();
    expect(a[0].is_tor || a[1].is_known_attacker).toBe(true);
    expect(a.some((t) => t.is_datacenter)).toBe(true);
  });

  it('fails a feed answered 304 with no earlier download, rather than calling it unchanged', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'iprecord-update-304-'));
    faults.set('tor', '304');
    try {
      const r = await updateDataset({ ...config, feeds: config.feeds.filter((f) => f.name === 'tor') }, fresh, options);
      expect(r.feeds.map((f) => [f.state, f.error])).toEqual([
        ['failed', 'the server answered 304 Not Modified, but there is no earlier download'],
      ]);
      expect(r.ok).toBe(false);
    } finally {
      faults.delete('tor');
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('asks with If-None-Match and keeps the download on 304', async () => {
    const before = new Map<string, Buffer>(FEEDS.map((f) => [f.name, readFileSync(feedCachePath(dir, f.name))]));
    const r = await updateDataset(config, dir, options);
    expect(r.feeds.every((f) => f.state === 'unchanged')).toBe(true);
    for (const f of FEEDS) expect(readFileSync(feedCachePath(dir, f.name)).equals(before.get(f.name)!)).toBe(true);
  });

  it('keeps the last good download of a feed that never answers within its limit', async () => {
    // On a copy of the directory, updating that feed alone: the short limit is for the feed that never answers.
    const copy = mkdtempSync(join(tmpdir(), 'iprecord-update-timeout-'));
    cpSync(dir, copy, { recursive: true });
    const before = readFileSync(feedCachePath(copy, 'tor'));
    faults.set('tor', 'timeout');
    try {
      const r = await updateDataset({ ...config, feeds: config.feeds.filter((f) => f.name === 'tor') }, copy, {
        ...options,
        timeoutMs: 300,
      });
      const tor = r.feeds.find((f) => f.name === 'tor')!;
      expect(tor.state).toBe('failed');
      expect(tor.error).toMatch(/no answer within 300 ms/);
      expect(tor.error).toMatch(/kept the last good download/);
      expect(readFileSync(feedCachePath(copy, 'tor')).equals(before)).toBe(true);
    } finally {
      faults.delete('tor');
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('keeps the last good data of every feed that fails, is cut short, garbled or shrunk', async () => {
    const good = answers();
    const before = new Map<string, Buffer>(FEEDS.map((f) => [f.name, readFileSync(feedCachePath(dir, f.name))]));
    const faulted: [string, Fault, RegExp][] = [
      ['nordvpn', '500', /HTTP 500/],
      ['aws', 'garbage', /fewer than the minimum|lines bad/],
      ['ipsum', 'shrunk', /down from/],
      ['google_one', 'truncated', /cut short/],
      ['blocklist_de', '404', /HTTP 404/],
    ];
    for (const [name, fault] of faulted) faults.set(name, fault);
    requests.clear();
    const r = await updateDataset(config, dir, options);
    for (const [name] of faulted) faults.delete(name);
    expect(r.ok).toBe(false);
    for (const [name, , why] of faulted) {
      const f = r.feeds.find((x) => x.name === name)!;
      expect(f.state, name).toBe('failed');
      expect(f.error, name).toMatch(why);
      expect(f.error, name).toMatch(/kept the last good download/);
      expect(readFileSync(feedCachePath(dir, name)).equals(before.get(name)!), name).toBe(true);
    }
    // Retried: network errors and 5xx, not 404.
    expect(requests.get('nordvpn')).toBe(3);
    expect(requests.get('blocklist_de')).toBe(1);
    expect(r.feeds.find((f) => f.name === 'relay')!.state).toBe('unchanged');
    // The new build answers exactly as the old one.
    expect(answers()).toEqual(good);
  });

  it('takes HTTP-compressed bodies (Content-Length of the compressed bytes) and refuses one cut short', async () => {
    const before = readFileSync(feedCachePath(dir, 'tor'));
    faults.set('relay', 'gzip');
    faults.set('tor', 'gzip-truncated');
    requests.clear();
    const r = await updateDataset(config, dir, options);
    faults.clear();
    const relay = r.feeds.find((f) => f.name === 'relay')!;
    expect(relay.state, relay.error).toBe('updated');
    expect(
      readFileSync(feedCachePath(dir, 'relay')).equals(
        readFileSync(join(SHARED_DATA, 'feeds', FEEDS.find((f) => f.name === 'relay')!.file)),
      ),
    ).toBe(true);
    expect(requests.get('relay')).toBe(1);
    expect(r.feeds.find((f) => f.name === 'tor')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/kept the last good download/),
    });
    expect(readFileSync(feedCachePath(dir, 'tor')).equals(before)).toBe(true);
  });

  it("downloads a feed whose URL changed whole: the old download's validators are not sent to the new URL", async () => {
    const moved = { ...config, feeds: config.feeds.map((f) => (f.name === 'tor' ? { ...f, source: `${base}/moved-tor` } : f)) };
    requests.clear();
    const r = await updateDataset(moved, dir, options);
    expect(r.feeds.find((f) => f.name === 'tor')).toMatchObject({ state: 'updated' });
    expect(requests.get('moved-tor')).toBe(1);
    expect(readFileSync(feedCachePath(dir, 'tor')).equals(readFileSync(join(SHARED_DATA, 'feeds', FEEDS[1].file)))).toBe(true);
    // Asked again at the same URL, the new download's own date is sent, and its 304 keeps it.
    const again = await updateDataset(moved, dir, options);
    expect(again.feeds.find((f) => f.name === 'tor')).toMatchObject({ state: 'unchanged' });
  });

  it('refuses a list with an entry wider than its feed takes (0.0.0.0/0, ::/0), keeping the last good one; the feed\'s "widest" takes it', async () => {
    const r0 = await updateDataset(config, dir, options);
    expect(r0.ok).toBe(true);
    const good = answers();
    const before = new Map<string, Buffer>(FEEDS.map((f) => [f.name, readFileSync(feedCachePath(dir, f.name))]));
    faults.set('tor', 'everything');
    faults.set('relay', 'everything');
    const r = await updateDataset(config, dir, options);
    expect(r.ok).toBe(false);
    expect(r.feeds.find((f) => f.name === 'tor')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(
        /^refused: the entry 0\.0\.0\.0-255\.255\.255\.255 covers \d+ public IPv4 addresses, more than a \/8 .*kept the last good download$/,
      ),
    });
    expect(r.feeds.find((f) => f.name === 'relay')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^refused: the entry ::-ffff:.* covers public IPv6 space wider than a \/16/),
    });
    for (const name of ['tor', 'relay']) expect(readFileSync(feedCachePath(dir, name)).equals(before.get(name)!), name).toBe(true);
    // Addresses on no list answer as before: nothing flagged them.
    expect(answers()).toEqual(good);
    const engine = openSync({ data: dir });
    expect([engine.threat('9.9.9.9').is_tor, engine.threat('2600::1').is_icloud_relay]).toEqual([false, false]);
    engine.close();

    // Told to take any entry, the feed takes the list, and the line means what it says.
    const wide = { ...config, feeds: config.feeds.map((f) => (f.name === 'tor' ? { ...f, widest: { ipv4: 0 } } : f)) };
    expect(await takenKnowingly(wide, 'tor')).toMatchObject({ is_tor: true });
  });

  it('refuses a list whose covered addresses jump more than tenfold (252 adjacent /9s, each narrower than a /8), keeping the last good one; --allow-growth takes it', async () => {
    faults.clear();
    const r0 = await updateDataset(config, dir, options);
    expect(r0.ok).toBe(true);
    const good = answers();
    const before = readFileSync(feedCachePath(dir, 'blocklist_de'));
    faults.set('blocklist_de', 'ninths');
    const r = await updateDataset(config, dir, options);
    expect(r.feeds.find((f) => f.name === 'blocklist_de')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(
        /^its IPv4 entries cover \d+ addresses, up from \d+ \(more than 10 times; --allow-growth takes it\); kept the last good download$/,
      ),
    });
    expect(readFileSync(feedCachePath(dir, 'blocklist_de')).equals(before)).toBe(true);
    // Every other feed, as it was, passed the same rule.
    expect(r.feeds.filter((f) => f.name !== 'blocklist_de').every((f) => f.state !== 'failed')).toBe(true);
    expect(answers()).toEqual(good);
    expect(await takenKnowingly(config, 'blocklist_de')).toMatchObject({ is_known_abuser: true });
  });

  /** An update told to take growth (the faults still served): the feed is updated; the threat object of 9.9.9.9 after it. */
  async function takenKnowingly(cfg: ThreatConfig, feed: string) {
    const taken = await updateDataset(cfg, dir, { ...options, allowGrowth: true });
    faults.clear();
    expect(taken.feeds.find((f) => f.name === feed)).toMatchObject({ state: 'updated' });
    const engine = openSync({ data: dir });
    try {
      return engine.threat('9.9.9.9');
    } finally {
      engine.close();
    }
  }
});

describe('iprecord update without a network', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-offline-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'fails each download whose host does not resolve at once, without retries, and swaps in no build',
    async () => {
      // .invalid never resolves (RFC 6761): as a machine offline answers every name.
      const config = parseThreatConfig(
        {
          sources: SMALL_SOURCES,
          feeds: ['a', 'b', 'c'].map((name) => ({
            name,
            source: `http://iprecord-offline.invalid/${name}.txt`,
            format: 'list',
            categories: ['attacker'],
          })),
        },
        dir,
      );
      const first = await buildAndSwap(config, dir, { dataset: false });
      const current = readFileSync(join(dir, CURRENT_FILE), 'utf8');
      const started = Date.now();
      // Retries with a backoff of 10 s each: a download that went through them would take over a minute.
      const result = await updateDataset(config, dir, { retries: 3, backoffMs: 10_000 });
      console.log(`update offline: ${result.feeds.length} feeds failed in ${Date.now() - started} ms`);
      expect(result.feeds.map((f) => [f.state, f.error])).toEqual(
        ['a', 'b', 'c'].map(() => ['failed', 'iprecord-offline.invalid does not resolve (ENOTFOUND)']),
      );
      expect(result.ok).toBe(false);
      expect(result.build).toBeNull();
      expect(result.buildDir).toBe(first.buildDir);
      expect(readFileSync(join(dir, CURRENT_FILE), 'utf8')).toBe(current);
    },
    HANG_MS,
  );
});
