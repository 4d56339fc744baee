/**
 * Reading test databases laid out as MaxMind's test data: `source-data/`
 * holds a list of `{ network: record }` per database, `test-data/` the MMDB
 * written from it. MaxMind's own (../shared) and iprecord's fixtures/ both
 * use this layout.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
