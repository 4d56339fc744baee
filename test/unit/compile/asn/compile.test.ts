import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { equal, same } from '../../../helpers/check.js';
import { classifyAsn } from '../../../../src/compile/asn/classify.js';
import { compileAsnCsv } from '../../../../src/compile/asn/compile.js';
import { RangeCsv, readAsnRows, readRangeCsv } from '../../../../src/compile/range-csv.js';
import { readRangeCsvSoon } from '../../../../src/compile/range-csv-thread.js';
import { fromBigInt, toBigInt } from '../../../../src/ip/ranges.js';
import { parseIp } from '../../../../src/ip/address.js';
import { formatIp } from '../../../../src/ip/format.js';
import { MmdbFile } from '../../../../src/mmdb/reader.js';
import { seed } from '../../../helpers/env.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-asn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
function csv(text: string): string {
  const path = join(dir, `asn-${fileNo++}.csv`);
  writeFileSync(path, text);
  return path;
}

const text4 = (n: bigint) => formatIp(4, fromBigInt(4, n));

interface Row {
  lo: bigint;
  hi: bigint;
  asn: number;
  name: string;
}

/** Reference: the last row that covers the address. */
function scan(rows: Row[], n: bigint): Row | null {
  let hit: Row | null = null;
  for (const r of rows) if (n >= r.lo && n <= r.hi) hit = r;
  return hit;
}

