/**
 * `iprecord/bytes` as built (the test set-up builds it as tsup.config.ts
 * does): a file that imports nothing and names no Buffer, that runs in a
 * Node whose Buffer is deleted, and whose `openBytes()` over the default
 * data's file answers what `open()` answers over the same file: records,
 * JSON text, bytes written at random offsets, errors as values and chosen
 * fields, over 100 000 addresses (range edges and random addresses of
 * random ranges of both families, IPv4 in its IPv6 forms, private and
 * malformed ones, the address forms of web-server logs); and the lite
 * dataset of the default data, whose records are the full records' but
 * for the members it leaves out (null in its records), opened from each
 * form its bytes come in (a Uint8Array, an ArrayBuffer, a DataView, a
 * SharedArrayBuffer, an ArrayBuffer of another realm).
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dataset } from '../../src/dataset/format.js';
import { open, type Engine } from '../../src/index.js';
import { formatIp } from '../../src/ip/format.js';
import { builtEntry, ROOT, seed, xorshift32 } from '../helpers/env.js';
import type * as BytesEntry from '../../src/bytes.js';
import { writeLiteDataset } from '../../src/compile/lite.js';
import { PLACE_MEMBERS, LOCATION_MEMBERS } from '../../src/contract/template.js';

const N = 100_000;
const clockless = (text: string) => text.replace(/"current_time":"[^"]*"/, '');

let engine: Engine;
let file: Uint8Array;
let bytesEntry: typeof BytesEntry;

beforeAll(async () => {
  engine = await open();
  const b = readFileSync(engine.info().dataset.path);
  file = new Uint8Array(b.buffer, b.byteOffset, b.length);
  bytesEntry = (await import(builtEntry('bytes'))) as typeof BytesEntry;
});

/** Addresses of random ranges of the dataset: each range's first, last and a random address, both families, IPv4 also as `::ffff:` and `64:ff9b::`. */
function addresses(ds: Dataset, n: number, next: () => number): string[] {
  const out: string[] = [];
  const words = new Uint32Array(4);
  while (out.length < n) {
    if (next() & 1) {
      const i = next() % ds.starts4.length;
      const lo = ds.starts4[i];
      const hi = i + 1 < ds.starts4.length ? ds.starts4[i + 1] - 1 : 0xffffffff;
      for (const a of [lo, hi, lo + Math.floor(((next() >>> 0) / 2 ** 32) * (hi - lo + 1))]) {
        words[3] = a >>> 0;
        const ip = formatIp(4, words);
        out.push(ip, `::ffff:${ip}`, `64:ff9b::${ip}`);
      }
    } else {
      const i = next() % (ds.starts6.length / 4);
      for (let w = 0; w < 4; w++) words[w] = ds.starts6[i * 4 + w];
      out.push(formatIp(6, words));
      // Within the range: its start with random low bits where the next range starts later (most ranges are /32 or wider).
      words[3] = next() >>> 0;
      words[2] = next() >>> 0;
      out.push(formatIp(6, words));
    }
  }
  return out.slice(0, n);
}

