/**
 * `open({ data, watch: true })` while the dataset is swapped over and over:
 * lookups in a loop never fail and never mix two builds.
 */

import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, type Threat } from '../../src/index.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { hasSharedData, SHARED_DATA } from '../helpers/env.js';
import { until } from '../helpers/wait.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

const present = hasSharedData();
const d = present ? describe : describe.skip;

d('watched dataset swapped under load', () => {
  // Made only when the suite runs: a skipped suite's body runs too, but not its afterAll.
  const dir = present ? mkdtempSync(join(tmpdir(), 'iprecord-watch-')) : '';
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const feeds = join(SHARED_DATA, 'feeds');
  const tor = { name: 'tor', source: join(feeds, 'tor/tor_exits.ipset'), format: 'list', categories: ['tor'] };
  const vpn = { name: 'nordvpn', source: join(feeds, 'vpn/open-source-vpn-ip-lists/nordvpn.txt'), format: 'list', categories: ['vpn'] };
  // Build A: Tor only. Build B: Tor and NordVPN.
  const A = parseThreatConfig({ feeds: [tor], sources: SMALL_SOURCES }, dir);
  const B = parseThreatConfig({ feeds: [tor, vpn], sources: SMALL_SOURCES }, dir);

  it('answers from one build or the other, never an error or a mix', async () => {
    await buildAndSwap(A, dir);
    const engine = await open({ data: dir, watch: true });
    const reloads: string[] = [];
    const errors: Error[] = [];
    engine.on('reload', (i) => reloads.push(i.loadedAt));
    engine.on('error', (e) => errors.push(e));
    // A Tor exit, the first NordVPN address of the list, an address on neither.
    const nord = readFileSync(vpn.source, 'utf8').split('\n')[0].trim();
    const probes = ['185.220.101.1', nord, '8.8.8.8'];
    // The answers of each build, from a fresh engine over the directory once it holds that build.
    const answersNow = async () => {
      const e = await open({ data: dir });
      const out = probes.map((ip) => e.threat(ip));
      e.close();
      return out;
    };
    const wantA = await answersNow();
    let wantB: Threat[] | null = null;

    const seen = { A: 0, B: 0 };
    let lookups = 0;
    // Four swaps, each way twice, however long a build takes.
    let swaps = 0;
    while (swaps < 4) {
      // Swap to the other build, then look up while the watcher reloads.
      await buildAndSwap(swaps % 2 === 0 ? B : A, dir);
      wantB ??= await answersNow();
      // The probe on NordVPN's list tells the builds apart.
      expect([wantA[1].is_vpn, wantB[1].is_vpn]).toEqual([false, true]);
      swaps++;
      const until = Date.now() + 400;
      while (Date.now() < until) {
        const got: Threat[] = probes.map((ip) => engine.threat(ip));
        lookups += probes.length;
        const isA = JSON.stringify(got) === JSON.stringify(wantA);
        const isB = JSON.stringify(got) === JSON.stringify(wantB);
        expect(isA || isB).toBe(true);
        if (isA) seen.A++;
        else seen.B++;
        await new Promise((r) => setImmediate(r));
      }
    }
    engine.close();
    console.log(
      `watch: ${swaps} swaps, ${reloads.length} reloads, ${lookups} lookups (${seen.A} rounds on build A, ${seen.B} on B), ${errors.length} errors`,
    );
    expect(errors).toEqual([]);
    expect(reloads.length).toBeGreaterThanOrEqual(4);
    expect(seen.A).toBeGreaterThan(0);
    expect(seen.B).toBeGreaterThan(0);
    expect(lookups).toBeGreaterThan(1000);
  });

  it('keeps its data and emits error when the new build is damaged', async () => {
    await buildAndSwap(A, dir);
    const engine = await open({ data: dir, watch: true });
    const before = engine.threat('185.220.101.1');
    const failed = new Promise<Error>((r) => engine.once('error', r));
    // A build whose dataset is garbage, swapped in the way update does it (renamed over: the engine may have mapped the good one).
    const { buildDir } = await buildAndSwap(A, dir);
    writeFileSync(join(buildDir, 'garbage'), 'garbage');
    renameSync(join(buildDir, 'garbage'), join(buildDir, 'dataset.iprd'));
    // `current` written again (the same build) so the watcher fires after the damage.
    writeFileSync(join(dir, 'current'), readFileSync(join(dir, 'current')));
    const e = await failed;
    expect(e.message).toMatch(/not a valid iprecord dataset/);
    expect(engine.threat('185.220.101.1')).toEqual(before);
    engine.close();
  });

  it('keeps answering from the old build while a new one is checked, and never from one with a byte changed', async () => {
    await buildAndSwap(A, dir);
    const engine = await open({ data: dir, watch: true });
    // An address with a city, whose name the damage changes.
    const probe = '1.0.0.1';
    expect(engine.field(probe, 'city')).toBe('South Brisbane');
    // The record less its clock and its count (lookups of the minutes before: it moves when a minute ends during the loop).
    const answer = (): Record<string, unknown> => ({
      ...(JSON.parse(engine.lookupJson(probe)) as Record<string, unknown>),
      time_zone: null,
      count: null,
    });
    const before = answer();
    const city = before.city as string;
    const failed = new Promise<Error>((r) => engine.once('error', r));
    // The same build with one letter of the probe's city changed, renamed over the dataset as a copy would be.
    const { buildDir } = await buildAndSwap(A, dir);
    const bytes = readFileSync(join(buildDir, 'dataset.iprd'));
    const at = bytes.indexOf(Buffer.from(JSON.stringify(city)));
    expect(at).toBeGreaterThan(0);
    bytes[at + city.length] ^= 1;
    writeFileSync(join(buildDir, 'copy'), bytes);
    renameSync(join(buildDir, 'copy'), join(buildDir, 'dataset.iprd'));
    writeFileSync(join(dir, 'current'), readFileSync(join(dir, 'current')));
    // Lookups go on while the reload checks the file off this thread.
    let during = 0;
    let settled = false;
    void failed.then(() => (settled = true));
    while (!settled) {
      expect(answer()).toEqual(before);
      during++;
      await new Promise((r) => setImmediate(r));
    }
    expect((await failed).message).toMatch(/checksum mismatch/);
    expect(during).toBeGreaterThan(1);
    expect(answer()).toEqual(before);
    engine.close();
  });

  // What wakes the watcher is the directory's, not the memory mode's: once, with the files mapped.
  it.skipIf(process.env.IPRECORD_MEMORY === 'read')(
    'reloads when `current` is swapped, not when an update starts (feeds, sources, a new build, the lock)',
    async () => {
      await buildAndSwap(A, dir);
      const engine = await open({ data: dir, watch: true });
      let reloads = 0;
      engine.on('reload', () => reloads++);
      // What an update does before its swap.
      writeFileSync(join(dir, '.lock'), 'x');
      mkdirSync(join(dir, 'builds', 'next'), { recursive: true });
      writeFileSync(join(dir, 'builds', 'next', 'threat.bin'), 'x');
      mkdirSync(join(dir, 'feeds'), { recursive: true });
      writeFileSync(join(dir, 'feeds', 'tor'), '1.2.3.4\n');
      rmSync(join(dir, '.lock'));
      await new Promise((r) => setTimeout(r, 600));
      expect(reloads).toBe(0);
      rmSync(join(dir, 'builds', 'next'), { recursive: true });
      await buildAndSwap(A, dir);
      await until(() => reloads > 0, 'the reload of the swapped build');
      engine.close();
    },
    20_000,
  );
});
