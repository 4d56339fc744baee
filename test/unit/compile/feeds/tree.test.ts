import { wholeFileCrc } from '../../../../src/files/checksum.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDatasetError } from '../../../../src/contract/errors.js';
import { buildThreat, scoresOf } from '../../../../src/record/threat.js';
import { CATEGORIES, type Category } from '../../../../src/contract/template.js';
import { compileThreat, type CompileFeed } from '../../../../src/compile/feeds/compile.js';
import { coveredAddresses, layers4 } from '../../../../src/compile/feeds/prepare.js';
import { RangeList } from '../../../../src/compile/feeds/ranges.js';
import { RangeList6 } from '../../../../src/compile/feeds/ranges6.js';
import { copyShifted } from '../../../../src/compile/feeds/tree-encode.js';
import { BUCKETS, CRC_AT, HEADER } from '../../../../src/compile/feeds/tree-format.js';
import { ThreatTree } from '../../../../src/compile/feeds/tree.js';
import { seed } from '../../../helpers/env.js';

const params = { seed: seed(), numRuns: 150 };
const meta = (n: number) => ({
  builtAt: '2026-01-01T00:00:00.000Z',
  feeds: [],
  blocklists: Array.from({ length: n }, (_, i) => ({ name: `bl${i}`, site: `https://bl${i}.example`, type: 'general' })),
});

const MAX4 = 2n ** 32n - 1n;
const MAX6 = 2n ** 128n - 1n;
const words = (version: 4 | 6, n: bigint): [number, number, number, number] =>
  version === 4
    ? [0, 0, 0, Number(n)]
    : [Number((n >> 96n) & 0xffffffffn), Number((n >> 64n) & 0xffffffffn), Number((n >> 32n) & 0xffffffffn), Number(n & 0xffffffffn)];

/** A feed as plain data: ranges [start, end, hits] per family. */
interface Plain {
  categories: Category[];
  except: Category[];
  /** Origins it carries besides its own (its place): a bit per place, a place past the feeds standing for a list not loaded. */
  includes?: number;
  blocklist: number;
  v4: [bigint, bigint, number][];
  v6: [bigint, bigint, number][];
}

function toFeed(f: Plain, place: number): CompileFeed {
  const v4 = new RangeList(4);
  for (const [s, e, h] of f.v4) v4.push(Number(s), Number(e), h);
  const v6 = new RangeList6(4);
  for (const [s, e, h] of f.v6) v6.push(words(6, s), words(6, e), h);
  return {
    categories: f.categories,
    except: f.except,
    origins: originsOf(f, place),
    blocklist: f.blocklist,
    v4: layers4(v4),
    v6: { words: v6.words.slice(0, v6.length * 8), value: v6.value.slice(0, v6.length) },
  };
}

/** A feed's origins: its place, and those its bits name. */
const originsOf = (f: Plain, place: number): number[] => [place, ...[0, 1, 2, 3, 4, 5, 6, 7].filter((i) => ((f.includes ?? 0) >> i) & 1)];

