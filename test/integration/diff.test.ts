/**
 * `iprecord diff` between builds of the small databases whose differences
 * are known: a Tor list grown by a /24 and an IPv6 /48, a list added and
 * one removed, and the location source changed; each figure checked
 * against what `lookup()` answers on either side.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, parseThreatConfig } from '../../src/build.js';
import { openSync } from '../../src/engine/engine.js';
import { compiledDataset } from '../../src/engine/inside.js';
import { DIFF_MEMBERS, diffEngines } from '../../src/evidence/diff.js';
import { ROOT } from '../helpers/env.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { SMALL_SOURCES, testDb } from '../helpers/maxmind.js';
import { diffSide } from '../../src/engine/inside.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function build(
  name: string,
  lists: Record<string, string>,
  sources: { geo: string[]; asn: string[] } = SMALL_SOURCES,
): Promise<string> {
  const feeds = Object.entries(lists).map(([list, text]) => {
    writeFileSync(join(dir, `${name}-${list}.txt`), text);
    return { name: list, source: join(dir, `${name}-${list}.txt`), format: 'list', categories: [list === 'tor' ? 'tor' : 'attacker'] };
  });
  const out = join(dir, name);
  await buildDataset(parseThreatConfig({ feeds, sources }, dir), out);
  return out;
}

const cli = (args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), ...args], { encoding: 'utf8', env: { ...process.env, IPRECORD_QUIET: '1' } });

describe('iprecord diff', () => {
  it('counts the space each member changed in, as lookup() answers it on either side; lists added, removed and changed', async () => {
    const old = await build('old', { tor: '185.220.101.1\n', bad: '203.0.113.7\n' });
    const grown = await build('new', { tor: '185.220.101.1\n5.6.7.0/24\n2a0b:f4c2:1::/48\n', worse: '198.51.100.1\n' });
    const a = openSync({ data: old });
    const b = openSync({ data: grown });
    try {
      const r = diffEngines(diffSide(a), diffSide(b), { before: old, after: grown });
      // The /24 and the /48 turned Tor (and so anonymous); nothing else of the records changed.
      expect(r.members['threat.is_tor']).toEqual({ ipv4: 256, ipv6_48s: 1 });
      expect(r.members['threat.is_anonymous']).toEqual({ ipv4: 256, ipv6_48s: 1 });
      for (const m of DIFF_MEMBERS.filter(
        (m) => m !== 'threat.is_tor' && m !== 'threat.is_anonymous' && m !== 'threat.is_known_attacker' && m !== 'threat.is_threat',
      ))
        expect(r.members[m], m).toEqual({ ipv4: 0, ipv6_48s: 0 });
      // The attacker list's one address went (documentation space answers no record) and another came: lookups agree.
      for (const ip of ['5.6.7.0', '5.6.7.255', '2a0b:f4c2:1::1', '2a0b:f4c2:1:ffff::1'])
        expect([a.lookup(ip).threat.is_tor, b.lookup(ip).threat.is_tor], ip).toEqual([false, true]);
      for (const ip of ['5.6.6.255', '5.6.8.0', '2a0b:f4c2:2::1']) expect(a.lookup(ip).threat.is_tor, ip).toBe(b.lookup(ip).threat.is_tor);
      expect(r.lists).toEqual({ added: ['worse'], removed: ['bad'], changed: [{ name: 'tor', before: '1 entries', after: '3 entries' }] });
      expect(r.changed.ipv4).toBeGreaterThanOrEqual(256);
    } finally {
      a.close();
      b.close();
    }
  });

  it("another location source: each member's changed space as the intervals between both datasets' ranges, each looked up, give it", async () => {
    const dbip = await build('dbip', {});
    const geoip = await build('geoip', {}, { geo: [testDb(FIXTURES_DIR, 'GeoIP2-City-Fixture')], asn: [...SMALL_SOURCES.asn] });
    const a = openSync({ data: dbip });
    const b = openSync({ data: geoip });
    try {
      const r = diffEngines(diffSide(a), diffSide(b));
      // Same databases on both sides: nothing changed.
      const again = openSync({ data: dbip });
      expect(diffEngines(diffSide(a), diffSide(again)).changed).toEqual({ ipv4: 0, ipv6_48s: 0 });
      again.close();
      // The reference: every interval between the two datasets' range starts, looked up at its first address (no
      // record read once per row), its size added to each member answered otherwise.
      const starts = [...new Set([...compiledDataset(a).starts4, ...compiledDataset(b).starts4])].sort((p, q) => p - q);
      const want = Object.fromEntries(DIFF_MEMBERS.map((m) => [m, 0]));
      const pa = a.select(DIFF_MEMBERS);
      const pb = b.select(DIFF_MEMBERS);
      starts.forEach((lo, k) => {
        const hi = k + 1 < starts.length ? starts[k + 1] - 1 : 0xffffffff;
        const ip = `${lo >>> 24}.${(lo >>> 16) & 255}.${(lo >>> 8) & 255}.${lo & 255}`;
        const x = pa.try(ip) as Record<string, unknown>;
        const y = pb.try(ip) as Record<string, unknown>;
        if ('status' in x) return;
        for (const m of DIFF_MEMBERS) if (x[m] !== y[m]) want[m] += hi - lo + 1;
      });
      expect(Object.fromEntries(DIFF_MEMBERS.map((m) => [m, r.members[m].ipv4]))).toEqual(want);
      expect(want.country_code).toBeGreaterThan(0);
      expect(r.changed.ipv4).toBeLessThanOrEqual(r.answered.ipv4);
      // The two location databases themselves, each compiled with the same network data: what the builds of them say.
      const geo = [SMALL_SOURCES.geo[0], testDb(FIXTURES_DIR, 'GeoIP2-City-Fixture')];
      const direct = cli(['diff', geo[0], geo[1], '--asn', SMALL_SOURCES.asn[0], '--json']);
      expect(direct.status, direct.stderr).toBe(0);
      expect((JSON.parse(direct.stdout) as { members: unknown }).members).toEqual(r.members);
      expect(cli(['diff', geo[0], dbip]).stderr).toMatch(/name two builds or two location databases, not one of each/);
      expect(cli(['diff', dbip, geoip, '--asn', SMALL_SOURCES.asn[0]]).stderr).toMatch(/--asn is for two location databases/);
    } finally {
      a.close();
      b.close();
    }
  });

  it('on the command line: a table, --json, --previous over a directory built twice (the second build saying what changed, info() holding it), and usage errors', async () => {
    const data = join(dir, 'twice');
    // Two builds of one directory, as iprecord build makes them (builds/, current).
    writeFileSync(
      join(dir, 'twice.json'),
      JSON.stringify({
        feeds: [{ name: 'tor', source: join(dir, 'twice-tor.txt'), format: 'list', categories: ['tor'] }],
        sources: SMALL_SOURCES,
      }),
    );
    const said: string[] = [];
    for (const text of ['185.220.101.1\n', '185.220.101.1\n185.220.101.2\n']) {
      writeFileSync(join(dir, 'twice-tor.txt'), text);
      const b = cli(['build', '--config', join(dir, 'twice.json'), '--out', data]);
      expect(b.status, b.stderr).toBe(0);
      said.push(b.stderr);
    }
    expect(readdirSync(join(data, 'builds')).length).toBe(2);
    // The first build has none before it; the second says in a line what changed, and info() holds it.
    expect(said[0]).not.toMatch(/changed since/);
    expect(said[1]).toMatch(
      /^changed since the build before: 1 IPv4 addresses \([\d.e-]+ %\) and 0 IPv6 \/48s \(most: threat\.is_tor 1, threat\.is_anonymous 1\); lists 0 added, 0 removed, 1 changed$/m,
    );
    const info = cli(['info', '--data', data]);
    const changes = (JSON.parse(info.stdout) as { changes: { members: Record<string, { ipv4: number }>; lists: unknown } }).changes;
    expect(Object.keys(changes.members).sort()).toEqual(['threat.is_anonymous', 'threat.is_tor']);
    expect(changes.members['threat.is_tor'].ipv4).toBe(1);
    const json = cli(['diff', '--previous', '--data', data, '--json']);
    expect(json.status, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { members: Record<string, { ipv4: number }>; lists: { changed: unknown[] } };
    expect(parsed.members['threat.is_tor'].ipv4).toBe(1);
    // A sample: a log's lines (the address first, with a port), a private address, one unchanged.
    writeFileSync(
      join(dir, 'access.log'),
      '5.6.7.1 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1\n[2a0b:f4c2:1::5]:443 - - [28/Nov/2026:10:00:01 +0000] "GET / HTTP/1.1" 200 1\n10.0.0.1 - - x\n185.220.101.1 - - x\n',
    );
    const sampled = cli(['diff', join(dir, 'old'), join(dir, 'new'), '--sample', join(dir, 'access.log'), '--json']);
    expect(sampled.status, sampled.stderr).toBe(0);
    const sample = (
      JSON.parse(sampled.stdout) as {
        sample: {
          addresses: number;
          answered: number;
          changed: number;
          members: Record<string, { changed: number; examples: { ip: string }[] }>;
        };
      }
    ).sample;
    expect([sample.addresses, sample.answered, sample.changed]).toEqual([4, 3, 2]);
    expect(sample.members['threat.is_tor'].examples.map((e) => e.ip)).toEqual(['5.6.7.1', '2a0b:f4c2:1::5']);
    expect(sample.members.country_code.changed).toBe(0);
    // A CSV whose header names its address column.
    writeFileSync(join(dir, 'events.csv'), 'time,client_ip,path\n1,5.6.7.9,/\n2,185.220.101.1,/x\n');
    const csv = cli(['diff', join(dir, 'old'), join(dir, 'new'), '--sample', join(dir, 'events.csv')]);
    expect(csv.stdout).toMatch(/events\.csv: 2 addresses, 2 with a record on both sides, 1 answered otherwise/);
    expect(csv.stdout).toMatch(/^ {2}threat\.is_tor +1 {2}e\.g\. 5\.6\.7\.9: false -> true$/m);
    const table = cli(['diff', join(dir, 'old'), join(dir, 'new')]);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^threat\.is_tor +256 \([\d.e-]+ %\) +1 \(/m);
    expect(table.stdout).toMatch(/^lists: 1 added \(worse\), 1 removed \(bad\), 1 changed$/m);
    for (const [args, message] of [
      [['diff', join(dir, 'old')], 'name two builds (old, new), or --previous'],
      [['diff', '--previous', join(dir, 'old')], '--previous compares the builds of one dataset directory'],
      [['diff', '--previous', '--data', join(dir, 'old')], 'holds no build before its current one'],
    ] as const) {
      const r = cli([...args]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
