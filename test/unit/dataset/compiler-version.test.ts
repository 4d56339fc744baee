/**
 * COMPILER_VERSION names what the compiler resolves (regions, zones,
 * network types...): cached datasets compile again only when it changes.
 * So it must change whenever the compiler's answers do. This test compiles
 * the fixture databases (every schema the fixtures have) and digests the
 * record of each range's first and last address (time_zone by its name
 * alone: the rest is the clock's), against the digest recorded with the
 * versions in `test/unit/dataset/compiler-output.json`: answers that changed with
 * the same versions (COMPILER_VERSION and DATASET_FORMAT_VERSION, both in
 * a dataset's key) fail, naming what to do.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Dataset } from '../../../src/dataset/format.js';
import { DATASET_FORMAT_VERSION } from '../../../src/dataset/layout.js';
import { COMPILER_VERSION } from '../../../src/dataset/locate.js';
import { isIprecordError, openSync } from '../../../src/index.js';
import { formatIp } from '../../../src/ip/format.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const RECORDED = fileURLToPath(new URL('./compiler-output.json', import.meta.url));

/** The digest of the answers at every range edge of a dataset compiled from the fixtures. */
function answersDigest(): { digest: string; ranges: number } {
  const db = (name: string) => testDb(FIXTURES_DIR, name);
  // The package's zone rules, whatever release the system's zoneinfo holds.
  const tzdir = process.env.TZDIR;
  process.env.TZDIR = join(FIXTURES_DIR, 'no-zoneinfo');
  const engine = openSync({
    geo: [db('GeoIP2-City-Fixture'), db('DBIP-City-Lite-Fixture')],
    asn: [db('GeoIP2-ISP-Fixture'), db('GeoLite2-ASN-Fixture')],
    anonymous: [db('GeoIP2-Anonymous-IP-Fixture')],
  });
  if (tzdir === undefined) delete process.env.TZDIR;
  else process.env.TZDIR = tzdir;
  try {
    expect(engine.info().timeZones.source).toBe('package');
    const ds = new Dataset(readFileSync(engine.info().dataset.path), 'the fixtures dataset');
    const hash = createHash('sha256');
    const answer = (ip: string) => {
      try {
        const r = engine.lookup(ip);
        hash.update(JSON.stringify({ ...r, time_zone: r.time_zone?.name ?? null }));
      } catch (e) {
        if (!isIprecordError(e)) throw e;
        hash.update(e.message);
      }
      hash.update('\n');
    };
    const s4 = ds.starts4;
    for (let i = 0; i < s4.length; i++) {
      answer(formatIp(4, [0, 0, 0, s4[i]]));
      answer(formatIp(4, [0, 0, 0, ((i + 1 < s4.length ? s4[i + 1] : 0) - 1) >>> 0]));
    }
    const s6 = ds.starts6;
    for (let i = 0; i < s6.length; i += 4) answer(formatIp(6, s6.subarray(i, i + 4)));
    return { digest: hash.digest('hex'), ranges: s4.length + s6.length / 4 };
  } finally {
    engine.close();
  }
}

describe('COMPILER_VERSION', () => {
  it("changes whenever the compiler's answers do (or the format's version does)", () => {
    const recorded = JSON.parse(readFileSync(RECORDED, 'utf8')) as { compilerVersion: number; formatVersion: number; answers: string };
    const { digest, ranges } = answersDigest();
    expect(ranges).toBeGreaterThan(50);
    const record = JSON.stringify({ compilerVersion: COMPILER_VERSION, formatVersion: DATASET_FORMAT_VERSION, answers: digest });
    // Either version is in a dataset's key (`datasetKey`): a member that widens a row raises the format's, and that is enough.
    const bumped = COMPILER_VERSION !== recorded.compilerVersion || DATASET_FORMAT_VERSION !== recorded.formatVersion;
    if (digest !== recorded.answers && !bumped)
      throw new Error(
        `the compiler's answers changed (${ranges} ranges of the fixtures) with COMPILER_VERSION still ${COMPILER_VERSION} and DATASET_FORMAT_VERSION ${DATASET_FORMAT_VERSION}: ` +
          `raise COMPILER_VERSION in src/dataset/locate.ts (so that cached datasets compile again), then write ${record.replace(`"compilerVersion":${COMPILER_VERSION}`, '"compilerVersion":<the new version>')} to test/unit/dataset/compiler-output.json`,
      );
    expect(record, 'test/unit/dataset/compiler-output.json, for these versions').toBe(JSON.stringify(recorded));
  });
});