/** Reference: a scan of every feed's entries, `except` applied, then feeds sharing an origin (directly or through another) counted once, as counts, flags, hits and blocklists. */
function reference(feeds: Plain[], version: 4 | 6, n: bigint) {
  const listing = feeds
    .map((f, id) => ({ f, id, hits: (version === 4 ? f.v4 : f.v6).filter(([s, e]) => s <= n && n <= e).map(([, , h]) => h) }))
    .filter((x) => x.hits.length > 0);
  const kept = listing.filter(
    ({ f, id }) => f.except.length === 0 || !listing.some((g) => g.id !== id && g.f.categories.some((c) => f.except.includes(c))),
  );
  // Pieces of evidence: feeds joined while any two of different pieces share an origin.
  let units = kept.map((k) => [k]);
  for (let joined = true; joined;) {
    joined = false;
    for (let a = 0; a < units.length && !joined; a++) {
      for (let b = a + 1; b < units.length && !joined; b++) {
        const origins = new Set(units[a].flatMap(({ f, id }) => originsOf(f, id)));
        if (units[b].some(({ f, id }) => originsOf(f, id).some((o) => origins.has(o)))) {
          units = [...units.filter((_, i) => i !== a && i !== b), [...units[a], ...units[b]]];
          joined = true;
        }
      }
    }
  }
  const counts = CATEGORIES.map((c) => units.filter((u) => u.some(({ f }) => f.categories.includes(c))).length);
  const flags = CATEGORIES.reduce((a, c, bit) => (kept.some(({ f }) => f.categories.includes(c)) ? a | (1 << bit) : a), 0);
  const hits = kept.length === 0 ? 0 : Math.max(0, ...listing.flatMap((x) => x.hits.map((h) => (h > 1 ? h : 0))));
  const blocklists = [...new Set(kept.map(({ f }) => f.blocklist).filter((b) => b >= 0))].sort((a, b) => a - b).map((b) => `bl${b}`);
  return { counts, flags, hits, blocklists };
}

const hitsArb = fc.constantFrom(1, 1, 1, 2, 5, 12);
/** A CIDR block, an arbitrary range, or a short range (across a /16 edge or at the ends of the space, often). */
function rangeArb(max: bigint, width: number): fc.Arbitrary<[bigint, bigint, number]> {
  const block = fc
    .tuple(fc.bigInt({ min: 0n, max }), fc.integer({ min: 0, max: width }), hitsArb)
    .map(([a, p, h]): [bigint, bigint, number] => {
      const size = 1n << BigInt(width - p);
      const s = (a / size) * size;
      return [s, s + size - 1n, h];
    });
  const edge = fc.constantFrom(0n, max, 65535n, 65536n, 0xffff0000n, 0x0a00ffffn, 0x8000ffffn, 0xc0a7ffffn);
  const near = fc
    .tuple(fc.oneof(edge, fc.bigInt({ min: 0n, max })), fc.bigInt({ min: -300n, max: 300n }), fc.bigInt({ min: 0n, max: 70000n }), hitsArb)
    .map(([c, d, len, h]): [bigint, bigint, number] => {
      const s = c + d < 0n ? 0n : c + d > max ? max : c + d;
      return [s, s + len > max ? max : s + len, h];
    });
  const any = fc
    .tuple(fc.bigInt({ min: 0n, max }), fc.bigInt({ min: 0n, max }), hitsArb)
    .map(([a, b, h]): [bigint, bigint, number] => (a <= b ? [a, b, h] : [b, a, h]));
  return fc.oneof(block, near, any);
}

/** IPv6: blocks within 2000::/3 mostly, single addresses, and ranges at the top of the space. */
const v6Arb = fc.oneof(
  fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 61n - 1n }), fc.integer({ min: 3, max: 128 })).map(([a, p]): [bigint, bigint, number] => {
    const size = 1n << BigInt(128 - p);
    const s = (((0x2000000000000000n | a) << 64n) / size) * size;
    return [s, s + size - 1n, 1];
  }),
  fc.bigInt({ min: 0n, max: MAX6 }).map((a): [bigint, bigint, number] => [a, a, 1]),
  fc.bigInt({ min: 0n, max: 2n ** 20n }).map((d): [bigint, bigint, number] => [MAX6 - d, MAX6, 1]),
);

const feedArb = fc.record({
  categories: fc.uniqueArray(fc.constantFrom(...CATEGORIES), { minLength: 1, maxLength: 2 }),
  except: fc.uniqueArray(fc.constantFrom<Category>('bogon', 'icloud_relay', 'vpn'), { maxLength: 1 }),
  blocklist: fc.integer({ min: -1, max: 2 }),
  includes: fc.oneof(fc.constant(0), fc.constant(0), fc.nat(255)),
  v4: fc.array(rangeArb(MAX4, 32), { maxLength: 8 }),
  v6: fc.array(v6Arb, { maxLength: 4 }),
});

