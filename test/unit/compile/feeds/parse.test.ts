import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commentDate, parseFeed, parseList, parseCsv } from '../../../../src/compile/feeds/parse.js';
import { seed } from '../../../helpers/env.js';
import { Collector, listLine } from '../../../../src/compile/feeds/collect.js';

/** The reference: every line of a list read from its text by the text reader (what parseList does for lines it does not read from the bytes). */
function textReader(bytes: Uint8Array, minHits: number) {
  const c = new Collector();
  const texts = Buffer.from(bytes).toString('utf8').split('\n');
  if (texts.at(-1) === '') texts.pop();
  texts.forEach((t, i) => listLine(c, i + 1, t.endsWith('\r') ? t.slice(0, -1) : t, minHits));
  c.lines = texts.length;
  return c.result();
}
import { formatCidr } from '../../../../src/ip/format.js';
import { rangeToCidrs } from '../../../../src/ip/ranges.js';

/** A parsed feed's ranges as CIDR blocks: IPv4 then IPv6, each in file order. */
const cidrs = (text: string, format: Parameters<typeof parseFeed>[1], options = {}) => {
  const { v4, v6 } = parseFeed(text, format, options);
  const out: string[] = [];
  for (let i = 0; i < v4.length; i++) {
    for (const c of rangeToCidrs({ version: 4, words: [0, 0, 0, v4.start[i]] }, { version: 4, words: [0, 0, 0, v4.end[i]] }))
      out.push(formatCidr(4, c.words, c.prefix));
  }
  for (let i = 0; i < v6.length; i++) {
    const w = Array.from(v6.words.subarray(i * 8, i * 8 + 8));
    for (const c of rangeToCidrs({ version: 6, words: [w[0], w[1], w[2], w[3]] }, { version: 6, words: [w[4], w[5], w[6], w[7]] }))
      out.push(formatCidr(6, c.words, c.prefix));
  }
  return out;
};

