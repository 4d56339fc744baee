/**
 * Reading test databases laid out as MaxMind's test data: `source-data/`
 * holds a list of `{ network: record }` per database, `test-data/` the MMDB
 * written from it. MaxMind's own (../shared) and iprecord's fixtures/ both
 * use this layout.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { open, type Engine } from '../../src/index.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';

export type SourceRecord = Record<string, unknown>;

export function sourceNetworks(root: string, name: string): [string, SourceRecord][] {
  const text = readFileSync(join(root, 'source-data', `${name}.json`), 'utf8');
  const list = JSON.parse(text) as Record<string, SourceRecord>[];
  return list.flatMap((entry) => Object.entries(entry));
}

export function testDb(root: string, name: string): string {
  return join(root, 'test-data', `${name}.mmdb`);
}

/**
 * Small geo and ASN databases (iprecord's fixtures) to open beside a
 * database under test: a dataset of them compiles in a fraction of a
 * second, where one with the default data takes seconds.
 */
export const SMALL = {
  geo: [testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture')],
  asn: [testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture')],
} as const;

/** The same, as the `sources` of a feed configuration: `iprecord build` compiles them in a second, not the default data in half a minute. */
export const SMALL_SOURCES = { geo: [...SMALL.geo], asn: [...SMALL.asn] };

/**
 * An engine over the small databases and a scratch folder, for a describe
 * block: opened before its tests, closed and removed after.
 */
export function smallEngineFor(prefix: string): { readonly dir: string; readonly engine: Engine } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let engine: Engine | null = null;
  beforeAll(async () => {
    engine = await open({ geo: [...SMALL.geo], asn: [...SMALL.asn] });
  });
  afterAll(() => {
    engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    get engine() {
      if (engine === null) throw new Error('the engine opens before the tests');
      return engine;
    },
  };
}
