import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIpInto, type IpVersion } from '../../../src/ip/parse.js';
import { AddressMemo, REST, WINDOW, type Resolution } from '../../../src/record/memo.js';
import type { Snapshot } from '../../../src/snapshot.js';
import type { Threat } from '../../../src/types.js';
import { seed } from '../../helpers/env.js';

/** Stand-ins: the memo compares snapshots by identity and keeps what it is given. */
const snapA = {} as Snapshot;
const snapB = {} as Snapshot;
const threat = (n: number) => ({ n }) as unknown as Threat;
/** A resolution whose threat stands for `n`, with a network of `prefix` bits (its leaf -2 when n is even: the IPv4 subtree's root). */
const resolution = (n: number, prefix: number): Resolution => ({ geo: null, asn: null, prefix, source: n % 3, leaf: n % 2 === 0 ? -2 : n * 7, threat: threat(n) });
/** What a slot holds. */
const got = (memo: AddressMemo, slot: number): Resolution => {
  const r = resolution(0, 0);
  memo.get(slot, r);
  return r;
};

function words(ip: string): { version: IpVersion; w: Uint32Array } {
  const w = new Uint32Array(4);
  const version = parseIpInto(ip, w);
  if (version === 0) throw new Error(ip);
  return { version, w };
}

/** IPv4 and IPv6 addresses that all fall in one slot. */
function colliding(): string[] {
  const memo = new AddressMemo();
  const w = new Uint32Array(4);
  const target = memo.slot(4, Uint32Array.of(0, 0, 0, 0x01020304));
  const out: string[] = [];
  for (let x = 0; out.length < 6; x++) {
    w[3] = x;
    if (memo.slot(4, w) === target) out.push(`${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`);
  }
  w[0] = 0x20010db8;
  for (let x = 0; out.length < 10; x++) {
    w[3] = x;
    if (memo.slot(6, w) === target) out.push(`2001:db8::${(x >>> 16).toString(16)}:${(x & 0xffff).toString(16)}`);
  }
  return out;
}

describe('AddressMemo', () => {
  it('answers an address only with what was set for that address, version and snapshot (a model: a map per slot)', () => {
    const same = colliding();
    const addresses = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV4().map((v4) => `::ffff:${v4}`),
      fc.ipV4().map((v4) => `::${v4}`),
      fc.constantFrom(...same),
      fc.constantFrom(...same),
      fc.constantFrom('8.8.8.8', '2001:db8::1', '::8.8.8.8'),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(addresses, fc.boolean()), { minLength: 1, maxLength: 200 }), (ops) => {
        const memo = new AddressMemo();
        /** What each slot holds: the address's key and its value. */
        const model = new Map<number, { key: string; value: number }>();
        let snap = snapA;
        ops.forEach(([ip, swap], i) => {
          if (swap && i % 3 === 0) {
            snap = snap === snapA ? snapB : snapA;
            model.clear();
          }
          const { version, w } = words(ip);
          const key = `${version}:${w.join('.')}`;
          const slot = memo.slot(version, w);
          expect(slot).toBeGreaterThanOrEqual(0);
          const held = model.get(slot);
          const hit = memo.has(snap, slot, version, w);
          expect(hit).toBe(held?.key === key);
          if (hit) {
            expect((got(memo, slot).threat as unknown as { n: number }).n).toBe(held?.value);
            expect(memo.routeAt(slot)).toBe(key);
          } else {
            memo.set(slot, version, w, resolution(i, i % 129));
            model.set(slot, { key, value: i });
            expect(got(memo, slot)).toEqual(resolution(i, i % 129));
            // A route kept for the address the slot held before is not this one's.
            expect(memo.routeAt(slot)).toBeNull();
            memo.setRoute(slot, key);
          }
        });
      }),
      { seed: seed(), numRuns: 100 },
    );
  });

  it('keeps an IPv4 address apart from IPv6 addresses with the same last word', () => {
    const memo = new AddressMemo();
    const v4 = words('8.8.8.8');
    // The first question binds the memo to a snapshot.
    expect(memo.has(snapA, 0, 4, v4.w)).toBe(false);
    for (const other of ['::8.8.8.8', '64:ff9b::8.8.8.8', '2001:db8::808:808']) {
      const o = words(other);
      expect(o.version).toBe(6);
      expect(o.w[3]).toBe(v4.w[3]);
      const slot = memo.slot(v4.version, v4.w);
      memo.set(slot, v4.version, v4.w, resolution(4, 24));
      // Asked in the IPv4 address's slot, or in its own, the IPv6 address is not there.
      expect(memo.has(snapA, slot, o.version, o.w)).toBe(false);
      expect(memo.has(snapA, memo.slot(o.version, o.w), o.version, o.w)).toBe(false);
      expect(memo.has(snapA, slot, v4.version, v4.w)).toBe(true);
    }
  });

  it('rests after a window in which addresses did not come back, and tries again after a while', () => {
    const memo = new AddressMemo();
    const w = new Uint32Array(4);
    let n = 0;
    /** A window of lookups of new addresses, each kept: how many the memo took. */
    const window = (repeat: boolean) => {
      let used = 0;
      for (let i = 0; i < WINDOW; i++) {
        if (!memo.use()) continue;
        used++;
        w[3] = repeat ? i % 16 : n++;
        const slot = memo.slot(4, w);
        if (!memo.has(snapA, slot, 4, w)) memo.set(slot, 4, w, resolution(0, 32));
      }
      return used;
    };
    expect(window(false)).toBe(WINDOW);
    // Nothing came back: the next windows go without the memo, then it tries again.
    for (let k = 0; k < REST; k++) expect(window(false)).toBe(0);
    expect(window(true)).toBe(WINDOW);
    // Addresses that come back keep it in use.
    for (let k = 0; k < 3; k++) expect(window(true)).toBe(WINDOW);
  });
});
