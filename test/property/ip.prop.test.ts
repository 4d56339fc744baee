import { isIP, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIp, isFormatV6 } from '../../src/ip/format.js';
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

  it('tells RFC 5952 text from every other form of the address (as the WHATWG URL serialiser writes it or not)', () => {
    // fc.ipV6() writes some addresses canonically and most not; the canonical text and its upper case besides.
    const text = fc.ipV6().chain((t) => fc.constantFrom(t, urlCanonical(t), urlCanonical(t).toUpperCase(), ` ${urlCanonical(t)}`));
    fc.assert(
      fc.property(text, (t) => {
        const a = parseIp(t.trim());
        fc.pre(a !== null && a.version === 6);
        expect(isFormatV6(t, a.words)).toBe(t === urlCanonical(t.trim()));
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