describe('feed parsers', () => {
  it('list: addresses, CIDRs (host bits cleared), ranges, comments of both kinds', () => {
    const text = [
      '# FireHOL header',
      '; Spamhaus header',
      '1.2.3.4',
      '10.0.0.77/8',
      '2001:db8::/32',
      '5.6.7.0 - 5.6.7.255',
      '8.8.8.0/24 ; SBL123',
      '',
      '   9.9.9.9   ',
    ].join('\n');
    expect(cidrs(text, 'list')).toEqual(['1.2.3.4/32', '10.0.0.0/8', '5.6.7.0/24', '8.8.8.0/24', '9.9.9.9/32', '2001:db8::/32']);
  });

  it('list: proxies as host:port, scheme://host:port, user@host, [v6]:port', () => {
    const text = 'socks5://1.1.1.1:1080\nhttp://user:pw@2.2.2.2:8080\n3.3.3.3:3128\n[2001:db8::1]:443\n2001:db8::2';
    expect(cidrs(text, 'list')).toEqual(['1.1.1.1/32', '2.2.2.2/32', '3.3.3.3/32', '2001:db8::1/128', '2001:db8::2/128']);
  });

  it('list: ipsum hit counts, with a threshold', () => {
    const r = parseFeed('# IP\tnumber\n1.1.1.1\t10\n2.2.2.2\t2\n3.3.3.3\t3\n', 'list', { minHits: 3 });
    expect(Array.from(r.v4.start.subarray(0, r.v4.length), (s, i) => [s >>> 24, r.v4.value[i]])).toEqual([
      [1, 10],
      [3, 3],
    ]);
    expect(r.skipped).toBe(1);
    expect(r.entries).toBe(2);
  });

  it('reports every bad line with its number and keeps going', () => {
    const r = parseFeed('1.1.1.1\nnot-an-ip\n2.2.2.2 junk\n300.1.1.1\n1.1.1.0/33\n5.5.5.5-4.4.4.4\n6.6.6.6\n', 'list');
    expect(r.entries).toBe(2);
    expect(r.badLines.map((b) => b.line)).toEqual([2, 3, 4, 5, 6]);
    expect(r.badLines[0]).toMatchObject({ text: 'not-an-ip' });
  });

  it('csv: column by header name, quoted fields with commas, header detected', () => {
    const text = '"ExitIP","City"\n"1.1.1.1","Paris, France"\n"bad","x"\n2.2.2.2,\n';
    const r = parseFeed(text, 'csv', { column: 'ExitIP' });
    expect(r.v4.length).toBe(2);
    expect(r.badLines.map((b) => b.line)).toEqual([3]);
    expect(cidrs('IPRange,Country\n10.0.0.0/25,US\n', 'csv', { column: 'IPRange' })).toEqual(['10.0.0.0/25']);
    // A geofeed: no header, '#' comments.
    expect(cidrs('# geofeed\n2600:3c00::/32,US,US-TX,Richardson,\n5.101.96.0/21,NL,NL-NH,Amsterdam,1098 XH\n', 'csv')).toEqual([
      '5.101.96.0/21',
      '2600:3c00::/32',
    ]);
    expect(parseFeed('Name,Other\n1.1.1.1,x\n', 'csv', { column: 'ExitIP' }).badLines[0].reason).toMatch(/no column named/);
  });

  it('range-csv: start,end split into CIDR blocks', () => {
    expect(cidrs('3.0.0.0,3.1.255.255,Amazon AWS,http://aws\n5.34.240.0,5.34.244.255,x,y\n', 'range-csv')).toEqual([
      '3.0.0.0/15',
      '5.34.240.0/22',
      '5.34.244.0/24',
    ]);
    expect(parseFeed('3.0.0.0,2.0.0.0,x\n', 'range-csv').badLines).toHaveLength(1);
  });

  it("dates a list by the newest date its header gives (FireHOL's: the source's date, then its own update)", () => {
    const head = '# Source File Date: Sat Aug 22 00:54:28 UTC 2026\n# Last Updated 1787443200\n# Updated: 2026-08-20 10:00:00\n1.2.3.4\n';
    expect(parseFeed(head, 'list').dataDate).toBe(new Date(1787443200 * 1000).toISOString());
    expect(parseFeed('# Updated: 2026-08-20 10:00:00\n1.2.3.4\n', 'list').dataDate).toBe('2026-08-20T10:00:00.000Z');
  });

  it('cloud JSON files', () => {
    expect(
      cidrs(
        JSON.stringify({
          createDate: '2025-07-24-21-43-06',
          prefixes: [{ ip_prefix: '3.5.140.0/22' }],
          ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24' }],
        }),
        'aws-json',
      ),
    ).toEqual(['3.5.140.0/22', '2600:1f00::/24']);
    expect(parseFeed(JSON.stringify({ createDate: '2025-07-24-21-43-06', prefixes: [] }), 'aws-json').dataDate).toBe(
      '2025-07-24T21:43:06.000Z',
    );
    expect(cidrs(JSON.stringify({ prefixes: [{ ipv4Prefix: '34.1.208.0/20' }, { ipv6Prefix: '2600:1900::/28' }] }), 'gcp-json')).toEqual([
      '34.1.208.0/20',
      '2600:1900::/28',
    ]);
    expect(
      cidrs(JSON.stringify({ values: [{ properties: { addressPrefixes: ['13.66.60.119/32', '2603:1030::/48'] } }] }), 'azure-json'),
    ).toEqual(['13.66.60.119/32', '2603:1030::/48']);
    expect(cidrs(JSON.stringify({ regions: [{ cidrs: [{ cidr: '129.146.0.0/21' }] }] }), 'oracle-json')).toEqual(['129.146.0.0/21']);
    const bad = parseFeed(JSON.stringify({ prefixes: [{ ip_prefix: 'x' }, { ip_prefix: 5 }] }), 'aws-json');
    expect(bad.badLines.map((b) => b.text)).toEqual(['prefixes[0]: x', 'prefixes[1]: 5']);
    expect(parseFeed('{', 'gcp-json').badLines[0].reason).toMatch(/invalid JSON/);
  });

  it('a byte order mark at the start of a file changes nothing, in every format, as text or bytes', () => {
    const samples: [Parameters<typeof parseFeed>[1], string][] = [
      ['list', '1.2.3.4\n10.0.0.0/8\n'],
      ['list', '2001:db8::/32\n1.1.1.1\t4\n'],
      ['csv', '"ExitIP","City"\n"1.1.1.1","Paris"\n'],
      ['range-csv', '3.0.0.0,3.1.255.255,x\n'],
      ['aws-json', JSON.stringify({ createDate: '2025-07-24-21-43-06', prefixes: [{ ip_prefix: '3.5.140.0/22' }] })],
      ['gcp-json', JSON.stringify({ prefixes: [{ ipv4Prefix: '34.1.208.0/20' }] })],
      ['azure-json', JSON.stringify({ values: [{ properties: { addressPrefixes: ['13.66.60.119/32'] } }] })],
      ['oracle-json', JSON.stringify({ regions: [{ cidrs: [{ cidr: '129.146.0.0/21' }] }] })],
    ];
    for (const [format, text] of samples) {
      const options = format === 'csv' ? { column: 'ExitIP' } : {};
      const plain = parseFeed(text, format, options);
      expect([format, plain.entries, plain.badLines]).toEqual([format, expect.any(Number), []]);
      expect(plain.entries).toBeGreaterThan(0);
      expect(parseFeed('\uFEFF' + text, format, options)).toEqual(plain);
      expect(parseFeed(Buffer.from('\uFEFF' + text), format, options)).toEqual(plain);
    }
  });

  it('reads the dates that feed headers state', () => {
    expect(commentDate(' Source File Date: Sat Aug 22 00:54:28 UTC 2026')).toBe('2026-08-22T00:54:28.000Z');
    expect(commentDate(' Last update: Sat, 22 Aug 2026 03:00:29 +0200')).toBe('2026-08-22T01:00:29.000Z');
    expect(commentDate(' last updated 1710089701 (Sun Mar 10 16:55:01 2024 GMT)')).toBe('2024-03-10T16:55:01.000Z');
    expect(commentDate(' Last modified: 2025-07-24 10:00:06.525037')).toBe('2025-07-24T10:00:06.000Z');
    expect(commentDate(' Maintainer: someone')).toBeNull();
  });
});

