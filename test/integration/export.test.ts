/**
 * `exportDataset()`: every exported row says what `lookup()` says at its
 * first, last and a random address (less `ip`, `count` and the clock of
 * `time_zone`), the rows cover exactly the addresses that have a record,
 * and a manifest is written beside.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportDataset } from '../../src/export/index.js';
import { EXPORT_COLUMNS, flatten, staticRecord, type StaticRecord } from '../../src/export/record.js';
import { open, type Engine } from '../../src/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { runExport } from '../../src/cli/export.js';
import { parseThreatConfig } from '../../src/threat/config.js';
import { buildAndSwap } from '../../src/threat/update.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { SMALL, SMALL_SOURCES } from '../helpers/maxmind.js';

describe('exportDataset: csv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-export-'));
  let engine: Engine;
  beforeAll(async () => {
    engine = await open({ geo: [...SMALL.geo], asn: [...SMALL.asn] });
  });
  afterAll(() => {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What lookup() says at an address, as an export holds it; null where it answers an error. */
  const want = (ip: string): StaticRecord | null => {
    try {
      return staticRecord(engine.lookup(ip));
    } catch (e) {
      expect((e as { code: string }).code).toMatch(/^(PRIVATE_IP|RESERVED_IP)$/);
      return null;
    }
  };

  it('rows that say what lookup() says, over exactly the addresses that have a record', async () => {
    const out = join(dir, 'export.csv.gz');
    const result = await exportDataset(engine, { format: 'csv', out });
    const lines = gunzipSync(readFileSync(out)).toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    const header = splitCsvLine(lines[0])!;
    expect(header).toEqual(['network', 'start_ip', 'end_ip', ...EXPORT_COLUMNS, 'record']);
    const rows = lines.slice(1).map((l) => splitCsvLine(l)!);
    expect(rows.length).toBe(result.rows);
    expect(result.ranges.v4).toBeGreaterThan(10);
    expect(result.ranges.v6).toBeGreaterThan(10);
    const next = xorshift32(seed());
    const blocks = { 4: [] as [bigint, bigint][], 6: [] as [bigint, bigint][] };
    for (const row of rows) {
      const [network, startIp, endIp] = row;
      const first = parseIp(startIp)!;
      const last = parseIp(endIp)!;
      const record = JSON.parse(row[row.length - 1]) as StaticRecord;
      // The columns are the record's, flattened.
      const flat = flatten(record);
      // Every value has its column (a null object is its members' nulls).
      for (const k of flat.keys()) expect(EXPORT_COLUMNS.includes(k) || flat.get(k) === null, k).toBe(true);
      EXPORT_COLUMNS.forEach((c, i) => expect(row[3 + i], `${network} ${c}`).toBe(flat.get(c) === null || flat.get(c) === undefined ? '' : String(flat.get(c))));
      const lo = toBigInt(first);
      const hi = toBigInt(last);
      expect(network).toBe(`${startIp}/${(first.version === 4 ? 32 : 128) - (hi - lo + 1n).toString(2).length + 1}`);
      const random = lo + ((BigInt(next()) * (hi - lo + 1n)) >> 32n);
      for (const n of [lo, random, hi]) expect(want(formatIp(first.version, fromBigInt(first.version, n))), `${network} at ${n}`).toEqual(record);
      blocks[first.version].push([lo, hi]);
    }
    // Between the rows, in address order, only addresses that answer an error (or, in IPv6, those answered as IPv4: ::/96, ::ffff:0:0/96).
    for (const version of [4, 6] as const) {
      const list = blocks[version].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      const end = version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
      const gaps: [bigint, bigint][] = [];
      let at = 0n;
      for (const [lo, hi] of list) {
        expect(lo >= at, `rows overlap at ${lo}`).toBe(true);
        if (lo > at) gaps.push([at, lo - 1n]);
        at = hi + 1n;
      }
      if (at <= end) gaps.push([at, end]);
      const v4Mirror = (n: bigint) => version === 6 && (n < 1n << 32n || n >> 32n === 0xffffn);
      for (const [lo, hi] of gaps) {
        for (const n of [lo, hi]) if (!v4Mirror(n)) expect(want(formatIp(version, fromBigInt(version, n))), `gap ${formatIp(version, fromBigInt(version, n))}`).toBeNull();
      }
      expect(gaps.length).toBeGreaterThan(3);
    }
    const manifest = JSON.parse(readFileSync(result.manifest, 'utf8')) as { format: string; rows: number; sources: { role: string }[]; licences: string[] };
    expect([manifest.format, manifest.rows]).toEqual(['csv', result.rows]);
    expect(manifest.sources.map((s) => s.role)).toEqual(['geo', 'asn']);
    expect(manifest.licences.join(' ')).toMatch(/IP Geolocation by DB-IP/);
  }, 60_000);

  it('iprecord export writes the file of a dataset directory; usage errors exit 2', async () => {
    const data = join(dir, 'data');
    await buildAndSwap(parseThreatConfig({ feeds: [], sources: SMALL_SOURCES }, dir), data, { dataset: true });
    const out = join(dir, 'cli.csv');
    expect(await runExport(['--format', 'csv', '--out', out, '--data', data])).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines[0].startsWith('network,start_ip,end_ip,is_eu,')).toBe(true);
    expect(lines.length).toBeGreaterThan(50);
    expect(await runExport(['--out', out])).toBe(2);
    expect(await runExport(['--format', 'xml', '--out', out])).toBe(2);
    expect(await runExport(['--format', 'csv'])).toBe(2);
  }, 60_000);
});
