import fc from 'fast-check';
import { IPv4, IPv4CidrRange, IPv6, IPv6CidrRange } from 'ip-num';
import { describe, expect, it } from 'vitest';
import { fromBigInt } from '../../../src/ip/ranges.js';
import { classify, specialTable, IPV4_REGISTRY, IPV6_REGISTRY, SpecialKind, specialName, type Entry } from '../../../src/ip/special.js';
import { parseIp } from '../../../src/ip/address.js';
import { seed } from '../../helpers/env.js';

const table = specialTable();

/**
 * Reference classification, slow and obvious: ip-num's CIDR ranges built
 * from the registry's text, the longest covering prefix wins; IPv6 outside
 * 2000::/3 that no entry covers is unallocated.
 */
const ref4 = IPV4_REGISTRY.map((e) => ({ entry: e, range: IPv4CidrRange.fromCidr(e[0]), prefix: Number(e[0].split('/')[1]) }));
const ref6 = IPV6_REGISTRY.map((e) => ({ entry: e, range: IPv6CidrRange.fromCidr(e[0]), prefix: Number(e[0].split('/')[1]) }));
const KIND: Record<Entry[1], SpecialKind> = { private: SpecialKind.Private, reserved: SpecialKind.Reserved, global: SpecialKind.None };

function reference(version: 4 | 6, n: bigint): { kind: SpecialKind; name: string | null } {
  const hits =
    version === 4 ? ref4.filter((r) => r.range.contains(IPv4.fromNumber(n))) : ref6.filter((r) => r.range.contains(IPv6.fromBigInt(n)));
  if (hits.length > 0) {
    const best = hits.reduce((a, b) => (b.prefix > a.prefix ? b : a));
    return { kind: KIND[best.entry[1]], name: best.entry[2] };
  }
  if (version === 6 && n >> 125n !== 1n) return { kind: SpecialKind.Unallocated, name: null };
  return { kind: SpecialKind.None, name: null };
}

/** Addresses inside a registry range (any host bits), near its edges, or anywhere. */
function addressIn(version: 4 | 6): fc.Arbitrary<bigint> {
  const width = version === 4 ? 32 : 128;
  const registry = version === 4 ? IPV4_REGISTRY : IPV6_REGISTRY;
  const inside = fc
    .tuple(fc.constantFrom(...registry), fc.bigInt({ min: 0n, max: 2n ** BigInt(width) - 1n }), fc.integer({ min: -1, max: 1 }))
    .map(([[cidr], host, edge]) => {
      const [base, len] = cidr.split('/');
      const a = parseIp(base)!;
      const start = version === 4 ? BigInt(a.words[3]) : a.words.reduce((acc, w) => (acc << 32n) | BigInt(w), 0n);
      const size = 1n << BigInt(width - Number(len));
      // Just before, inside, or just past the range.
      const n = edge === 0 ? start + (host % size) : edge < 0 ? start - 1n : start + size;
      return ((n % 2n ** BigInt(width)) + 2n ** BigInt(width)) % 2n ** BigInt(width);
    });
  return fc.oneof(inside, fc.bigInt({ min: 0n, max: 2n ** BigInt(width) - 1n }));
}

describe('special-purpose ranges', () => {
  for (const version of [4, 6] as const) {
    it(`classify IPv${version} like the registry read by ip-num`, () => {
      fc.assert(
        fc.property(addressIn(version), (n) => {
          const words = fromBigInt(version, n);
          const want = reference(version, n);
          expect(classify(table, version, words)).toBe(want.kind);
          if (want.name !== null && want.kind !== SpecialKind.None) expect(specialName(table, version, words)).toBe(want.name);
        }),
        { seed: seed(), numRuns: version === 4 ? 1500 : 600 },
      );
    });
  }

  it('answers the contract examples', () => {
    const kind = (text: string) => {
      const a = parseIp(text)!;
      return classify(table, a.version, a.words);
    };
    expect(kind('10.1.2.3')).toBe(SpecialKind.Private);
    expect(kind('192.168.0.1')).toBe(SpecialKind.Private);
    expect(kind('127.0.0.1')).toBe(SpecialKind.Private);
    expect(kind('::1')).toBe(SpecialKind.Private);
    expect(kind('fe80::1')).toBe(SpecialKind.Private);
    expect(kind('192.0.2.1')).toBe(SpecialKind.Reserved);
    expect(kind('240.0.0.1')).toBe(SpecialKind.Reserved);
    expect(kind('2001:db8::1')).toBe(SpecialKind.Reserved);
    expect(kind('192.0.0.9')).toBe(SpecialKind.None); // globally reachable inside 192.0.0.0/24
    expect(kind('8.8.8.8')).toBe(SpecialKind.None);
    expect(kind('2a00:1450::1')).toBe(SpecialKind.None);
    expect(kind('4000::1')).toBe(SpecialKind.Unallocated);
    expect(kind('::ffff:10.0.0.1')).toBe(SpecialKind.Private); // IPv4-mapped answers as IPv4
  });
});
