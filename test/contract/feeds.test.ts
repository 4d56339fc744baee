/**
 * The real threat lists of ../shared/data/feeds: each parses with the entry
 * count and the IPv4 coverage that MANIFEST.md states for it, with no bad
 * line; compiled together, the engine answers their flags.
 */

import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type Engine } from '../../src/index.js';
import { buildDataset } from '../../src/compile/feeds/build.js';
import { coveredAddresses } from '../../src/compile/feeds/prepare.js';
import { parseFeed, type FeedFormat, type ParseOptions } from '../../src/compile/feeds/parse.js';
import { hasSharedData, SHARED_DATA } from '../helpers/env.js';
import { testDb } from '../helpers/maxmind.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { SHARED_FEEDS, sharedFeedConfig } from '../helpers/feeds.js';
import { sharedFeedsData } from '../helpers/shared-build.js';

const present = hasSharedData();
const d = present ? describe : describe.skip;
const FEEDS = join(SHARED_DATA, 'feeds');

interface Row {
  file: string;
  entries: number;
  ipv4: number;
  ipv6Entries: number;
}

/** The table of MANIFEST.md: file, entries, unique IPv4 addresses, IPv6 entries. */
function manifest(): Row[] {
  return readFileSync(join(FEEDS, 'MANIFEST.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| ') && l.includes('data/feeds/'))
    .map((l) => {
      const c = l.split('|').map((x) => x.trim());
      const n = (s: string) => Number(s.replace(/,/g, ''));
      return { file: c[2].replace(/^data\/feeds\//, ''), entries: n(c[9]), ipv4: n(c[10]), ipv6Entries: n(c[11]) };
    });
}

function formatOf(file: string): { format: FeedFormat; options: ParseOptions } {
  const f = SHARED_FEEDS.find((x) => x.source === file);
  if (!f) return { format: 'list', options: {} };
  const { minHits: _drop, ...options } = ('options' in f ? f.options : {}) as ParseOptions;
  return { format: f.format as FeedFormat, options };
}

d('shared threat feeds', () => {
  const rows = present ? manifest() : [];

  it('MANIFEST.md lists the feeds', () => {
    expect(rows.length).toBe(80);
  });

  it.each(rows.map((r) => [r.file, r] as const))('%s: entries and IPv4 coverage as MANIFEST.md states, no bad line', (file, row) => {
    const { format, options } = formatOf(file);
    const parsed = parseFeed(readFileSync(join(FEEDS, file)), format, options);
    expect(parsed.badLines).toEqual([]);
    expect(parsed.entries).toBe(row.entries);
    expect(coveredAddresses(parsed.v4, parsed.v6).v4).toBe(row.ipv4);
    expect(parsed.v6.length).toBe(row.ipv6Entries);
  });
});

d('engine with the shared feeds compiled', () => {
  let dir: string;
  let result: Awaited<ReturnType<typeof sharedFeedsData>>;
  let engine: Engine;
  beforeAll(async () => {
    // The feeds built once a run for the suites that read them (the asn.type suite too).
    result = await sharedFeedsData();
    dir = result.dir;
    engine = await open({ data: dir });
  }, 300_000);
  afterAll(() => engine?.close());

  /** The first address of every entry of a shared list, as text (single IPs and CIDR bases). */
  const firstOf = (file: string, max = 200) =>
    readFileSync(join(FEEDS, file), 'utf8')
      .split('\n')
      .filter((l) => /^\d/.test(l))
      .slice(0, max)
      .map((l) => l.split(/[/\s,;]/)[0]);

  it('compiles every feed without a bad line', () => {
    expect(result.feeds.every((f) => f.state === 'ok' && f.badLines.length === 0)).toBe(true);
    expect(engine.info().feeds.length).toBe(SHARED_FEEDS.length);
    expect(engine.info().lists.every((l) => l.state !== 'missing')).toBe(true);
  });

  it('flags the addresses of each category', () => {
    const flag = (file: string, key: 'is_tor' | 'is_vpn' | 'is_proxy' | 'is_datacenter' | 'is_icloud_relay' | 'is_known_abuser') => {
      let checked = 0;
      for (const ip of firstOf(file)) {
        let t;
        try {
          t = engine.threat(ip);
        } catch {
          continue; // private or reserved addresses in a list answer errors
        }
        expect(t[key], `${file}: ${ip}`).toBe(true);
        checked++;
      }
      expect(checked).toBeGreaterThan(50);
    };
    flag('tor/tor_exits.ipset', 'is_tor');
    flag('vpn/open-source-vpn-ip-lists/nordvpn.txt', 'is_vpn');
    flag('proxy/sslproxies_30d.ipset', 'is_proxy');
    flag('datacenter/x4bnet/ipv4.txt', 'is_datacenter');
    flag('relay/ipranges-apple-proxy/ipv4.txt', 'is_icloud_relay');
    flag('abuser/blocklist_de.ipset', 'is_known_abuser');
  });

  it('does not call bogons attackers because firehol_level1 lists them, nor routed space bogons because an old list does', () => {
    // 23.135.225.0/24 is in Team Cymru's fullbogons and in firehol_level1 (which includes fullbogons); the network data routes it now.
    const r = engine.lookup('23.135.225.1');
    expect(r.asn).not.toBeNull();
    expect(r.threat.is_bogon).toBe(false);
    expect(r.threat.blocklists.map((b) => b.name)).not.toContain('firehol_level1');
    // Apple relay egress addresses are in X4BNet's VPN list, but are relay, not VPN.
    const relay = engine.threat(firstOf('relay/ipranges-apple-proxy/ipv4.txt', 1)[0]);
    expect(relay).toMatchObject({ is_icloud_relay: true, is_vpn: false });
  });

  it('keeps Tor, VPN, relay and datacenter apart where lists and network types overlap', () => {
    // X4BNet's VPN ranges cover some Tor exits: those are Tor, not VPN.
    const tor = firstOf('tor/tor_exits.ipset', 300).map((ip) => engine.threat(ip));
    expect(tor.every((t) => t.is_tor)).toBe(true);
    expect(tor.filter((t) => t.is_vpn).length).toBe(0);
    // Private relay egress runs on Akamai's and Fastly's networks (typed hosting): it is relay, not datacenter or VPN.
    const relay = firstOf('relay/ipranges-apple-proxy/ipv4.txt', 300).map((ip) => engine.threat(ip));
    expect(relay.every((t) => t.is_icloud_relay && !t.is_vpn && !t.is_datacenter && t.scores?.vpn_score === 0)).toBe(true);
  });

  it('lists blocklists and scores in the full record', () => {
    const r = engine.lookup('77.90.185.20'); // ipsum: on 10 lists
    expect(r.threat.is_known_attacker).toBe(true);
    expect(r.threat.blocklists.map((b) => b.name)).toContain('ipsum');
    for (const b of r.threat.blocklists) expect(Object.keys(b)).toEqual(['name', 'site', 'type']);
    expect(r.threat.scores?.threat_score).toBeGreaterThanOrEqual(90);
    expect(r.threat.scores?.trust_score).toBeLessThanOrEqual(10);
  });

  it('keeps its data when a reload finds a damaged threat.bin', async () => {
    const own = mkdtempSync(join(tmpdir(), 'iprecord-reload-'));
    const path = join(own, 'threat.bin');
    copyFileSync(join(dir, 'threat.bin'), path);
    // Fixture databases: each reload merges the feeds into their small dataset (into the default data's, it takes seconds).
    const e = await open({
      threat: path,
      geo: testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture'),
      asn: testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture'),
    });
    try {
      const before = e.threat('77.90.185.20');
      expect(before.is_known_attacker).toBe(true);
      writeFileSync(path + '.tmp', 'not a threat file');
      renameSync(path + '.tmp', path);
      await expect(e.reload()).rejects.toThrow(/not a valid threat.bin: bad magic/);
      expect(e.threat('77.90.185.20')).toEqual(before);
      copyFileSync(join(dir, 'threat.bin'), path);
      await e.reload();
      expect(e.threat('77.90.185.20')).toEqual(before);
    } finally {
      e.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

d('evidence counted once across the FireHOL levels', () => {
  it("an address DShield lists scores the same whether FireHOL's levels 1 to 3, which each carry a DShield list, list it too or not", async () => {
    const all = sharedFeedConfig();
    const only = (names: string[]) => ({ ...all, feeds: all.feeds.filter((f) => names.includes(f.name)) });
    const levels = only(['dshield', 'firehol_level1', 'firehol_level2', 'firehol_level3']);
    expect(levels.feeds.find((f) => f.name === 'firehol_level2')!.includes).toContain('dshield');
    const dirs = [mkdtempSync(join(tmpdir(), 'iprecord-ds-')), mkdtempSync(join(tmpdir(), 'iprecord-ds-'))];
    try {
      await buildDataset(levels, dirs[0], dirs[0], { dataset: false });
      await buildDataset(only(['dshield']), dirs[1], dirs[1], { dataset: false });
      // Scores come from the feeds alone: fixture databases keep the two merges small.
      const [withLevels, alone] = await Promise.all(
        dirs.map((data) =>
          open({ data, geo: testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture'), asn: testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture') }),
        ),
      );
      const listed = readFileSync(join(FEEDS, 'attacker/dshield.netset'), 'utf8')
        .split('\n')
        .filter((l) => /^\d/.test(l))
        .map((l) => l.split('/')[0].replace(/\.0$/, '.1'));
      let onLevels = 0;
      for (const ip of listed) {
        const a = withLevels.threat(ip);
        if (a.blocklists.length > 1) onLevels++;
        expect(a.scores, ip).toEqual(alone.threat(ip).scores);
      }
      console.log(`evidence: ${listed.length} DShield blocks, ${onLevels} also on FireHOL levels, scores the same as DShield's alone`);
      expect(onLevels).toBeGreaterThan(listed.length / 2);
      withLevels.close();
      alone.close();
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