describe('list parser on bytes', () => {
  // Lines near the forms read from bytes: addresses, CIDRs, hit counts, with the mistakes feeds make.
  const part = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.constantFrom('256', '999', '00', '01', '010', '', 'a', '1234'));
  const address = fc.tuple(part, part, part, part, fc.constantFrom('.', '.', '.', ',')).map(([a, b, c, d, dot]) => [a, b, c, d].join(dot));
  const suffix = fc.oneof(
    fc.constant(''),
    fc.integer({ min: 0, max: 40 }).map((p) => `/${p}`),
    fc.constantFrom('/', '/08', '/032', '/0', '/a'),
    fc.integer({ min: 0, max: 2e9 }).map((h) => `\t${h}`),
    fc.constantFrom('\t', '\tx', ' 5', ' # comment', ' ; SBL1', ':8080', '-1.2.3.4', '\t0123'),
  );
  const line = fc.oneof(
    fc.tuple(fc.constantFrom('', '', ' ', '\t'), address, suffix, fc.constantFrom('', '', '\r', ' ')).map((p) => p.join('')),
    fc.constantFrom(
      '',
      '# Source File Date: Sat Aug 22 00:54:28 UTC 2026',
      '2001:db8::/32',
      'http://1.2.3.4:80',
      '[2001:db8::1]:443',
      '::ffff:1.2.3.4',
      '2001:DB8::/129',
      '2001:db8::/',
      'fe80::1%eth0',
      ':::',
      '2001:db8::\u0010',
    ),
    fc
      .tuple(
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 1, maxLength: 9 }),
        fc.constantFrom('', '::'),
        fc.constantFrom('', '/48', '/128', '/0', '/200'),
      )
      .map(([g, gap, p]) => g.map((x) => x.toString(16)).join(':') + gap + p),
    // IPv6 in every spelling (upper case, `::` anywhere, IPv4 tails), with prefixes right and wrong.
    fc
      .tuple(fc.ipV6(), fc.boolean(), fc.constantFrom('', '', '/64', '/0', '/128', '/129', '/048', '/0128', '/', '/6a', ':', '::', ':1'))
      .map(([a, upper, p]) => (upper ? a.toUpperCase() : a) + p),
    fc.constantFrom(
      '::',
      '::/0',
      '1::',
      '::1/128',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7:8:9',
      '12345::',
      '1:::2',
      ':1::2',
      '1::2::3',
      '1:2:3:4:5:6:7:8/129',
      '::ffff:102:304',
      '::ffff:102:304/120',
      '::FFFF:0:0/96',
      '0:0:0:0:0:ffff:a00:1/128',
    ),
  );

  it('reads every line as the text reader does', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.integer({ min: 0, max: 5 }),
        (ls, eol, last, minHits) => {
          const bytes = Buffer.from(ls.join(eol) + (last ? eol : ''));
          const fast = parseList(bytes, { minHits });
          const slow = textReader(bytes, minHits);
          const ranges = (r: typeof fast) => [
            Array.from({ length: r.v4.length }, (_, i) => [r.v4.start[i], r.v4.end[i], r.v4.value[i]]),
            Array.from(r.v6.value.subarray(0, r.v6.length)),
          ];
          expect(ranges(fast)).toEqual(ranges(slow));
          expect({ ...fast, v4: null, v6: null }).toEqual({ ...slow, v4: null, v6: null });
          expect(Array.from(fast.v6.words.subarray(0, fast.v6.length * 8))).toEqual(
            Array.from(slow.v6.words.subarray(0, slow.v6.length * 8)),
          );
        },
      ),
      { seed: seed(), numRuns: 1500 },
    );
  });
});

