/**
 * `asn.type` as the compiled default data answers it, on networks the
 * rules were written from (fixtures/reference/networks.tsv) and on networks
 * outside that list that no rule, brand or threshold was written from
 * (fixtures/reference/networks-held-out.tsv): each network looked up at
 * the middle of its largest IPv4 range, without threat feeds and with the
 * shared feeds merged in (their datacenter lists type networks whose names
 * state nothing). Prints the confusion matrices.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset } from '../../src/compile/feeds/build.js';
import { classifyAsn } from '../../src/compile/asn/classify.js';
import { defaultAsnSources } from '../../src/data.js';
import { open, type Engine } from '../../src/index.js';
import { formatIp } from '../../src/ip/format.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { hasSharedData, ROOT } from '../helpers/env.js';
import { sharedFeedConfig } from '../helpers/feeds.js';

const TYPES = ['isp', 'hosting', 'business', 'education', 'government'] as const;

function list(file: string): { asn: number; type: string }[] {
  return readFileSync(`${ROOT}/fixtures/reference/${file}`, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('asn\t'))
    .map((l) => {
      const [asn, type] = l.split('\t');
      return { asn: Number(asn), type };
    });
}

/** Each ASN's largest IPv4 range in the default data (its middle address) and name. */
function largest(): Map<number, { ip: string; size: number; name: string }> {
  const out = new Map<number, { ip: string; size: number; name: string }>();
  const toNumber = (ip: string) => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
  for (const line of readFileSync(defaultAsnSources().files[0], 'utf8').split('\n')) {
    const [from, to, asn, name] = splitCsvLine(line) ?? [];
    if (to === undefined) continue;
    const lo = toNumber(from);
    const size = toNumber(to) - lo + 1;
    const n = Number(asn);
    if ((out.get(n)?.size ?? 0) < size) out.set(n, { ip: formatIp(4, [0, 0, 0, lo + Math.floor(size / 2)]), size, name });
  }
  return out;
}

let ranges: ReturnType<typeof largest>;
beforeAll(() => {
  ranges = largest();
});

const CASES = [
  ['the networks the rules were written from', 'networks.tsv', 0.95],
  ['networks no rule was written from', 'networks-held-out.tsv', 0.85],
] as const;

/** Checks and prints how many of a list's networks an engine types right. */
function measure(engine: Engine, what: string, file: string, least: number): void {
  const networks = list(file);
  const matrix = new Map<string, number>();
  let right = 0;
  let byName = 0;
  for (const n of networks) {
    const range = ranges.get(n.asn);
    expect(range, `AS${n.asn} has an IPv4 range in the default data`).toBeDefined();
    const asn = engine.lookup(range!.ip).asn;
    expect(asn?.asn).toBe(`AS${n.asn}`);
    const type = String(asn?.type);
    matrix.set(`${n.type} ${type}`, (matrix.get(`${n.type} ${type}`) ?? 0) + 1);
    if (type === n.type) right++;
    if (classifyAsn(range!.name) === n.type) byName++;
  }
  const pct = (k: number) => `${((100 * k) / networks.length).toFixed(1)} %`;
  const rows = TYPES.map((t) => `${t.padEnd(10)} ${TYPES.map((u) => String(matrix.get(`${t} ${u}`) ?? 0).padStart(11)).join('')}`);
  console.log(
    `asn.type on ${what}: ${right} of ${networks.length} right (${pct(right)}); by the name alone ${byName} (${pct(byName)})\n` +
      `reference \\ answer ${TYPES.map((t) => t.padStart(11)).join('')}\n${rows.join('\n')}`,
  );
  expect(right / networks.length).toBeGreaterThanOrEqual(least);
}

describe('asn.type of the default data', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await open();
  });
  afterAll(() => engine.close());

  it.each(CASES)('is right for %s (%s) in the share asked', (what, file, least) => measure(engine, what, file, least));
});

const shared = hasSharedData() ? describe : describe.skip;
shared('asn.type of the default data with the shared threat feeds merged in', () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'iprecord-asn-type-'));
    await buildDataset(sharedFeedConfig(), dir, dir, { dataset: false });
    engine = await open({ data: dir });
  }, 120_000);
  afterAll(() => {
    engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(CASES)('is right for %s (%s) in the share asked', (what, file, least) => measure(engine, `${what}, with feeds`, file, least));
});
