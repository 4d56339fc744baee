import { describe, expect, it } from 'vitest';
import { commentDate, parseFeed } from '../../../src/threat/parse.js';
import { formatCidr } from '../../../src/ip/format.js';

const cidrs = (text: string, format: Parameters<typeof parseFeed>[1], options = {}) =>
  parseFeed(text, format, options).networks.map((n) => formatCidr(n.version, n.words, n.prefix));

describe('feed parsers', () => {
  it('list: addresses, CIDRs (host bits cleared), ranges, comments of both kinds', () => {
    const text = ['# FireHOL header', '; Spamhaus header', '1.2.3.4', '10.0.0.77/8', '2001:db8::/32', '5.6.7.0 - 5.6.7.255', '8.8.8.0/24 ; SBL123', '', '   9.9.9.9   '].join('\n');
    expect(cidrs(text, 'list')).toEqual(['1.2.3.4/32', '10.0.0.0/8', '2001:db8::/32', '5.6.7.0/24', '8.8.8.0/24', '9.9.9.9/32']);
  });

  it('list: proxies as host:port, scheme://host:port, user@host, [v6]:port', () => {
    const text = 'socks5://1.1.1.1:1080\nhttp://user:pw@2.2.2.2:8080\n3.3.3.3:3128\n[2001:db8::1]:443\n2001:db8::2';
    expect(cidrs(text, 'list')).toEqual(['1.1.1.1/32', '2.2.2.2/32', '3.3.3.3/32', '2001:db8::1/128', '2001:db8::2/128']);
  });

  it('list: ipsum hit counts, with a threshold', () => {
    const r = parseFeed('# IP\tnumber\n1.1.1.1\t10\n2.2.2.2\t2\n3.3.3.3\t3\n', 'list', { minHits: 3 });
    expect(r.networks.map((n) => [n.words[3] >>> 24, n.hits])).toEqual([
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
    expect(r.networks.length).toBe(2);
    expect(r.badLines.map((b) => b.line)).toEqual([3]);
    expect(cidrs('IPRange,Country\n10.0.0.0/25,US\n', 'csv', { column: 'IPRange' })).toEqual(['10.0.0.0/25']);
    // A geofeed: no header, '#' comments.
    expect(cidrs('# geofeed\n2600:3c00::/32,US,US-TX,Richardson,\n5.101.96.0/21,NL,NL-NH,Amsterdam,1098 XH\n', 'csv')).toEqual(['2600:3c00::/32', '5.101.96.0/21']);
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

  it('cloud JSON files', () => {
    expect(cidrs(JSON.stringify({ createDate: '2025-07-24-21-43-06', prefixes: [{ ip_prefix: '3.5.140.0/22' }], ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24' }] }), 'aws-json')).toEqual(['3.5.140.0/22', '2600:1f00::/24']);
    expect(parseFeed(JSON.stringify({ createDate: '2025-07-24-21-43-06', prefixes: [] }), 'aws-json').dataDate).toBe('2025-07-24T21:43:06.000Z');
    expect(cidrs(JSON.stringify({ prefixes: [{ ipv4Prefix: '34.1.208.0/20' }, { ipv6Prefix: '2600:1900::/28' }] }), 'gcp-json')).toEqual(['34.1.208.0/20', '2600:1900::/28']);
    expect(cidrs(JSON.stringify({ values: [{ properties: { addressPrefixes: ['13.66.60.119/32', '2603:1030::/48'] } }] }), 'azure-json')).toEqual(['13.66.60.119/32', '2603:1030::/48']);
    expect(cidrs(JSON.stringify({ regions: [{ cidrs: [{ cidr: '129.146.0.0/21' }] }] }), 'oracle-json')).toEqual(['129.146.0.0/21']);
    const bad = parseFeed(JSON.stringify({ prefixes: [{ ip_prefix: 'x' }, { ip_prefix: 5 }] }), 'aws-json');
    expect(bad.badLines.map((b) => b.text)).toEqual(['prefixes[0]: x', 'prefixes[1]: 5']);
    expect(parseFeed('{', 'gcp-json').badLines[0].reason).toMatch(/invalid JSON/);
  });

  it('reads the dates that feed headers state', () => {
    expect(commentDate(' Source File Date: Sat Aug 22 00:54:28 UTC 2026')).toBe('2026-08-22T00:54:28.000Z');
    expect(commentDate(' Last update: Sat, 22 Aug 2026 03:00:29 +0200')).toBe('2026-08-22T01:00:29.000Z');
    expect(commentDate(' last updated 1710089701 (Sun Mar 10 16:55:01 2024 GMT)')).toBe('2024-03-10T16:55:01.000Z');
    expect(commentDate(' Last modified: 2025-07-24 10:00:06.525037')).toBe('2025-07-24T10:00:06.000Z');
    expect(commentDate(' Maintainer: someone')).toBeNull();
  });
});
