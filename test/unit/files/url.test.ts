/**
 * URLs that carry a secret (`files/url.ts`): `${NAME}` put in from the
 * environment, URL-encoded, only when the request is made; a secret's
 * query value never shown.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandUrl, shownUrl } from '../../../src/files/url.js';

describe('expandUrl', () => {
  it('puts in each variable URL-encoded, so any value is one query value', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (token, other) => {
        const url = expandUrl(`https://ipinfo.io/data/ipinfo_lite.csv.gz?token=\${T}&x=\${U}`, { T: token, U: other });
        const q = new URL(url).searchParams;
        expect([q.get('token'), q.get('x'), [...q.keys()].length]).toEqual([token, other, 2]);
      }),
    );
  });

  it('leaves a URL without variables as it is, and names a variable unset or empty', () => {
    expect(expandUrl('https://bgp.tools/asns.csv', {})).toBe('https://bgp.tools/asns.csv');
    for (const env of [{}, { IPINFO_TOKEN: '' }])
      expect(() => expandUrl(`https://x.example/?token=\${IPINFO_TOKEN}`, env)).toThrow(
        `its URL names \${IPINFO_TOKEN}, and IPINFO_TOKEN is not set in the environment`,
      );
  });
});

describe('shownUrl', () => {
  it("writes a secret's value *** and keeps the rest, and a variable's name as it is", () => {
    expect(shownUrl('https://ipinfo.io/data/ipinfo_lite.csv.gz?token=abc123')).toBe('https://ipinfo.io/data/ipinfo_lite.csv.gz?token=***');
    expect(shownUrl('https://x.example/db?edition=City&license_key=k%20y&API_KEY=z#f')).toBe(
      'https://x.example/db?edition=City&license_key=***&API_KEY=***#f',
    );
    expect(shownUrl(`https://x.example/?token=\${IPINFO_TOKEN}`)).toBe(`https://x.example/?token=\${IPINFO_TOKEN}`);
    expect(shownUrl('https://x.example/?tokens=1&token=')).toBe('https://x.example/?tokens=1&token=');
  });

  it('never shows a value given as a secret parameter, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (secret) => {
        const value = encodeURIComponent(secret);
        fc.pre(!/^\$\{[^}]+\}$/.test(value));
        const shown = shownUrl(`https://x.example/a?b=1&token=${value}&c=2`);
        expect(shown).toBe('https://x.example/a?b=1&token=***&c=2');
      }),
    );
  });
});