describe('threat tree', () => {
  it('answers each address like a scan of every feed (compact and wide labels): union of covering entries, except and includes applied', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(feedArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.bigInt({ min: 0n, max: MAX4 }), { maxLength: 20 }),
        fc.boolean(),
        async (plain, probes, wide) => {
          const { buffer, stats } = await compileThreat(
            plain.map((f, i) => toFeed(f, i)),
            meta(3),
            { compactLabels: wide ? 1 : undefined },
          );
          const tree = new ThreatTree(buffer, 'prop');
          expect(stats.labels).toBe(tree.labelCount);
          // Random addresses, and the edges of every entry: first, last, one before, one past.
          const addrs: [4 | 6, bigint][] = probes.map((p) => [4, p]);
          for (const f of plain) {
            for (const [version, list, max] of [[4, f.v4, MAX4] as const, [6, f.v6, MAX6] as const]) {
              for (const [s, e] of list) for (const n of [s, e, s - 1n, e + 1n]) if (n >= 0n && n <= max) addrs.push([version, n]);
            }
          }
          // The batch form answers as the single one (blocks of 64, so more than one block).
          const v4 = Uint32Array.from(
            [...addrs.filter(([v]) => v === 4), ...addrs.filter(([v]) => v === 4)].flatMap(([, n]) => [Number(n), Number(n) ^ 0x80000000]),
          );
          const many = new Uint32Array(v4.length);
          tree.find4Many(v4, many);
          expect(Array.from(many)).toEqual(Array.from(v4, (ip) => tree.find4(ip)));
          for (const [version, n] of addrs) {
            const label = tree.find(version, words(version, n));
            const want = reference(plain, version, n);
            expect({
              counts: tree.counts(label),
              flags: tree.flags(label),
              hits: tree.hits(label),
              blocklists: tree.blocklists(label).map((b) => b.name),
            }).toEqual(want);
          }
        },
      ),
      // Each run compiles a threat.bin (0.1-0.2 s by the machine's phase): 25 runs, both labelling modes drawn (a new
      // seed each CI run).
      { ...params, numRuns: 25 },
    );
  });

  it('refuses damaged files with a typed error', async () => {
    const feed: Plain = {
      categories: ['tor'],
      except: [],
      blocklist: 0,
      v4: [[0x01020300n, 0x010203ffn, 1]],
      v6: [[0x20010db8n << 96n, (0x20010db8n << 96n) + 255n, 1]],
    };
    const good = (await compileThreat([toFeed(feed, 0)], meta(1))).buffer;
    expect(new ThreatTree(good, 'good').find(4, [0, 0, 0, 0x01020304])).toBeGreaterThan(0);
    /** The good file changed in place by `f`, or what `f` gives instead. */
    const damaged = (f: (b: Buffer) => unknown): Buffer => {
      const b = Buffer.from(good);
      const made = f(b);
      return made instanceof Buffer ? made : b;
    };
    const cases: [string, Buffer, RegExp][] = [
      ['magic', damaged((b) => void b.write('XXXX', 0)), /bad magic/],
      ['version', damaged((b) => void b.writeUInt32LE(99, 8)), /format version 99/],
      ['truncated', good.subarray(0, good.length - 8), /add up to/],
      ['empty', Buffer.alloc(0), /bad magic/],
      ['flipped bit', damaged((b) => void (b[70] ^= 1)), /checksum/],
      // The header is under the checksum too: its range counts (info()) and its zeros.
      ...[33, 40, 44, 48, 63].map((at): [string, Buffer, RegExp] => [`header byte ${at}`, damaged((b) => void (b[at] ^= 1)), /checksum/]),
    ];
    // Labels out of the label table, the checksum made again (a crafted file, not a damaged one).
    const crafted = (word: (b: Buffer) => number, value: (old: number) => number) =>
      damaged((b) => {
        const at = word(b);
        b.writeUInt32LE(value(b.readUInt32LE(at)) >>> 0, at);
        b.writeUInt32LE(wholeFileCrc(b, HEADER, CRC_AT), CRC_AT);
      });
    const entries4 = 64 + (BUCKETS + 1) * 4;
    const kinds6 = (b: Buffer) => entries4 + b.readUInt32LE(12) * 4 + b.readUInt32LE(16) * 16;
    cases.push(
      [
        'IPv4 label out of range',
        crafted(
          () => entries4,
          (old) => (old & 0xffff0000) | 0xffff,
        ),
        /IPv4 entry has label 65535 of 2/,
      ],
      ['IPv6 label out of range', crafted(kinds6, (old) => (old & 0x80000000) | 7), /IPv6 entry has label 7 of 2/],
    );
    for (const [name, buf, message] of cases) {
      expect(() => new ThreatTree(buf, name), name).toThrow(InvalidDatasetError);
      expect(() => new ThreatTree(buf, name), name).toThrow(message);
    }
  });

  it('counts a range across the middle of the IPv4 space (where the compiler splits its work) as one merged range', async () => {
    const mid = 2n ** 31n;
    const feeds: Plain[] = [
      {
        categories: ['tor'],
        except: [],
        blocklist: -1,
        v4: [
          [mid - 10n, mid + 10n, 1],
          [5n, 5n, 1],
          [MAX4, MAX4, 1],
        ],
        v6: [],
      },
      { categories: ['vpn'], except: [], blocklist: -1, v4: [[mid, mid, 1]], v6: [] },
    ];
    const { stats, buffer } = await compileThreat(feeds.map(toFeed), meta(0));
    // [5], [mid-10, mid-1] tor, [mid] tor+vpn, [mid+1, mid+10] tor, [MAX] tor.
    expect(stats.ranges.v4).toBe(5);
    expect(new ThreatTree(buffer, 'mid').ranges.v4).toBe(5);
    const one = await compileThreat([toFeed(feeds[0], 0)], meta(0));
    expect(one.stats.ranges.v4).toBe(3);
  });

  it('counts covered addresses once where entries overlap', () => {
    const v4 = new RangeList();
    v4.push(0x0a000000, 0x0affffff, 1);
    v4.push(0x0a010000, 0x0a01ffff, 1);
    v4.push(0x0b000000, 0x0b0000ff, 1);
    v4.push(0xffffffff, 0xffffffff, 1);
    const v6 = new RangeList6();
    v6.push(words(6, 0x20010db8n << 96n), words(6, ((0x20010db8n + 1n) << 96n) - 1n), 1);
    v6.push(words(6, MAX6), words(6, MAX6), 1);
    v6.push(words(6, MAX6 - 1n), words(6, MAX6), 1);
    expect(coveredAddresses(v4, v6)).toEqual({ v4: 2 ** 24 + 256 + 1, v6: 2n ** 96n + 2n });
  });
  it('counts covered addresses as a scan of the merged ranges does, in file order or sorted (property)', () => {
    /** Reference: ranges sorted and merged in BigInt, their sizes summed. */
    const covered = (ranges: [bigint, bigint, number][]) => {
      let total = 0n;
      let last = -1n;
      for (const [s, e] of [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
        const from = s > last ? s : last + 1n;
        if (e >= from) total += e - from + 1n;
        if (e > last) last = e;
      }
      return total;
    };
    fc.assert(
      fc.property(
        fc.array(rangeArb(MAX4, 32), { maxLength: 40 }),
        fc.array(rangeArb(MAX6, 128), { maxLength: 40 }),
        fc.boolean(),
        (r4, r6, sort) => {
          const order = (rs: [bigint, bigint, number][]) => (sort ? [...rs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : rs);
          const v4 = new RangeList(4);
          for (const [s, e, h] of order(r4)) v4.push(Number(s), Number(e), h);
          const v6 = new RangeList6(4);
          for (const [s, e, h] of order(r6)) v6.push(words(6, s), words(6, e), h);
          expect(coveredAddresses(v4, v6)).toEqual({ v4: Number(covered(r4)), v6: covered(r6) });
          // The layers, built in the parsed list's own arrays, cover the same addresses.
          const layers = layers4(v4, true);
          const all = layers.flatMap((l) => Array.from(l.start, (s, i): [bigint, bigint, number] => [BigInt(s), BigInt(l.end[i]), 1]));
          expect(covered(all)).toBe(covered(r4));
          for (const l of layers) for (let i = 1; i < l.start.length; i++) expect(l.start[i]).toBeGreaterThan(l.end[i - 1] + 1);
        },
      ),
      params,
    );
  });
});

