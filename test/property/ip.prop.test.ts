import { isIP, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIp } from '../../src/ip/format.js';
import { parseIpInto, parsedCanonically } from '../../src/ip/parse.js';
import { AddressCheck } from '../../src/ip/check.js';
import { specialTable } from '../../src/ip/special.js';
import { parseIp } from '../../src/ip/address.js';
import { seed } from '../helpers/env.js';

const params = { seed: seed(), numRuns: 20_000 };

/** Text that looks like addresses, and near misses. */
const ipLike = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.stringMatching(/^[0-9a-fA-F:.]{0,45}$/),
  fc.string({ maxLength: 50 }),
  fc.tuple(fc.ipV6(), fc.constantFrom('%eth0', '/64', ' ', ']', '%')).map(([a, b]) => a + b),
);

/** Canonical IPv6 text (RFC 5952) via the URL parser of the runtime. */
function urlCanonical(ip: string): string {
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

describe('address parser', () => {
  it('accepts exactly what node:net isIP accepts (zone ids aside)', () => {
    fc.assert(
      fc.property(ipLike, (text) => {
        const ours = parseIp(text);
        const node = isIP(text);
        if (text.includes('%')) {
          expect(ours).toBeNull();
          return;
        }
        expect(ours !== null).toBe(node !== 0);
      }),
      params,
    );
  });

  it('round-trips: format(parse(x)) parses to the same address, and is a fixed point', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const a = parseIp(text)!;
        const canon = formatIp(a.version, a.words);
        const b = parseIp(canon)!;
        expect(b).toEqual(a);
        expect(formatIp(b.version, b.words)).toBe(canon);
      }),
      params,
    );
  });

  it('writes IPv6 as RFC 5952 (agrees with the WHATWG URL serialiser)', () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const a = parseIp(text)!;
        fc.pre(a.version === 6);
        expect(isIPv6(formatIp(6, a.words))).toBe(true);
        expect(formatIp(6, a.words)).toBe(urlCanonical(text));
      }),
      params,
    );
  });

  it('tells RFC 5952 text from every other form of the address as it parses it (as the WHATWG URL serialiser writes it or not)', () => {
    // fc.ipV6() writes some addresses canonically and most not; the canonical text and its upper case besides.
    const text = fc.ipV6().chain((t) => fc.constantFrom(t, urlCanonical(t), urlCanonical(t).toUpperCase()));
    const words = new Uint32Array(4);
    fc.assert(
      fc.property(text, (t) => {
        fc.pre(parseIpInto(t, words) === 6);
        expect(parsedCanonically()).toBe(t === urlCanonical(t));
      }),
      params,
    );
  });

  it('tells RFC 5952 text from any spelling of groups with runs of zeros, leading zeros, either case and any `::`', () => {
    // Eight groups, zeros often (runs of them, ties among runs); each written in either case, with or without
    // leading zeros; `::` in place of any run of zero groups or of none.
    // Upper case and leading zeros rarely, group by group: a share of the spellings is canonical.
    const rarely = fc.constantFrom(false, false, false, false, false, false, false, true);
    const spelling = fc
      .tuple(
        fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 1, max: 0xff })), {
          minLength: 8,
          maxLength: 8,
        }),
        fc.array(fc.tuple(rarely, fc.integer({ min: 0, max: 3 }), rarely), { minLength: 8, maxLength: 8 }),
        fc.nat(8),
        fc.nat(8),
      )
      .map(([groups, styles, from, length]) => {
        const hex = groups.map((g, i) => {
          const [upper, pad, padded] = styles[i];
          const h = g.toString(16);
          const t = padded ? h.padStart(Math.min(4, h.length + pad), '0') : h;
          return upper ? t.toUpperCase() : t;
        });
        // `::` over groups from..from+length when all of them are zero.
        const end = Math.min(8, from + Math.max(1, length));
        if (from < 8 && groups.slice(from, end).every((g) => g === 0))
          return `${hex.slice(0, from).join(':')}::${hex.slice(end).join(':')}`;
        return hex.join(':');
      });
    const words = new Uint32Array(4);
    const check = new AddressCheck(specialTable());
    fc.assert(
      fc.property(spelling, (t) => {
        fc.pre(parseIpInto(t, words) === 6);
        expect(parsedCanonically()).toBe(t === formatIp(6, words));
        expect(t === urlCanonical(t)).toBe(t === formatIp(6, words));
        // The address check keeps the text given where it is canonical, and makes it where not (`::a.b.c.d` is IPv4).
        check.check(t);
        expect(check.parsed.text).toBe(formatIp(check.parsed.version, check.words));
      }),
      params,
    );
  });

  it('answers IPv4-mapped IPv6 as IPv4', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.constantFrom('::ffff:', '::FFFF:', '0:0:0:0:0:ffff:'), (v4, prefix) => {
        const a = parseIp(prefix + v4)!;
        expect(a.version).toBe(4);
        expect(formatIp(4, a.words)).toBe(v4);
      }),
      params,
    );
  });
});
