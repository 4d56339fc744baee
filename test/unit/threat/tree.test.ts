import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDatasetError } from '../../../src/errors.js';
import { CATEGORIES, scoresOf, type Category } from '../../../src/record/threat.js';
import { coveredAddresses } from '../../../src/threat/build.js';
import type { Network } from '../../../src/threat/parse.js';
import { compileThreatTree, ThreatTree, type TreeFeed } from '../../../src/threat/tree.js';
import { seed } from '../../helpers/env.js';

const params = { seed: seed(), numRuns: 150 };
const meta = (n: number) => ({ builtAt: '2026-01-01T00:00:00.000Z', feeds: [], blocklists: Array.from({ length: n }, (_, i) => ({ name: `bl${i}`, site: `https://bl${i}.example`, type: 'general' })) });

/** Addresses as 128-bit numbers; IPv4 kept apart by family. */
const big = (version: 4 | 6, w: readonly number[]) => (version === 4 ? BigInt(w[3]) : w.reduce((a, x) => (a << 32n) | BigInt(x), 0n));
const words = (version: 4 | 6, n: bigint): [number, number, number, number] =>
  version === 4 ? [0, 0, 0, Number(n)] : [Number((n >> 96n) & 0xffffffffn), Number((n >> 64n) & 0xffffffffn), Number((n >> 32n) & 0xffffffffn), Number(n & 0xffffffffn)];

function covers(net: Network, version: 4 | 6, n: bigint): boolean {
  if (net.version !== version) return false;
  const width = version === 4 ? 32 : 128;
  const lo = big(version, net.words);
  return n >= lo && n < lo + (1n << BigInt(width - net.prefix));
}

/** Reference: the feeds listing the address, `except` applied, as flags, counts, hits and blocklists. */
function reference(feeds: TreeFeed[], version: 4 | 6, n: bigint) {
  const listing = feeds.map((f, id) => ({ f, id, nets: f.networks.filter((x) => covers(x, version, n)) })).filter((x) => x.nets.length > 0);
  const kept = listing.filter(({ f, id }) => f.except.length === 0 || !listing.some((g) => g.id !== id && g.f.categories.some((c) => f.except.includes(c))));
  const counts = CATEGORIES.map((c) => kept.filter(({ f }) => f.categories.includes(c)).length);
  const hits = kept.length === 0 ? 0 : Math.max(0, ...listing.flatMap(({ nets }) => nets.map((x) => (x.hits > 1 ? x.hits : 0))));
  const blocklists = [...new Set(kept.map(({ f }) => f.blocklist).filter((b) => b >= 0))].sort((a, b) => a - b).map((b) => `bl${b}`);
  return { counts, hits, blocklists };
}

const v4net = fc.record({ a: fc.integer({ min: 0, max: 2 ** 32 - 1 }), p: fc.integer({ min: 0, max: 32 }), hits: fc.constantFrom(1, 1, 2, 5, 12) });
const v6net = fc.record({ hi: fc.integer({ min: 0, max: 2 ** 32 - 1 }), p: fc.integer({ min: 0, max: 64 }) });
const mask = (x: number, p: number) => (p === 0 ? 0 : (x & (0xffffffff << (32 - p))) >>> 0);
const feedArb = fc.record({
  categories: fc.uniqueArray(fc.constantFrom(...CATEGORIES), { minLength: 1, maxLength: 2 }),
  except: fc.uniqueArray(fc.constantFrom<Category>('bogon', 'icloud_relay', 'vpn'), { maxLength: 1 }),
  blocklist: fc.integer({ min: -1, max: 2 }),
  v4: fc.array(v4net, { maxLength: 8 }),
  v6: fc.array(v6net, { maxLength: 4 }),
});

function toFeed(f: { categories: Category[]; except: Category[]; blocklist: number; v4: { a: number; p: number; hits: number }[]; v6: { hi: number; p: number }[] }): TreeFeed {
  const networks: Network[] = [
    ...f.v4.map(({ a, p, hits }) => ({ version: 4 as const, words: [0, 0, 0, mask(a, p)] as const, prefix: p, hits })),
    // IPv6 networks within the first 64 bits, most of them in 2000::/3.
    ...f.v6.map(({ hi, p }) => ({ version: 6 as const, words: [mask(((hi & 0x1fffffff) | 0x20000000) >>> 0, Math.min(p, 32)), p > 32 ? mask(hi, p - 32) : 0, 0, 0] as const, prefix: p, hits: 1 })),
  ];
  return { categories: f.categories, except: f.except, blocklist: f.blocklist, networks };
}

