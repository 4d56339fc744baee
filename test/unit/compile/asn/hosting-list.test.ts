/**
 * The shipped hosting-ASN list (X4BNet's lists_vpn, MIT): what it holds,
 * and where it decides: only a network whose name states no type, that
 * no registry typed and the datacenter lists did not make `hosting`.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTING_ASNS, PlaceSpread } from '../../../../src/compile/asn/evidence.js';
import { nameRule } from '../../../../src/compile/asn/classify.js';
import { ThreatFlag } from '../../../../src/contract/template.js';
import type { NetworkOwner } from '../../../../src/compile/sources.js';
import { ROOT } from '../../../helpers/env.js';

const file = JSON.parse(readFileSync(join(ROOT, 'src/compile/asn/hosting-asns.json'), 'utf8')) as {
  source: string;
  commit: string;
  license: string;
  asns: number[];
};

/** A network as the sources give it before the data weighs it. */
function owner(asn: number, name: string, registered = false): NetworkOwner {
  const named = nameRule(name)!;
  return {
    asn: `AS${asn}`,
    name,
    domain: null,
    type: named.type,
    carrier: null,
    flags: named.type === 'hosting' ? ThreatFlag.Datacenter : 0,
    typedBy: registered ? 'registry' : named.rule,
    share: null,
    places: 0,
    ...(registered ? { statement: 6 } : {}),
  };
}

describe('the hosting-ASN list', () => {
  it('holds AS numbers, sorted and once each, with the commit it was read at and its MIT licence', () => {
    expect(file.asns.length).toBeGreaterThan(500);
    expect(file.asns.every((n, i) => Number.isInteger(n) && n > 0 && n < 2 ** 32 && (i === 0 || file.asns[i - 1] < n))).toBe(true);
    expect(file.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(file.license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} X4B/);
    expect(file.license).toContain('The above copyright notice and this permission notice shall be included');
    expect(HOSTING_ASNS.size).toBe(file.asns.length);
  });

  it('types a listed network hosting only where its name states no type and no registry typed it', () => {
    const spread = new PlaceSpread();
    const listed = file.asns[0];
    const unlisted = [...Array(1000).keys()].map((i) => 64512 + i).find((n) => !HOSTING_ASNS.has(n))!;
    const t = (o: NetworkOwner) => {
      const w = spread.typed(o, false);
      return [w.type, w.typedBy, (w.flags & ThreatFlag.Datacenter) !== 0];
    };
    expect(t(owner(listed, 'Voxility LLP'))).toEqual(['hosting', 'list', true]);
    expect(t(owner(unlisted, 'Voxility LLP'))).toEqual(['business', 'default', false]);
    // A name that states a type keeps it; so does a registry's type.
    expect(t(owner(listed, 'Example Telecom'))).toEqual(['isp', 'name', false]);
    expect(t(owner(listed, 'Voxility LLP', true))).toEqual(['business', 'registry', false]);
  });
});
