/**
 * `mergeThreat` (compile/merge.ts): a base dataset with a build's feeds
 * merged in answers as the same databases compiled with the feeds from
 * the start (`compileDataset` given the tree, the reference), at both
 * edges of every range of either and at random addresses, for feeds drawn
 * at random over the fixture databases' networks (attacker and datacenter
 * lists: the datacenter one types the networks it covers as hosting).
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { parseThreatConfig } from '../../../src/compile/feeds/config.js';
import { ThreatTree } from '../../../src/compile/feeds/tree.js';
import { buildAndSwap } from '../../../src/compile/feeds/update.js';
import { openSources } from '../../../src/compile/run.js';
import { Dataset } from '../../../src/dataset/format.js';
import { THREAT_FILE } from '../../../src/dataset/store.js';
import { isIprecordError, openSync, type Engine } from '../../../src/index.js';
import { formatIp } from '../../../src/ip/format.js';
import { specialTable } from '../../../src/ip/special.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { prng, seed } from '../../helpers/env.js';
import { testDb } from '../../helpers/maxmind.js';

const db = (name: string) => testDb(FIXTURES_DIR, name);
const SOURCES = {
  geo: [db('GeoIP2-City-Fixture'), db('DBIP-City-Lite-Fixture')],
  asn: [db('GeoIP2-ISP-Fixture'), db('GeoLite2-ASN-Fixture')],
  anonymous: [db('GeoIP2-Anonymous-IP-Fixture')],
};

/** Every answer but the clock's: time_zone by its name. */
function answer(engine: Engine, ip: string): string {
  try {
    const r = engine.lookup(ip);
    return JSON.stringify({ ...r, time_zone: r.time_zone?.name ?? null });
  } catch (e) {
    if (!isIprecordError(e)) throw e;
    return e.message;
  }
}

/** The first and last address of each IPv4 range of a dataset file. */
function edges4(file: string): number[] {
  const s = new Dataset(readFileSync(file), file).starts4;
  return [...s].flatMap((start, i) => [start, ((i + 1 < s.length ? s[i + 1] : 0) - 1) >>> 0]);
}

describe('a threat build merged into a base dataset', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-merge-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers as the databases compiled with the feeds from the start', async () => {
    const next = prng(seed());
    // Feed entries over the fixtures' own IPv4 ranges, /20 to /32, and some IPv6 blocks.
    const plain = openSync(SOURCES);
    const starts = edges4(plain.info().dataset.path).filter((_, i) => i % 2 === 0 && next() < 0.5);
    plain.close();
    const draw = () =>
      starts
        .filter(() => next() < 0.4)
        .map((s) => {
          const prefix = 20 + Math.floor(next() * 13);
          const block = (s & (prefix === 32 ? 0xffffffff : ~(0xffffffff >>> prefix))) >>> 0;
          return `${formatIp(4, [0, 0, 0, block])}/${prefix}`;
        });
    const attacker = [...draw(), '2a02:cf40::/32'];
    const datacenter = draw();
    writeFileSync(join(dir, 'attacker.txt'), attacker.join('\n') + '\n');
    writeFileSync(join(dir, 'datacenter.txt'), datacenter.join('\n') + '\n');
    const config = parseThreatConfig(
      {
        feeds: [
          { name: 'drawn-attacker', source: join(dir, 'attacker.txt'), format: 'list', categories: ['attacker'] },
          { name: 'drawn-datacenter', source: join(dir, 'datacenter.txt'), format: 'list', categories: ['datacenter'] },
        ],
      },
      dir,
    );
    const { buildDir } = await buildAndSwap(config, join(dir, 'data'), { dataset: false });
    const threat = join(buildDir, THREAT_FILE);

    // The reference: one compile with the tree. The subject: open() merges the tree into the base it compiled.
    const reference = join(dir, 'reference.iprd');
    const bytes = readFileSync(threat);
    writeFileSync(reference, compileDataset(openSources(SOURCES), new ThreatTree(bytes, threat), specialTable(), 'reference').toBuffer());
    const merged = openSync({ ...SOURCES, threat });
    const whole = openSync({ dataset: reference });
    try {
      const ips = [...new Set([...edges4(merged.info().dataset.path), ...edges4(reference)])].map((v) => formatIp(4, [0, 0, 0, v]));
      for (let i = 0; i < 2000; i++) ips.push(formatIp(4, [0, 0, 0, (next() * 2 ** 32) >>> 0]));
      ips.push('2a02:cf40::1', '2a02:cf40:ffff::1', '2001:218::1', '::81.2.69.142');
      const wrong = ips.filter((ip) => answer(merged, ip) !== answer(whole, ip));
      expect(wrong.slice(0, 5).map((ip) => `${ip}: ${answer(merged, ip)} against ${answer(whole, ip)}`)).toEqual([]);
      // The feeds are in the answers: some addresses listed, some networks typed by the datacenter list.
      const records = ips.map((ip) => answer(merged, ip)).filter((a) => a.startsWith('{'));
      expect(records.some((r) => r.includes('"is_known_attacker":true'))).toBe(true);
      expect(records.some((r) => r.includes('"is_datacenter":true'))).toBe(true);
    } finally {
      merged.close();
      whole.close();
    }
  });
});
