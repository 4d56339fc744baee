/**
 * The network registry reader (`sources.networks`) on PeeringDB's network
 * objects as its API and CAIDA's dumps hold them.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_REGISTRY_BYTES, readRegistry } from '../../../../src/compile/asn/registry.js';
import { InvalidDatasetError } from '../../../../src/contract/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

/** Every value PeeringDB's info_type takes (its `NET_TYPES`), with the type it gives. */
const INFO_TYPES: [string, string | undefined][] = [
  ['', undefined],
  ['Not Disclosed', undefined],
  ['NSP', 'isp'],
  ['Content', 'hosting'],
  ['Cable/DSL/ISP', 'isp'],
  ['Enterprise', 'business'],
  ['Educational/Research', 'education'],
  ['Non-Profit', 'business'],
  ['Route Server', undefined],
  ['Network Services', undefined],
  ['Route Collector', undefined],
  ['Government', 'government'],
];

describe('readRegistry', () => {
  it('reads each info_type of the API shape ({ data }) and of a dump ({ net: { data } })', () => {
    const nets = INFO_TYPES.map(([t], i) => ({
      id: i + 1,
      asn: 64500 + i,
      name: `net ${i}`,
      info_type: t,
      info_types: t === '' ? [] : [t],
    }));
    for (const body of [
      { data: nets, meta: {} },
      { org: { data: [] }, net: { data: nets } },
    ]) {
      const { types, networks } = readRegistry([file('net.json', body)]);
      expect(networks).toBe(nets.length);
      expect(Object.fromEntries(INFO_TYPES.map(([t], i) => [t, types.get(64500 + i)]))).toEqual(Object.fromEntries(INFO_TYPES));
    }
  });

  it('takes the first of info_types that names a type where info_type does not, and a later file over an earlier one', () => {
    const a = file('a.json', {
      data: [
        { asn: 1, info_type: 'Not Disclosed', info_types: ['Route Server', 'Content'] },
        { asn: 2, info_type: 'NSP' },
      ],
    });
    const b = file('b.json', { data: [{ asn: 2, info_type: 'Enterprise' }, { asn: 'x' }, { name: 'no asn' }, null] });
    expect(Object.fromEntries(readRegistry([a, b]).types)).toEqual({ 1: 'hosting', 2: 'business' });
    expect(readRegistry([a, b]).networks).toBe(3);
  });

  it('refuses what is not JSON of network objects, naming the file', () => {
    for (const [name, body] of [
      ['cut.json', '{"data": [{"asn": 1'],
      ['list.json', [{ asn: 1, info_type: 'NSP' }]],
      ['other.json', { results: [] }],
    ] as const) {
      const path = file(name, body);
      expect(() => readRegistry([path])).toThrow(InvalidDatasetError);
      expect(() => readRegistry([path])).toThrow(path);
    }
  });
  it('reads a file that begins with a byte order mark, as feeds and configurations are read', () => {
    const path = file('bom.json', `\ufeff${JSON.stringify({ data: [{ asn: 7, info_type: 'NSP' }] })}`);
    expect(Object.fromEntries(readRegistry([path]).types)).toEqual({ 7: 'isp' });
  });

  it('refuses, before reading it, a file over its size bound, a FIFO or a device, naming it', () => {
    const big = join(dir, 'big.json');
    // A sparse file: its size is the point, not its bytes.
    writeFileSync(big, '{"data": []}');
    truncateSync(big, MAX_REGISTRY_BYTES + 1);
    const fifo = join(dir, 'fifo.json');
    spawnSync('mkfifo', [fifo]);
    for (const path of [big, fifo, '/dev/zero']) {
      // A FIFO read would block this process for good (the test's own time-out ends it); nothing here is timed.
      expect(() => readRegistry([path])).toThrow(InvalidDatasetError);
      expect(() => readRegistry([path])).toThrow(path);
    }
    expect(() => readRegistry([big])).toThrow(/more than the 268435456 it may/);
  });
});
