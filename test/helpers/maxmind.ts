/** Reading MaxMind's test source JSON: a list of { network: value } maps. */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_DATA } from './env.js';

export type SourceRecord = Record<string, unknown>;

export function sourceNetworks(name: string): [string, SourceRecord][] {
  const text = readFileSync(join(SHARED_DATA, 'maxmind-test', 'source-data', `${name}.json`), 'utf8');
  const list = JSON.parse(text) as Record<string, SourceRecord>[];
  return list.flatMap((entry) => Object.entries(entry));
}

export function testDb(name: string): string {
  return join(SHARED_DATA, 'maxmind-test', 'test-data', `${name}.mmdb`);
}

