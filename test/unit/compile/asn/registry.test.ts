/**
 * The network registry readers (`sources.networks`): PeeringDB's network
 * objects as its API and CAIDA's dumps hold them, bgp.tools' AS list and
 * tag lists, IPinfo Lite's CSV, and what they say together.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { combineRegistries, MAX_REGISTRY_BYTES, readRegistry, websiteDomain, type Registry } from '../../../../src/compile/asn/registry.js';
import { InvalidDatasetError } from '../../../../src/contract/errors.js';
import { BGP_TOOLS_ORDER, REGISTRY_STATEMENTS, statementText } from '../../../../src/dataset/registry-statements.js';

const dir = mkdtempSync(join(tmpdir(), 'iprecord-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

/** The type the registries state together, by ASN. */
const types = (...registries: Registry[]): Record<number, string | undefined> =>
  Object.fromEntries(
    [...combineRegistries(registries)]
      .filter(([, e]) => e.statement !== 0)
      .map(([asn, e]) => [asn, REGISTRY_STATEMENTS[e.statement]?.type]),
  );

/** Every value PeeringDB's info_type takes (its `NET_TYPES`), with the type it gives. */
const INFO_TYPES: [string, string | undefined][] = [
  ['', undefined],
  ['Not Disclosed', undefined],
  ['NSP', 'isp'],
  ['Content', 'hosting'],
  ['Cable/DSL/ISP', 'isp'],
  ['Enterprise', 'business'],
  ['Educational/Research', 'education'],
  ['Non-Profit', 'business'],
  ['Route Server', undefined],
  ['Network Services', undefined],
  ['Route Collector', undefined],
  ['Government', 'government'],
];

const IPINFO_HEADER = 'network,country,country_code,continent,continent_code,asn,as_name,as_domain\n';

