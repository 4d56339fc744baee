import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildThreat } from '../../../../src/compile/feeds/build.js';
import { parseThreatConfig } from '../../../../src/compile/feeds/config.js';
import { parseFeed } from '../../../../src/compile/feeds/parse.js';
import { tooWide, type Widest } from '../../../../src/compile/feeds/widest.js';
import { parseCidr } from '../../../../src/ip/address.js';
import { IPV4_REGISTRY } from '../../../../src/ip/special.js';
import { seed } from '../../../helpers/env.js';

const LIST: Widest = { ipv4: 8, ipv6: 16 };
const wide = (text: string, widest = LIST) => {
  const p = parseFeed(text, 'list');
  expect(p.badLines).toEqual([]);
  return tooWide(p.v4, p.v6, widest);
};

describe('the widest entry a feed takes', () => {
  it.each([
    ['0.0.0.0/0', LIST, /^the entry 0\.0\.0\.0-255\.255\.255\.255 covers \d+ public IPv4 addresses, more than a \/8$/],
    ['2.0.0.0/7', LIST, /covers 33554432 public IPv4 addresses/],
    ['1.0.0.0-3.0.0.0', LIST, /^the entry 1\.0\.0\.0-3\.0\.0\.0 covers 33554433 public/],
    ['8.0.0.0/8', LIST, null],
    // 10/8 is private: 10.0.0.0/7 holds one public /8.
    ['10.0.0.0/7', LIST, null],
    // FireHOL level 1 lists multicast and class E as one block: no public address in it.
    ['224.0.0.0/3', LIST, null],
    ['0.0.0.0/0', { ipv4: 0, ipv6: 16 }, null],
    ['2.0.0.0/7', { ipv4: 6, ipv6: 16 }, null],
    ['::/0', LIST, /^the entry ::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff covers public IPv6 space wider than a \/16$/],
    ['2000::/15', LIST, /wider than a \/16/],
    ['2a00::/16', LIST, null],
    // Outside 2000::/3 nothing is allocated: a bogon list's 8000::/1 lists no public address.
    ['8000::/1', LIST, null],
    ['4000::/2', LIST, null],
    // Bogon lists take up to a /4 of IPv6 (Team Cymru's list holds 3000::/4).
    ['3000::/4', { ipv4: 8, ipv6: 4 }, null],
    ['::/0', { ipv4: 8, ipv6: 4 }, /wider than a \/4/],
  ] as const)('%s (ipv4 /%o): %s', (entry, widest, want) => {
    const got = wide(`8.8.8.0/24\n${entry}\n2001:db8::/48\n`, widest);
    if (want === null) expect(got).toBeNull();
    else expect(got).toMatch(want);
  });

  it('takes any IPv4 entry within one block of its prefix, and refuses two blocks that hold no private or reserved address (property)', () => {
    const special = IPV4_REGISTRY.filter(([, kind]) => kind !== 'global').map(([cidr]) => {
      const c = parseCidr(cidr)!;
      const first = c.address.words[3] >>> 0;
      return [first, first + 2 ** (32 - c.prefix) - 1] as const;
    });
    const text = (n: number) => [24, 16, 8, 0].map((k) => Math.floor(n / 2 ** k) % 256).join('.');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 24 }), fc.nat(0xffffffff), fc.nat(0xffffffff), (prefix, a, b) => {
        const size = 2 ** (32 - prefix);
        const block = Math.floor(a / size) * size;
        const [s, e] = [block + (Math.min(a, b) % size), block + (Math.max(a, b) % size)];
        expect(wide(`${text(Math.min(s, e))}-${text(Math.max(s, e))}`, { ipv4: prefix, ipv6: 16 })).toBeNull();
        const two = Math.floor(a / (2 * size)) * 2 * size;
        const last = two + 2 * size - 1;
        if (prefix >= 2 && special.every(([f, l]) => l < two || f > last))
          expect(wide(`${text(two)}/${prefix - 1}`, { ipv4: prefix, ipv6: 16 })).toMatch(/^the entry /);
      }),
      { seed: seed(), numRuns: 500 },
    );
  });
});

describe('a build over a list with an entry too wide', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-widest-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports the list as failed, naming the entry, and compiles the others', async () => {
    writeFileSync(join(dir, 'hostile.txt'), '185.220.101.1\n0.0.0.0/0\n');
    writeFileSync(join(dir, 'tor.txt'), '185.220.101.1\n');
    const config = parseThreatConfig(
      {
        feeds: [
          { name: 'hostile', source: 'hostile.txt', format: 'list', categories: ['attacker'] },
          { name: 'tor', source: 'tor.txt', format: 'list', categories: ['tor'] },
        ],
      },
      dir,
    );
    const built = await buildThreat(config, null, { threads: 1 });
    expect(built.feeds.map((f) => [f.name, f.state, f.error ?? null])).toEqual([
      ['hostile', 'failed', expect.stringMatching(/^refused: the entry 0\.0\.0\.0-255\.255\.255\.255 covers/)],
      ['tor', 'ok', null],
    ]);
    expect(built.meta.feeds.map((f) => f.name)).toEqual(['tor']);
  });
});