describe('scores', () => {
  const evidence = fc.record({
    counts: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 8, maxLength: 8 }),
    hits: fc.integer({ min: 0, max: 12 }),
  });

  it('no evidence: 0, 0, 0 and trust 100', () => {
    expect(scoresOf({ counts: [0, 0, 0, 0, 0, 0, 0, 0], hits: 0 }, 0)).toEqual({
      vpn_score: 0,
      proxy_score: 0,
      threat_score: 0,
      trust_score: 100,
    });
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
      fc.property(
        evidence,
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 255 }),
        (e, bit, more, extra) => {
          const a = scoresOf(e, extra);
          const counts = [...e.counts];
          counts[bit] += more;
          for (const b of [
            scoresOf({ counts, hits: e.hits }, extra),
            scoresOf({ counts: e.counts, hits: e.hits + more }, extra),
            scoresOf(e, extra | (1 << bit)),
          ]) {
            expect(b.vpn_score).toBeGreaterThanOrEqual(a.vpn_score);
            expect(b.proxy_score).toBeGreaterThanOrEqual(a.proxy_score);
            expect(b.threat_score).toBeGreaterThanOrEqual(a.threat_score);
          }
        },
      ),
      { ...params, numRuns: 1000 },
    );
  });
});

describe('flags where categories overlap', () => {
  const bit = (c: Category) => 1 << CATEGORIES.indexOf(c);
  const counts = (...cs: Category[]) => CATEGORIES.map((c) => cs.filter((x) => x === c).length);

  it('relay is not datacenter, from a list or from the network type, and adds no VPN score; other categories stay as they are', () => {
    fc.assert(
      fc.property(fc.subarray([...CATEGORIES]), fc.subarray([...CATEGORIES]), (listedCats, extraCats) => {
        const extra = extraCats.reduce((a, c) => a | bit(c), 0);
        const t = buildThreat({ counts: counts(...listedCats), hits: 0 }, extra, []);
        const relay = listedCats.includes('icloud_relay');
        expect(t.is_icloud_relay).toBe(relay || extraCats.includes('icloud_relay'));
        expect(t.is_datacenter).toBe(!relay && (listedCats.includes('datacenter') || extraCats.includes('datacenter')));
        expect(t.is_tor).toBe(listedCats.includes('tor') || extraCats.includes('tor'));
        if (relay && !listedCats.includes('vpn') && !extraCats.includes('vpn')) expect(t.scores?.vpn_score).toBe(0);
      }),
      params,
    );
  });
});

describe('copyShifted', () => {
  it('writes what adding the offset to each bucket does, for any index that never decreases', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 40 }), { maxLength: 300 }), fc.nat({ max: 5 }), fc.nat({ max: 1e6 }), (steps, at, offset) => {
        let v = 0;
        const src = Uint32Array.from(steps, (s) => (v += s % 3 === 0 ? s : 0));
        const dst = new Uint32Array(at + src.length + 2).fill(7);
        copyShifted(src, dst, at, offset);
        const want = new Uint32Array(dst.length).fill(7);
        src.forEach((x, i) => (want[at + i] = x + offset));
        expect(dst).toEqual(want);
      }),
      params,
    );
  });
});
