/**
 * The one rule of address forms (`src/ip/embedded.ts`) on the default data:
 * an IPv4 address written as IPv4-mapped, IPv4-compatible or NAT64 IPv6,
 * dotted or in hex, answers what the IPv4 address answers (its record, or
 * its error naming it); the forms the rule leaves out answer as IPv6.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openSync } from '../../src/index.js';
import { seed } from '../helpers/env.js';
import { equal } from '../helpers/check.js';

const engine = openSync();
/** The record less its clock, or the error's message. */
const answer = (ip: string): unknown => {
  try {
    const r = engine.lookup(ip, { count: '0' });
    return { ...r, time_zone: r.time_zone === null ? null : r.time_zone.name };
  } catch (e) {
    return (e as Error).message;
  }
};
const hex = (v4: string) => {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

describe('address forms', () => {
  it('IPv4 as ::ffff:, :: or 64:ff9b:: (dotted or hex) answers as the IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const want = answer(v4);
        for (const form of [
          `::ffff:${v4}`,
          `::FFFF:${hex(v4)}`,
          `64:ff9b::${v4}`,
          `64:FF9B::${hex(v4)}`,
          ...(v4.startsWith('0.0.0.') ? [] : [`::${v4}`, `::${hex(v4)}`]),
        ]) {
          equal(answer(form), want, form);
        }
      }),
      { seed: seed(), numRuns: 3000 },
    );
  });

  it("IPv6 in any form answers as its RFC 5952 text (the URL serialiser's): the record of that text, with that text as its ip", () => {
    /** Canonical IPv6 text via the URL parser of the runtime. */
    const urlCanonical = (ip: string) => new URL(`http://[${ip}]/`).hostname.slice(1, -1);
    const padded = (groups: number[]) => groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
    // Eight groups (half in 2000::/3, where the data has networks; runs of zeros to compress), written four ways.
    const group = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    const groups = fc
      .tuple(fc.oneof(fc.integer({ min: 0x2000, max: 0x3fff }), group), fc.array(group, { minLength: 7, maxLength: 7 }))
      .map(([g, rest]) => [g, ...rest]);
    const text = fc.oneof(
      fc.ipV6(),
      fc.tuple(groups, fc.constantFrom('canonical', 'upper', 'padded', 'plain')).map(([g, form]) => {
        const canonical = urlCanonical(padded(g));
        return form === 'canonical'
          ? canonical
          : form === 'upper'
            ? canonical.toUpperCase()
            : form === 'padded'
              ? padded(g)
              : g.map((x) => x.toString(16)).join(':');
      }),
    );
    const ipOf = engine.select(['ip']);
    fc.assert(
      fc.property(text, (ip) => {
        const canonical = urlCanonical(ip);
        const want = answer(canonical);
        // The address answered: the record's, or the one the error names first. Forms that carry an IPv4 address
        // answer as it (the test before).
        const answered = typeof want === 'string' ? want.split(' ')[0] : (want as { ip: string }).ip;
        if (!answered.includes(':')) return;
        equal(answer(ip), want, ip);
        expect(answered).toBe(canonical);
        if (typeof want !== 'string') {
          expect((want as { ip: string }).ip).toBe(canonical);
          expect((JSON.parse(engine.lookupJson(ip)) as { ip: string }).ip).toBe(canonical);
          expect(ipOf.try(ip)).toEqual({ ip: canonical });
        }
      }),
      { seed: seed(), numRuns: 5000 },
    );
  });

  it('leaves out :: and ::1, local-use NAT64, 6to4 and Teredo, which answer as IPv6', () => {
    expect(answer('::')).toBe(':: is a reserved IP address.');
    expect(answer('::1')).toBe('::1 is a private IP address');
    expect(answer('64:ff9b:1::8.8.8.8')).toBe('64:ff9b:1::808:808 is a private IP address');
    for (const ip of ['2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) expect((answer(ip) as { ip: string }).ip).toBe(ip);
  });
});