describe('threat tree', () => {
  it('answers each address like a scan of every feed (union of covering prefixes, except applied)', () => {
    fc.assert(
      fc.property(fc.array(feedArb, { minLength: 1, maxLength: 6 }), fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 20 }), (raw, probes) => {
        const feeds = raw.map(toFeed);
        const tree = new ThreatTree(compileThreatTree(feeds, meta(3)), 'prop');
        const addrs: [4 | 6, bigint][] = probes.map((p) => [4, BigInt(p)]);
        for (const f of feeds) {
          for (const net of f.networks) {
            const width = net.version === 4 ? 32 : 128;
            const lo = big(net.version, net.words);
            const hi = lo + (1n << BigInt(width - net.prefix)) - 1n;
            for (const n of [lo, hi, lo - 1n, hi + 1n]) if (n >= 0n && n < 1n << BigInt(width)) addrs.push([net.version, n]);
          }
        }
        for (const [version, n] of addrs) {
          const label = tree.find(version, words(version, n));
          const want = reference(feeds, version, n);
          expect({ counts: tree.counts(label), hits: tree.hits(label), blocklists: tree.blocklists(label).map((b) => b.name) }).toEqual(want);
          let flags = 0;
          want.counts.forEach((c, bit) => (flags |= c > 0 ? 1 << bit : 0));
          expect(tree.flags(label)).toBe(flags);
        }
      }),
      params,
    );
  });

  it('refuses damaged files with a typed error', () => {
    const good = compileThreatTree([{ categories: ['tor'], except: [], blocklist: 0, networks: [{ version: 4, words: [0, 0, 0, 0x01020300], prefix: 24, hits: 1 }] }], meta(1));
    expect(new ThreatTree(good, 'good').find(4, [0, 0, 0, 0x01020304])).toBeGreaterThan(0);
    const damaged = (f: (b: Buffer) => Buffer | void) => {
      const b = Buffer.from(good);
      return f(b) ?? b;
    };
    const cases: [string, Buffer, RegExp][] = [
      ['magic', damaged((b) => void b.write('XXXX', 0)), /bad magic/],
      ['version', damaged((b) => void b.writeUInt32LE(99, 8)), /format version 99/],
      ['truncated', good.subarray(0, good.length - 8), /add up to/],
      ['empty', Buffer.alloc(0), /bad magic/],
      ['flipped bit', damaged((b) => void (b[70] ^= 1)), /checksum/],
    ];
    for (const [name, buf, message] of cases) {
      expect(() => new ThreatTree(buf, name), name).toThrow(InvalidDatasetError);
      expect(() => new ThreatTree(buf, name), name).toThrow(message);
    }
  });

  it('counts covered addresses once where networks overlap', () => {
    const n = (a: number, p: number): Network => ({ version: 4, words: [0, 0, 0, a >>> 0], prefix: p, hits: 1 });
    expect(coveredAddresses([n(0x0a000000, 8), n(0x0a010000, 16), n(0x0b000000, 24)])).toBe(2n ** 24n + 256n);
    expect(coveredAddresses([{ version: 6, words: [0x20010db8, 0, 0, 0], prefix: 32, hits: 1 }, n(0, 32)])).toBe(2n ** 96n + 1n);
  });
});

describe('scores', () => {
  const evidence = fc.record({ counts: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 8, maxLength: 8 }), hits: fc.integer({ min: 0, max: 12 }) });

  it('no evidence: 0, 0, 0 and trust 100', () => {
    expect(scoresOf({ counts: [0, 0, 0, 0, 0, 0, 0, 0], hits: 0 }, 0)).toEqual({ vpn_score: 0, proxy_score: 0, threat_score: 0, trust_score: 100 });
  });

  it('are integers 0..100; a VPN source gives a high vpn_score; trust is 100 minus the highest risk', () => {
    fc.assert(
      fc.property(evidence, fc.integer({ min: 0, max: 255 }), (e, extra) => {
        const s = scoresOf(e, extra);
        for (const v of Object.values(s)) expect(Number.isInteger(v) && v >= 0 && v <= 100).toBe(true);
        if (e.counts[3] > 0 || extra & 8) expect(s.vpn_score).toBeGreaterThanOrEqual(80);
        if (e.counts[2] > 0 || extra & 4) expect(s.proxy_score).toBeGreaterThanOrEqual(85);
        if (e.counts[6] > 0 || extra & 64) expect(s.threat_score).toBeGreaterThanOrEqual(70);
        expect(s.trust_score).toBe(100 - Math.max(s.vpn_score, s.proxy_score, s.threat_score));
      }),
      { ...params, numRuns: 1000 },
    );
  });

  it('more evidence never lowers vpn, proxy or threat scores', () => {
    fc.assert(
      fc.property(evidence, fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 255 }), (e, bit, more, extra) => {
        const a = scoresOf(e, extra);
        const counts = [...e.counts];
        counts[bit] += more;
        for (const b of [scoresOf({ counts, hits: e.hits }, extra), scoresOf({ counts: e.counts, hits: e.hits + more }, extra), scoresOf(e, extra | (1 << bit))]) {
          expect(b.vpn_score).toBeGreaterThanOrEqual(a.vpn_score);
          expect(b.proxy_score).toBeGreaterThanOrEqual(a.proxy_score);
          expect(b.threat_score).toBeGreaterThanOrEqual(a.threat_score);
        }
      }),
      { ...params, numRuns: 1000 },
    );
  });
});