describe("Avastel's lists", () => {
  const day =
    '# Avastel 1 day proxy bots IPs\n# Last update: 2026-08-22 01:01:44.68\n\nip_address;autonomous_system\n1.2.3.4;Example ISP\n2001:db8::1;Six, Inc.\n';
  const blocklist =
    '# Avastel 5 day proxy bots IPs blocklist \n# Last update: 2026-08-22 01:01:44.682352\n# Number of proxy IP CIDRs: 3, equivalent to 768 IPs\n\n' +
    'ip_address;autonomous_system;confidence\n82.23.34.0/24;Trunk Networks LTD;1.0\n147.53.120.0/24;Blazing SEO, LLC;0.95\n64.16.142.0/23;Windstream;1\n10.9.9.0/24;No confidence;\n';

  it('read as csv with the ";" delimiter, their dates from the header', () => {
    const r = parseFeed(day, 'csv', { delimiter: ';', column: 'ip_address' });
    expect([r.entries, r.badLines, r.dataDate]).toEqual([2, [], '2026-08-22T01:01:44.000Z']);
    expect(cidrs(day, 'csv', { delimiter: ';', column: 'ip_address' })).toEqual(['1.2.3.4/32', '2001:db8::1/128']);
  });

  it('keep the entries at or above minConfidence, count the others as skipped, and name a line with no confidence', () => {
    const at = (minConfidence: number) =>
      parseFeed(blocklist, 'csv', { delimiter: ';', column: 'ip_address', confidence: 'confidence', minConfidence });
    expect(cidrs(blocklist, 'csv', { delimiter: ';', column: 'ip_address', confidence: 'confidence', minConfidence: 1 })).toEqual([
      '82.23.34.0/24',
      '64.16.142.0/23',
    ]);
    expect([at(1).entries, at(1).skipped, at(0).entries, at(0).skipped]).toEqual([2, 1, 3, 0]);
    expect(at(0).badLines).toEqual([{ line: 9, text: '10.9.9.0/24;No confidence;', reason: 'no confidence (a number) in column 2' }]);
    expect(
      parseFeed(blocklist, 'csv', { delimiter: ';', column: 'ip_address', confidence: 'score', minConfidence: 1 }).badLines[0].reason,
    ).toBe('no column named "score" in the header');
  });
});

