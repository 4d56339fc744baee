import fc from 'fast-check';
import { Reader, type Response } from 'mmdb-lib';
import { describe, expect, it } from 'vitest';
import { rangeToCidrs, toBigInt } from '../../src/ip/ranges.js';
import { parseIp, type Address } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { MmdbFile } from '../../src/mmdb/reader.js';
import { MmdbWriter } from '../../src/mmdb/writer.js';
import { seed } from '../helpers/env.js';
import { same } from '../helpers/check.js';

const params = { seed: seed(), numRuns: 200 };

interface Net {
  version: 4 | 6;
  lo: bigint;
  hi: bigint;
  id: number;
}

const v4net = fc.record({ addr: fc.ipV4(), prefix: fc.integer({ min: 1, max: 32 }) });
const v6net = fc.record({ addr: fc.ipV6(), prefix: fc.integer({ min: 1, max: 128 }) });

function toNet(addr: string, prefix: number, id: number): Net {
  const a = parseIp(addr)!;
  const width = a.version === 4 ? 32 : 128;
  const n = toBigInt(a);
  const size = 1n << BigInt(width - prefix);
  const lo = n - (n % size);
  return { version: a.version, lo, hi: lo + size - 1n, id };
}

/**
 * Reference: the last inserted network that covers the address wins. The
 * tree is one IPv6 tree with IPv4 at ::/96 (so ::/1 covers all of IPv4):
 * both families compare as 128-bit numbers, IPv4 as ::a.b.c.d.
 */
function scan(nets: Net[], a: Address): number | null {
  const n = toBigInt(a);
  let hit: number | null = null;
  for (const net of nets) if (n >= net.lo && n <= net.hi) hit = net.id;
  return hit;
}

describe('MMDB writer and reader', () => {
  it('answer like a linear scan, and like mmdb-lib, for random networks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(v4net, v6net), { minLength: 1, maxLength: 40 }),
        fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 40 }),
        (nets, probes) => {
          const writer = new MmdbWriter({ databaseType: 'prop-test' });
          const list: Net[] = [];
          nets.forEach(({ addr, prefix }, id) => {
            const a = parseIp(addr)!;
            const p = a.version === 4 ? Math.min(prefix, 32) : prefix;
            list.push(toNet(addr, p, id));
            writer.insert(a.version, a.words, p, { id, name: `net ${id}` });
          });
          const buf = writer.toBuffer();
          const ours = new MmdbFile(buf, 'prop');
          const lib = new Reader<Response & { id: number }>(buf);
          // Probe random addresses and the edges of every network.
          const addrs: Address[] = probes.map((p) => parseIp(p)!);
          for (const net of list) {
            for (const n of [net.lo, net.hi, net.hi + 1n, net.lo - 1n]) {
              const max = net.version === 4 ? 2n ** 32n : 2n ** 128n;
              if (n < 0n || n >= max) continue;
              const text =
                net.version === 4
                  ? formatIp(4, [0, 0, 0, Number(n)])
                  : formatIp(
                      6,
                      [0, 1, 2, 3].map((i) => Number((n >> BigInt(96 - 32 * i)) & 0xffffffffn)),
                    );
              addrs.push(parseIp(text)!);
            }
          }
          const found = { offset: -1, prefix: 0 };
          for (const a of addrs) {
            const expected = scan(list, a);
            ours.find(a.version, a.words, found);
            const got = found.offset < 0 ? null : (ours.decode(found.offset) as { id: number }).id;
            const text = formatIp(a.version, a.words);
            same(got, expected, text);
            // mmdb-lib answers IPv4 from the ::/96 subtree, as we do.
            same(lib.get(text)?.id ?? null, expected, text);
          }
        },
      ),
      params,
    );
  });

  it('list every network with data once, in address order, as find() answers its addresses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(v4net, v6net), { minLength: 1, maxLength: 40 }),
        fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 40 }),
        (nets, probes) => {
          const writer = new MmdbWriter({ databaseType: 'prop-test' });
          nets.forEach(({ addr, prefix }, id) => {
            const a = parseIp(addr)!;
            writer.insert(a.version, a.words, a.version === 4 ? Math.min(prefix, 32) : prefix, { id });
          });
          const file = new MmdbFile(writer.toBuffer(), 'prop');
          const found = { offset: -1, prefix: 0 };
          for (const version of [4, 6] as const) {
            const width = version === 4 ? 32n : 128n;
            const listed: { lo: bigint; hi: bigint; prefix: number; offset: number }[] = [];
            file.forEachNetwork(version, (w, prefix, offset) => {
              const lo = version === 4 ? BigInt(w[3]) : toBigInt({ version: 6, words: [w[0], w[1], w[2], w[3]] });
              listed.push({ lo, hi: lo + (1n << (width - BigInt(prefix))) - 1n, prefix, offset });
            });
            listed.forEach((n, i) => {
              if (i > 0 && !(n.lo > listed[i - 1].hi)) expect(n.lo).toBeGreaterThan(listed[i - 1].hi);
              same(n.lo % (1n << (width - BigInt(n.prefix))), 0n);
            });
            // Probes: random addresses of the family, and the edges of every network listed.
            const numbers = probes
              .map((p) => parseIp(p)!)
              .filter((a) => a.version === version)
              .map(toBigInt);
            for (const n of listed) numbers.push(n.lo, n.hi, n.hi + 1n, n.lo - 1n);
            for (const x of numbers) {
              if (x < 0n || x >= 1n << width) continue;
              const words =
                version === 4 ? [0, 0, 0, Number(x)] : [0, 1, 2, 3].map((i) => Number((x >> BigInt(96 - 32 * i)) & 0xffffffffn));
              // IPv4-mapped addresses are looked up as IPv4: not listed among IPv6 networks.
              if (version === 6 && x >> 32n === 0xffffn) continue;
              file.find(version, words, found);
              const hit = listed.find((n) => x >= n.lo && x <= n.hi);
              same(hit === undefined ? -1 : hit.offset, found.offset, () => `${x}`);
              if (hit !== undefined) same(hit.prefix, found.prefix, () => `${x}`);
            }
          }
        },
      ),
      params,
    );
  });

  it('splits ranges into CIDR blocks that cover exactly the range', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.ipV4(), (x, y) => {
        const [a, b] = [parseIp(x)!, parseIp(y)!].sort((p, q) => (toBigInt(p) < toBigInt(q) ? -1 : 1));
        const cidrs = rangeToCidrs(a, b);
        let next = toBigInt(a);
        for (const c of cidrs) {
          const start = BigInt(c.words[3]);
          const size = 1n << BigInt(32 - c.prefix);
          same(start, next);
          same(start % size, 0n);
          next = start + size;
        }
        expect(next - 1n).toBe(toBigInt(b));
        expect(cidrs.length).toBeLessThanOrEqual(62);
      }),
      { ...params, numRuns: 2000 },
    );
  });
});