describe('readRegistry', () => {
  it('reads each info_type of the API shape ({ data }) and of a dump ({ net: { data } })', () => {
    const nets = INFO_TYPES.map(([t], i) => ({
      id: i + 1,
      asn: 64500 + i,
      name: `net ${i}`,
      info_type: t,
      info_types: t === '' ? [] : [t],
    }));
    for (const body of [
      { data: nets, meta: {} },
      { org: { data: [] }, net: { data: nets } },
    ]) {
      const registry = readRegistry(file('net.json', body));
      expect(registry.networks).toBe(nets.length);
      const typed = types(registry);
      expect(Object.fromEntries(INFO_TYPES.map(([t], i) => [t, typed[64500 + i]]))).toEqual(Object.fromEntries(INFO_TYPES));
    }
  });

  it('takes the first of info_types that names a type where info_type does not, and a later file over an earlier one', () => {
    const a = file('a.json', {
      data: [
        { asn: 1, info_type: 'Not Disclosed', info_types: ['Route Server', 'Content'] },
        { asn: 2, info_type: 'NSP' },
      ],
    });
    const b = file('b.json', { data: [{ asn: 2, info_type: 'Enterprise' }, { asn: 'x' }, { name: 'no asn' }, null] });
    expect(types(readRegistry(a), readRegistry(b))).toEqual({ 1: 'hosting', 2: 'business' });
    expect(readRegistry(a).networks + readRegistry(b).networks).toBe(3);
  });

  it('refuses what is not JSON of network objects, naming the file', () => {
    for (const [name, body] of [
      ['cut.json', '{"data": [{"asn": 1'],
      ['list.json', [{ asn: 1, info_type: 'NSP' }]],
      ['other.json', { results: [] }],
    ] as const) {
      const path = file(name, body);
      expect(() => readRegistry(path)).toThrow(InvalidDatasetError);
      expect(() => readRegistry(path)).toThrow(path);
    }
  });

  it('reads a file that begins with a byte order mark, as feeds and configurations are read', () => {
    const path = file('bom.json', `\ufeff${JSON.stringify({ data: [{ asn: 7, info_type: 'NSP' }] })}`);
    expect(types(readRegistry(path))).toEqual({ 7: 'isp' });
    const csv = file('bom.csv', '\ufeffasn,name,class,cc\nAS7,x,Eyeball,US\n');
    expect(types(readRegistry(csv))).toEqual({ 7: 'isp' });
  });

  it('refuses, before reading it, a JSON file over its size bound, a FIFO or a device, naming it', () => {
    const big = join(dir, 'big.json');
    // A sparse file: its size is the point, not its bytes.
    writeFileSync(big, '{"data": []}');
    truncateSync(big, MAX_REGISTRY_BYTES + 1);
    const fifo = join(dir, 'fifo.json');
    spawnSync('mkfifo', [fifo]);
    for (const path of [big, fifo, '/dev/zero']) {
      // A FIFO read would block this process for good (the test's own time-out ends it); nothing here is timed.
      expect(() => readRegistry(path)).toThrow(InvalidDatasetError);
      expect(() => readRegistry(path)).toThrow(path);
    }
    expect(() => readRegistry(big)).toThrow(/more than the 268435456 it may/);
  });

  it("reads PeeringDB's website as the network's domain: its host, without www.", () => {
    const path = file('web.json', {
      data: [
        { asn: 1, website: 'https://www.example.net/about' },
        { asn: 2, website: 'example.org' },
        { asn: 3, website: '' },
        { asn: 4, website: 'http://192.0.2.1/' },
        { asn: 5, website: 'not a site' },
        { asn: 6, website: 'HTTPS://WWW.Müller.DE' },
      ],
    });
    expect(Object.fromEntries(readRegistry(path).domains)).toEqual({ 1: 'example.net', 2: 'example.org', 6: 'xn--mller-kva.de' });
    expect([websiteDomain(null), websiteDomain('https://'), websiteDomain('https://localhost')]).toEqual([null, null, null]);
  });

  it("reads bgp.tools' AS list by its header, each class stating its type and Unknown none", () => {
    const path = file(
      'asns.csv',
      [
        'asn,name,class,cc',
        'AS13335,"Cloudflare, Inc.",Content,US',
        'AS3320,Deutsche Telekom AG,Eyeball,DE',
        'AS174,"Cogent Communications, LLC",Carrier,US',
        'AS64496,Someone,Unknown,GB',
        'AS64497,"Quoted ""name""",Eyeball,NL',
        'not a line',
        '',
      ].join('\r\n'),
    );
    const r = readRegistry(path);
    expect([r.kind, r.networks]).toEqual(['bgptools-asns', 5]);
    expect(types(r)).toEqual({ 13335: 'hosting', 3320: 'isp', 174: 'isp', 64497: 'isp' });
  });

  it('reads a bgp.tools tag list, its tag named by the file (a download keeps it at networks-<n>-<tag>.csv)', () => {
    const body = 'AS64500,Home ISP one\nAS64501,"Two, Ltd"\n';
    for (const [name, kept, want] of [
      ['dsl.csv', undefined, 'isp'],
      ['x.check', '/data/sources/networks-3-uni.csv', 'education'],
      ['vpsh.csv', undefined, 'hosting'],
    ] as const) {
      const r = readRegistry(file(name, body), kept);
      expect(r.kind).toBe('bgptools-tag');
      expect(types(r)).toEqual({ 64500: want, 64501: want });
    }
    // A tag that states no type (anycast, tor) lists networks and says nothing of them.
    const anycast = readRegistry(file('anycast.csv', `asn,name\n${body}`));
    expect([anycast.tag, anycast.networks, anycast.says.size]).toEqual(['anycast', 2, 0]);
  });

  it("reads IPinfo Lite's CSV by its header: each network's first as_domain", () => {
    const path = file(
      'ipinfo_lite.csv',
      IPINFO_HEADER +
        '1.0.0.0/24,Australia,AU,Oceania,OC,AS13335,"Cloudflare, Inc.",cloudflare.com\n' +
        '1.0.4.0/22,Australia,AU,Oceania,OC,AS38803,Gtelecom Pty Ltd,gtelecom.com.au\n' +
        '1.0.8.0/21,China,CN,Asia,AS,AS13335,"Cloudflare, Inc.",other.example\n' +
        '1.0.16.0/24,Japan,JP,Asia,AS,,,\n',
    );
    const r = readRegistry(path);
    expect([r.kind, r.networks]).toEqual(['ipinfo-lite-csv', 3]);
    expect(Object.fromEntries(r.domains)).toEqual({ 13335: 'cloudflare.com', 38803: 'gtelecom.com.au' });
  });

  it("takes PeeringDB's type first, then bgp.tools' statements in their order; IPinfo's domain before PeeringDB's", () => {
    const pdb = readRegistry(
      file('pdb.json', {
        data: [
          { asn: 1, info_type: 'Educational/Research' },
          { asn: 5, website: 'https://five.example' },
        ],
      }),
    );
    const asns = readRegistry(
      file('asns2.csv', 'asn,name,class,cc\nAS1,a,Carrier,US\nAS2,b,Carrier,US\nAS3,c,Unknown,US\nAS4,d,Content,US\n'),
    );
    const vpsh = readRegistry(file('networks-1-vpsh.csv', 'AS2,b\nAS3,c\n'));
    const uni = readRegistry(file('networks-2-uni.csv', 'AS4,d\n'));
    const gov = readRegistry(file('gov.csv', 'AS3,c\n'));
    const ipinfo = readRegistry(file('lite.csv', `${IPINFO_HEADER}192.0.2.0/24,,,,,AS5,e,five.net\n`));
    const all = combineRegistries([gov, vpsh, pdb, uni, asns, ipinfo]);
    // 1: PeeringDB over a class; 2: a carrier class over the hosting tag; 3: the hosting tag over the government one;
    // 4: academic over a class; 5: a domain only.
    expect(Object.fromEntries([...all].map(([asn, e]) => [asn, statementText(e.statement)]))).toEqual({
      1: `PeeringDB's info_type "Educational/Research"`,
      2: `bgp.tools' class "Carrier"`,
      3: `bgp.tools' tag "vpsh" (Server Hosting)`,
      4: `bgp.tools' tag "uni" (Academic)`,
      5: 'a network registry',
    });
    expect(all.get(5)?.domain).toBe('five.net');
    expect(combineRegistries([pdb]).get(5)?.domain).toBe('five.example');
  });

  it('orders every bgp.tools statement once, and no PeeringDB one', () => {
    const tools = REGISTRY_STATEMENTS.flatMap((s, i) => (s?.registry === 'bgp.tools' ? [i] : []));
    expect([...BGP_TOOLS_ORDER].sort((a, b) => a - b)).toEqual(tools);
  });

  it('refuses a file of none of the kinds, naming what it begins with', () => {
    const path = file('other.csv', 'start,end,asn,organisation\n1.0.0.0,1.0.0.255,13335,Cloudflare\n');
    expect(() => readRegistry(path)).toThrow(InvalidDatasetError);
    expect(() => readRegistry(path)).toThrow(/it begins "start,end,asn,organisation"/);
  });
});
