import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalIp, parseCidr, parseIp } from '../../../src/ip/address.js';
import { parseIpInto } from '../../../src/ip/parse.js';
import { seed } from '../../helpers/env.js';

describe('parseIp', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['::ffff:0102:0304', '1.2.3.4'],
    ['64:ff9b::1.2.3.4', '64:ff9b::102:304'],
    ['fe80:0:0:0:0:0:0:1', 'fe80::1'],
  ])('%s is %s', (input, canonical) => {
    expect(canonicalIp(input)).toBe(canonical);
  });

  it.each([
    '',
    ' 8.8.8.8',
    '8.8.8.8 ',
    '8.8.8',
    '8.8.8.8.8',
    '256.1.1.1',
    '010.1.1.1',
    '1.1.1.01',
    '1..1.1',
    'example.com',
    'bleh',
    '8.8.8.0/24',
    '2001:db8::/32',
    'fe80::1%eth0',
    '[::1]',
    '::1:',
    ':1::',
    '1:::2',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7::8:9',
    '12345::',
    'g::1',
    '::1.2.3',
    '::1.2.3.4.5',
    '1.2.3.4::',
    '0x7f.0.0.1',
    '127.1',
    '1:2:3:4:5:6:7:1.2.3.4',
  ])('%j is not an address', (input) => {
    expect(parseIp(input)).toBeNull();
  });
});

describe('parseCidr', () => {
  it('reads networks and bare addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: parseIp('10.0.0.0'), prefix: 8 });
    expect(parseCidr('2001:db8::/32')?.prefix).toBe(32);
    expect(parseCidr('1.2.3.4')?.prefix).toBe(32);
    expect(parseCidr('1.2.3.4/33')).toBeNull();
    expect(parseCidr('1.2.3.4/x')).toBeNull();
  });
});

describe('parseIpInto with a length', () => {
  it('reads the first `len` characters as the whole text would be read', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 50 })), fc.string({ maxLength: 6 }), (text, after) => {
        const whole = new Uint32Array(4);
        const prefix = new Uint32Array(4);
        const v = parseIpInto(text, whole);
        expect(parseIpInto(text + after, prefix, text.length)).toBe(v);
        if (v !== 0) expect(Array.from(prefix)).toEqual(Array.from(whole));
      }),
      { seed: seed(), numRuns: 3000 },
    );
  });
});