describe('CSV parser', () => {
  const field = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 33 })).map(([a, p]) => `${a}/${p}`),
    fc.constantFrom(
      '',
      ' ',
      'US',
      'New York',
      'ip',
      'IPRange',
      'x',
      '1.2.3',
      ' 10.0.0.1 ',
      '10.0.0.0-10.0.0.9',
      '"q,uoted"',
      '"a ""b"""',
      '"open',
      'a"b',
      '\t',
      '#x',
    ),
  );
  const line = fc.oneof(
    fc.array(field, { minLength: 1, maxLength: 5 }).map((f) => f.join(',')),
    fc.array(field, { minLength: 1, maxLength: 3 }).map((f) => f.join(',') + ','),
    fc.constantFrom('', '   ', '# comment 2025-07-24', ' # indented comment', 'ip,country', 'IPRange,Country,City'),
  );

  it('reads lines without quotes by their commas as by splitting them', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 25 }),
        fc.constantFrom('\n', '\r\n'),
        fc.constantFrom<{ column?: number | string; header?: boolean }>(
          {},
          { column: 1 },
          { column: 2 },
          { column: 'ip' },
          { column: 'IPRange' },
          { header: false },
          { header: true, column: 0 },
        ),
        fc.boolean(),
        (ls, eol, options, ranges) => {
          const text = ls.join(eol) + eol;
          const fast = parseCsv(text, options, ranges);
          const slow = parseCsv(text, options, ranges, false);
          const ranges4 = (r: typeof fast) => Array.from({ length: r.v4.length }, (_, i) => [r.v4.start[i], r.v4.end[i], r.v4.value[i]]);
          expect(ranges4(fast)).toEqual(ranges4(slow));
          expect(Array.from(fast.v6.words.subarray(0, fast.v6.length * 8))).toEqual(
            Array.from(slow.v6.words.subarray(0, slow.v6.length * 8)),
          );
          expect({ ...fast, v4: null, v6: null }).toEqual({ ...slow, v4: null, v6: null });
        },
      ),
      { seed: seed(), numRuns: 1500 },
    );
  });

  it('reads lines split by another delimiter as the same lines split by commas', () => {
    const semi = fc.oneof(
      fc.array(field, { minLength: 1, maxLength: 5 }),
      fc.constantFrom([''], ['# comment'], ['ip', 'country'], ['IPRange', 'Country', 'City']),
    );
    fc.assert(
      fc.property(
        // Fields without either delimiter, so that the two texts hold the same fields.
        fc.array(
          semi.map((f) => f.map((x) => x.replace(/[,;]/g, ' '))),
          { maxLength: 25 },
        ),
        fc.constantFrom<{ column?: number | string }>({}, { column: 1 }, { column: 'ip' }),
        fc.boolean(),
        (rows, options, ranges) => {
          const with_ = (sep: string) => rows.map((f) => f.join(sep)).join('\n') + '\n';
          const commas = parseCsv(with_(','), options, ranges);
          const semis = parseCsv(with_(';'), { ...options, delimiter: ';' }, ranges);
          const ranges4 = (r: typeof commas) => Array.from({ length: r.v4.length }, (_, i) => [r.v4.start[i], r.v4.end[i]]);
          expect(ranges4(semis)).toEqual(ranges4(commas));
          expect([semis.entries, semis.badLines.map((b) => b.line)]).toEqual([commas.entries, commas.badLines.map((b) => b.line)]);
        },
      ),
      { seed: seed(), numRuns: 500 },
    );
  });
});