describe('ASN CSV compiler', () => {
  it('answers like a scan of the rows (later rows win), with the route holding the address', () => {
    const range = fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 20n })).map(([lo, len]) => {
      const hi = lo + len > 2n ** 32n - 1n ? 2n ** 32n - 1n : lo + len;
      return [lo, hi] as const;
    });
    const row = fc.tuple(range, fc.integer({ min: 1, max: 2 ** 32 - 1 }), fc.stringMatching(/^[A-Za-z0-9 .,&"-]{0,20}$/));
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 12 }),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), { maxLength: 20 }),
        (raw, extra) => {
          const rows: Row[] = raw.map(([[lo, hi], asn, name]) => ({ lo, hi, asn, name }));
          const quote = (s: string) => (/[",]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
          const path = csv(rows.map((r) => `${text4(r.lo)},${text4(r.hi)},${r.asn},${quote(r.name)}`).join('\n') + '\n');
          const result = compileAsnCsv([path], 'test');
          expect(result.badLines).toEqual([]);
          expect(result.ranges).toBe(rows.length);
          const file = new MmdbFile(result.buffer, path);
          const found = { offset: -1, prefix: 0 };
          const probes = [...extra, ...rows.flatMap((r) => [r.lo, r.hi, r.lo - 1n, r.hi + 1n])].filter((n) => n >= 0n && n < 2n ** 32n);
          for (const n of probes) {
            const want = scan(rows, n);
            file.find(4, fromBigInt(4, n), found);
            if (want === null) {
              same(found.offset, -1);
              continue;
            }
            const v = file.decode(found.offset) as { autonomous_system_number: number; autonomous_system_organization: string };
            equal(v, { autonomous_system_number: want.asn, autonomous_system_organization: want.name });
            // The matched block lies inside the row and holds the address.
            const size = 1n << BigInt(32 - found.prefix);
            const start = n - (n % size);
            same(start >= want.lo && start + size - 1n <= want.hi, true);
          }
        },
      ),
      { seed: seed(), numRuns: 150 },
    );
  });

  it('read straight into networks by the dataset compiler (RangeCsv): every network and every lookup as a scan of the rows', () => {
    const range = fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 20n })).map(([lo, len]) => {
      const hi = lo + len > 2n ** 32n - 1n ? 2n ** 32n - 1n : lo + len;
      return [lo, hi] as const;
    });
    const row = fc.tuple(range, fc.integer({ min: 1, max: 2 ** 32 - 1 }), fc.constantFrom('A', 'B', 'C'));
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 12 }),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }), { maxLength: 20 }),
        (raw, extra) => {
          const rows: Row[] = raw.map(([[lo, hi], asn, name]) => ({ lo, hi, asn, name }));
          const path = csv(rows.map((r) => `${text4(r.lo)},${text4(r.hi)},${r.asn},${r.name}`).join('\n') + '\n');
          const table = new RangeCsv(readRangeCsv([path], readAsnRows));
          expect(table.rows).toBe(rows.length);
          // The networks: in order, disjoint, each inside one row that wins on all of it, together covering the rows' union.
          let covered = 0n;
          let last = -1n;
          table.forEachNetwork(4, (words, prefix, offset) => {
            const lo = BigInt(words[3]);
            const hi = lo + (1n << BigInt(32 - prefix)) - 1n;
            same(lo > last, true);
            same(lo % (1n << BigInt(32 - prefix)), 0n);
            last = hi;
            covered += hi - lo + 1n;
            for (const n of [lo, hi, (lo + hi) / 2n]) equal(table.owners[offset], { asn: scan(rows, n)!.asn, name: scan(rows, n)!.name });
          });
          const points = [...new Set(rows.flatMap((r) => [r.lo, r.hi + 1n]))].sort((a, b) => (a < b ? -1 : 1));
          let union = 0n;
          for (let i = 0; i + 1 < points.length; i++) if (scan(rows, points[i]) !== null) union += points[i + 1] - points[i];
          expect(covered).toBe(union);
          // IPv4 rows answer at ::/96 of IPv6 too.
          let six = 0n;
          table.forEachNetwork(6, (words, prefix) => {
            same(words[0] | words[1] | words[2], 0);
            six += 1n << BigInt(128 - prefix);
          });
          expect(six).toBe(union);
          const found = { offset: -1, prefix: 0 };
          for (const n of [...extra, ...rows.flatMap((r) => [r.lo, r.hi, r.lo - 1n, r.hi + 1n])].filter((n) => n >= 0n && n < 2n ** 32n)) {
            const want = scan(rows, n);
            table.find(4, fromBigInt(4, n), found);
            equal(found.offset < 0 ? null : table.owners[found.offset], want === null ? null : { asn: want.asn, name: want.name });
          }
        },
      ),
      { seed: seed(), numRuns: 200 },
    );
  });

  it('read on a worker thread (large files) as on the calling thread, and its errors', () => {
    const lines = Array.from(
      { length: 3000 },
      (_, i) => `${i >> 8}.${i & 255}.0.0,${i >> 8}.${i & 255}.255.255,${64500 + (i % 7)},Net ${i % 5}`,
    );
    lines.push('2001:db8::,2001:db8::ffff,64496,"Doc, Inc."', 'garbage');
    const path = csv(lines.join('\n') + '\n');
    const here = readRangeCsv([path], readAsnRows);
    // Every file is large past 0 bytes: read on a thread.
    const reading = readRangeCsvSoon([path], 'asn', 0);
    expect(reading.read).toBe(false);
    const there = reading.parts();
    expect(reading.thread).toBe(true);
    expect(there).toEqual(here);
    expect(there.networks[4].length).toBeGreaterThan(2999);
    expect(there.badLines.map((b) => b.line)).toEqual([3002]);
    const missing = readRangeCsvSoon([join(dir, 'missing.csv')], 'asn', 0);
    expect(missing.read).toBe(false);
    expect(() => missing.parts()).toThrow(/ENOENT/);
    expect(missing.thread).toBe(true);
    // Small files are read at once, here.
    expect(readRangeCsvSoon([path], 'asn').read).toBe(true);
  });

  it('reports bad lines with file and line number, and keeps the good ones', () => {
    const path = csv(
      [
        '# comment',
        '1.0.0.0,1.0.0.255,13335,Cloudflare',
        'garbage',
        '2.0.0.0,1.0.0.0,1,backwards',
        '3.0.0.0,3.0.0.255,notanumber,x',
        '::1,1.0.0.1,5,mixed',
        '',
        '2001:db8::,2001:db8::ffff,64496,"Doc, Inc."',
        '4.0.0.0,4.0.0.255,4294967296,too big',
      ].join('\n'),
    );
    const result = compileAsnCsv([path], 'test');
    expect(result.ranges).toBe(2);
    expect(result.badLines.map((b) => [b.file, b.line])).toEqual([
      [path, 3],
      [path, 4],
      [path, 5],
      [path, 6],
      [path, 9],
    ]);
    const file = new MmdbFile(result.buffer, path);
    const found = { offset: -1, prefix: 0 };
    file.find(6, parseIp('2001:db8::10')!.words, found);
    expect(file.decode(found.offset)).toEqual({ autonomous_system_number: 64496, autonomous_system_organization: 'Doc, Inc.' });
    expect(found.prefix).toBe(112);
    file.find(4, [0, 0, 0, Number(toBigInt(parseIp('1.0.0.7')!))], found);
    expect(found.prefix).toBe(24);
  });
});

describe('asn.type classification', () => {
  it.each([
    ['Amazon.com, Inc.', 'hosting'],
    ['DIGITALOCEAN-ASN', 'hosting'],
    ['Hetzner Online GmbH', 'hosting'],
    ['University of Minnesota', 'education'],
    ['Ministry of Finance', 'government'],
    ['Comcast Cable Communications, LLC', 'isp'],
    ['Deutsche Telekom AG', 'isp'],
    ['Acme Widgets', 'business'],
    ['', null],
  ] as const)('%s: %s', (name, type) => {
    expect(classifyAsn(name === '' ? null : name)).toBe(type);
    expect(classifyAsn('')).toBeNull();
  });
});