describe('iprecord/bytes as built', () => {
  it('imports nothing, names no Buffer, and opens and answers in a Node without Buffer', () => {
    const path = fileURLToPath(builtEntry('bytes'));
    const text = readFileSync(path, 'utf8');
    expect(text.match(/^\s*import\s[^;]*?from\s*['"][^'"]+['"]/gm) ?? []).toEqual([]);
    expect(text.match(/\brequire\(|\bimport\(|['"]node:/g) ?? []).toEqual([]);
    // `Buffer` only in the text of the TypeError that names what writeJson writes into.
    expect(text.match(/\bBuffer\b/g)).toEqual(['Buffer']);
    const script = `
      delete globalThis.Buffer;
      const { openBytes } = await import(${JSON.stringify(builtEntry('bytes'))});
      const { readFileSync } = await import('node:fs');
      const b = readFileSync(${JSON.stringify(engine.info().dataset.path)});
      const e = openBytes(new Uint8Array(b.buffer, b.byteOffset, b.length), { verify: false });
      const out = new Uint8Array(4096);
      const n = e.writeJson('8.8.8.8', out, 3, { count: '7' });
      console.log(JSON.stringify([typeof globalThis.Buffer, e.lookupJson('8.8.8.8', { count: '7' }), new TextDecoder().decode(out.subarray(3, 3 + n))]));
    `;
    const [kind, json, written] = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }),
    ) as string[];
    expect(kind).toBe('undefined');
    expect(clockless(json)).toBe(clockless(engine.lookupJson('8.8.8.8', { count: '7' })));
    expect(clockless(written)).toBe(clockless(json));
  });

  it(`answers what open() answers over the same file, ${N} addresses of both families`, () => {
    // Checked whole where the lite dataset is opened, below (the full file's check is the engine's own: its seal).
    const bytes = bytesEntry.openBytes(file, { name: 'the default data', verify: false });
    expect(bytes.info()).toMatchObject({ edition: 'full', bytes: file.length });
    const s = seed();
    const next = xorshift32(s);
    const ds = new Dataset(file, 'the default data');
    const forms = readFileSync(`${ROOT}/fixtures/logs/address-forms.txt`, 'utf8').split('\n');
    const ips = [...addresses(ds, N, next), ...forms, '10.0.0.1', '192.168.1.1', '::1', 'fe80::1', '', 'not an ip', '1.2.3'];
    const paths = ['country_code', 'region_code', 'asn.asn', 'asn.route', 'time_zone.name', 'threat.is_tor', 'threat.scores.trust_score'];
    const pickFile = engine.select(paths);
    const pickBytes = bytes.select(paths);
    const a = new Uint8Array(8192);
    const b = new Uint8Array(8192);
    const decoder = new TextDecoder();
    let differ = 0;
    let records = 0;
    const firstDiffering: string[] = [];
    const options = { count: '1' };
    for (const ip of ips) {
      const x = engine.tryLookup(ip, options);
      const y = bytes.tryLookup(ip, options);
      const at = next() % 64;
      let same = clockless(JSON.stringify(x)) === clockless(JSON.stringify(y));
      // Errors as values on the bytes path: the same JSON as tryLookup()'s, negative where it is an error.
      const t = bytes.tryWriteJson(ip, b, at, options);
      same &&= t < 0 === 'code' in x && clockless(decoder.decode(b.subarray(at, at + Math.abs(t)))) === clockless(JSON.stringify(x));
      if (!('code' in x)) {
        records++;
        const n = engine.writeJson(ip, a, at, options);
        const m = bytes.writeJson(ip, b, at, options);
        same &&= clockless(decoder.decode(a.subarray(at, at + n))) === clockless(decoder.decode(b.subarray(at, at + m)));
        same &&= clockless(engine.lookupJson(ip, options)) === clockless(bytes.lookupJson(ip, options));
        same &&= JSON.stringify(pickFile(ip)) === JSON.stringify(pickBytes(ip));
      }
      if (!same) {
        differ++;
        if (firstDiffering.length < 3) firstDiffering.push(`${ip}: ${JSON.stringify(x)} / ${JSON.stringify(y)}`);
      }
    }
    console.log(`openBytes against open(), FC_SEED=${s}: ${ips.length} addresses, ${records} records, ${differ} different`);
    expect(firstDiffering).toEqual([]);
    expect(records).toBeGreaterThan(N / 2);
    bytes.close();
    expect(() => bytes.lookup('8.8.8.8')).toThrow('closed');
  });

  it('refuses what is not a dataset, and a damaged one when verifying', () => {
    const { openBytes } = bytesEntry;
    expect(() => openBytes(new Uint8Array(100), { name: 'x.bin' })).toThrow('x.bin is not a valid iprecord dataset: bad magic.');
    expect(() => openBytes(file.subarray(0, file.length - 8))).toThrow(
      /the dataset bytes is not a valid iprecord dataset: its sections add up to/,
    );
    for (const [v, said] of [
      ['data', 'a string'],
      [null, 'null'],
      [undefined, 'undefined'],
      [[1, 2, 3], 'an Array'],
      [{ byteLength: 8 }, 'an Object'],
    ] as const)
      expect(() => openBytes(v as unknown as Uint8Array)).toThrow(
        `openBytes takes the dataset's bytes (a Uint8Array, another view of an ArrayBuffer, or an ArrayBuffer), not ${said}.`,
      );
    expect(() => openBytes(file, { verfy: false } as never)).toThrow(/Unknown option "verfy" \(did you mean "verify"\?\)/);
  });
});

describe('the lite dataset of the default data', () => {
  it(`answers the full record's members but the place, coordinates and zone (null), ${N} addresses`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-lite-'));
    try {
      const out = join(dir, 'edge.iprd');
      const r = writeLiteDataset(engine.info().dataset.path, out);
      const bytes = readFileSync(out);
      console.log(
        `lite dataset: ${r.bytes} bytes (gzip -6: ${gzipSync(bytes).length}), ${r.ranges.v4} IPv4 and ${r.ranges.v6} IPv6 ranges, ${r.records} records; the full file ${file.length} bytes`,
      );
      expect(r.bytes).toBe(bytes.length);
      expect(r.bytes).toBeLessThan(file.length / 5);
      const lite = bytesEntry.openBytes(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), { name: 'edge.iprd' });
      expect(lite.info()).toMatchObject({ edition: 'lite', bytes: r.bytes });
      const left = new Set<string>([...PLACE_MEMBERS, ...LOCATION_MEMBERS, 'time_zone']);
      const s = seed() + 1;
      const ips = [...addresses(new Dataset(file, 'the default data'), N, xorshift32(s)), '10.0.0.1', '::1', 'not an ip'];
      const options = { count: '1' };
      const differing: string[] = [];
      let records = 0;
      let differ = 0;
      for (const ip of ips) {
        const full = engine.tryLookup(ip, options) as unknown as Record<string, unknown>;
        const edge = lite.tryLookup(ip, options) as unknown as Record<string, unknown>;
        if (!('code' in full)) records++;
        const expected = 'code' in full ? full : Object.fromEntries(Object.entries(full).map(([k, v]) => [k, left.has(k) ? null : v]));
        if (JSON.stringify(edge) === JSON.stringify(expected)) continue;
        differ++;
        if (differing.length < 3) differing.push(`${ip}: ${JSON.stringify(edge)} / ${JSON.stringify(expected)}`);
      }
      console.log(`lite against the full record, FC_SEED=${s}: ${ips.length} addresses, ${records} records, ${differ} different`);
      expect(differing).toEqual([]);
      expect(records).toBeGreaterThan(N / 2);
      // The same bytes as a browser's fetch() or a Worker's data module give them (an ArrayBuffer), as another view,
      // shared, and from another realm (which fails instanceof): the same answers.
      const copy = () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
      const shared = new SharedArrayBuffer(bytes.length);
      new Uint8Array(shared).set(bytes);
      const foreign = runInNewContext('new ArrayBuffer(n)', { n: bytes.length }) as ArrayBuffer;
      expect(foreign instanceof ArrayBuffer).toBe(false);
      new Uint8Array(foreign).set(bytes);
      const forms = {
        ArrayBuffer: copy(),
        DataView: new DataView(copy()),
        SharedArrayBuffer: shared,
        'an ArrayBuffer of another realm': foreign,
      };
      const some = ips.filter((_, i) => i % 97 === 0);
      for (const [form, b] of Object.entries(forms)) {
        const other = bytesEntry.openBytes(b, { verify: form === 'ArrayBuffer' });
        expect(other.info().bytes, form).toBe(r.bytes);
        const wrong = some.filter((ip) => JSON.stringify(other.tryLookup(ip, options)) !== JSON.stringify(lite.tryLookup(ip, options)));
        expect(wrong, form).toEqual([]);
      }
      // Damaged on its way (a byte changed): refused at open, named.
      const damaged = new Uint8Array(bytes);
      damaged[damaged.length >> 1] ^= 0x40;
      expect(() => bytesEntry.openBytes(damaged, { name: 'edge.iprd' })).toThrow(
        'edge.iprd is not a valid iprecord dataset: checksum mismatch.',
      );
      expect(() => bytesEntry.openBytes(damaged, { verify: false })).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
