import { describe, expect, it } from 'vitest';
import { DEFAULT_CHECKS, defaultThreatConfig, NO_SOURCES, parseThreatConfig, widestOf } from '../../../../src/compile/feeds/config.js';
import DEFAULT_FEEDS from '../../../../src/compile/feeds/default-feeds.json';

const byName = (config: { feeds: readonly { name: string }[] }, name: string) => config.feeds.find((f) => f.name === name);

describe('feed configuration extending the default', () => {
  it('a feed named like a default feed changes only what it states, in its place', () => {
    const config = parseThreatConfig({ extends: 'default', feeds: [{ name: 'tor_exits', source: 'lists/tor.txt' }] }, '/conf');
    const base = defaultThreatConfig();
    expect(config.feeds.map((f) => f.name)).toEqual(base.feeds.map((f) => f.name));
    expect(byName(config, 'tor_exits')).toEqual({ ...byName(base, 'tor_exits'), source: '/conf/lists/tor.txt' });
  });

  it('options change member by member; other members replace the default whole', () => {
    const config = parseThreatConfig(
      { extends: 'default', feeds: [{ name: 'ipsum', options: { minHits: 5 }, categories: ['abuser'] }] },
      '/conf',
    );
    const ipsum = DEFAULT_FEEDS.feeds.find((f) => f.name === 'ipsum') as { options: object; source: string };
    expect(byName(config, 'ipsum')).toMatchObject({
      source: ipsum.source,
      categories: ['abuser'],
      options: { ...ipsum.options, minHits: 5 },
    });
  });

  it('every default feed stated again unchanged gives the default configuration', () => {
    const again = parseThreatConfig({ extends: 'default', feeds: DEFAULT_FEEDS.feeds.map((f) => ({ name: f.name })) }, '/conf');
    expect(again).toEqual(defaultThreatConfig());
  });

  it('a new feed is added after the defaults and must state everything', () => {
    const feed = { name: 'mine', source: '/lists/mine.txt', format: 'list', categories: ['attacker'] };
    const config = parseThreatConfig({ extends: 'default', disable: ['tor_exits'], feeds: [feed] }, '/conf');
    expect(config.feeds.at(-1)).toMatchObject(feed);
    expect(byName(config, 'tor_exits')).toBeUndefined();
    expect(() => parseThreatConfig({ extends: 'default', feeds: [{ name: 'mine', source: 'x.txt' }] }, '/conf')).toThrow(
      /feeds\[0\]: "format"/,
    );
    // Without "extends", a default feed's name is just a name.
    expect(() => parseThreatConfig({ feeds: [{ name: 'tor_exits', source: 'x.txt' }] }, '/conf')).toThrow(/feeds\[0\]: "format"/);
  });

  it("the catalogue's feeds load only where named, extending the default or not; their options change member by member", () => {
    const names = DEFAULT_FEEDS.catalogue.map((f) => f.name);
    expect(names).toEqual(['avastel_proxy_1d', 'avastel_proxy_blocklist_5d', 'avastel_proxy_blocklist_8d']);
    expect(defaultThreatConfig().feeds.some((f) => names.includes(f.name))).toBe(false);
    const on = parseThreatConfig(
      { extends: 'default', feeds: [{ name: 'avastel_proxy_blocklist_8d', options: { minConfidence: 1 } }] },
      '/conf',
    );
    expect(on.feeds.length).toBe(defaultThreatConfig().feeds.length + 1);
    expect(on.feeds.at(-1)).toMatchObject({
      name: 'avastel_proxy_blocklist_8d',
      format: 'csv',
      categories: ['proxy'],
      blocklist: { type: 'proxy' },
      options: { delimiter: ';', column: 'ip_address', confidence: 'confidence', minConfidence: 1 },
    });
    expect(parseThreatConfig({ feeds: [{ name: 'avastel_proxy_1d' }] }, '/conf').feeds.map((f) => f.source)).toEqual([
      'https://raw.githubusercontent.com/antoinevastel/avastel-bot-ips-lists/master/avastel-proxy-bot-ips-1day.txt',
    ]);
  });

  it.each([
    [{ delimiter: ';;' }, /"options.delimiter" must be one character/],
    [{ delimiter: '"' }, /"options.delimiter" must be one character/],
    [{ delimiter: '\n' }, /"options.delimiter" must be one character/],
    [{ confidence: -1, minConfidence: 1 }, /"options.confidence" must be a name or an index/],
    [{ confidence: 'c', minConfidence: '1' }, /"options.minConfidence" must be a number/],
    [{ confidence: 'c' }, /"options.confidence" \(a column\) and "options.minConfidence" go together/],
    [{ minConfidence: 0.5 }, /go together/],
  ])('refuse the csv options %j', (options, message) => {
    expect(() =>
      parseThreatConfig({ feeds: [{ name: 'x', source: 'x.txt', format: 'csv', categories: ['proxy'], options }] }, '/conf'),
    ).toThrow(message);
  });

  it('refuse a confidence for a feed that is not csv', () => {
    expect(() =>
      parseThreatConfig(
        { feeds: [{ name: 'x', source: 'x.txt', format: 'list', categories: ['proxy'], options: { confidence: 2, minConfidence: 1 } }] },
        '/conf',
      ),
    ).toThrow(/for a "csv" feed/);
  });

  it('a feed name is a file name under feeds/: "..", "." and hidden names are refused', () => {
    for (const name of ['..', '.', '.hidden', 'a/b', '']) {
      expect(() => parseThreatConfig({ feeds: [{ name, source: 'x.txt', format: 'list', categories: ['tor'] }] }, '/conf'), name).toThrow(
        /feeds\[0\]: "name" must be/,
      );
    }
    expect(
      parseThreatConfig({ feeds: [{ name: 'tor.v2-list_1', source: 'x.txt', format: 'list', categories: ['tor'] }] }, '/conf').feeds[0]
        .name,
    ).toBe('tor.v2-list_1');
  });

  it('a bad value stated over a default feed is refused with its place', () => {
    expect(() => parseThreatConfig({ extends: 'default', feeds: [{ name: 'tor_exits', categories: ['nope'] }] }, '/conf')).toThrow(
      /feeds\[0\]: "categories"/,
    );
  });
});

describe('the default configuration', () => {
  it('names every blocklist for people, as the service does (not the feed id), with its site', () => {
    const listing = defaultThreatConfig().feeds.filter((f) => f.blocklist !== undefined);
    expect(listing.length).toBeGreaterThan(10);
    for (const f of listing) {
      expect(f.blocklist!.name, f.name).not.toBe(f.name);
      expect(f.blocklist!.name, f.name).toMatch(/^[\w. ()-]{2,40}$/);
      expect(f.blocklist!.site, f.name).toMatch(/^https:\/\//);
    }
    expect(new Set(listing.map((f) => f.blocklist!.name)).size).toBe(listing.length);
  });
});

describe('the databases a build compiles the feeds with', () => {
  it('default to the default data; paths are read from the folder of the configuration, URLs kept', () => {
    expect(parseThreatConfig({ feeds: [] }, '/conf').sources).toEqual(NO_SOURCES);
    const sources = { geo: ['city.mmdb', '/db/country.mmdb'], asn: ['asn.csv', 'https://example.com/asn.csv.gz'], networks: ['net.json'] };
    expect(parseThreatConfig({ feeds: [], sources }, '/conf').sources).toEqual({
      geo: ['/conf/city.mmdb', '/db/country.mmdb'],
      asn: ['/conf/asn.csv', 'https://example.com/asn.csv.gz'],
      anonymous: [],
      networks: ['/conf/net.json'],
      checks: DEFAULT_CHECKS,
      minNetworks: 1000,
      maxCsvBytes: 128 << 20,
    });
    const own = parseThreatConfig(
      { feeds: [], sources: { geo: ['g.mmdb'], checks: [{ ip: '1.0.0.1', country: 'AU' }], minNetworks: 5, maxCsvBytes: 1e9 } },
      '/conf',
    ).sources;
    expect([own.checks, own.minNetworks, own.maxCsvBytes]).toEqual([[{ ip: '1.0.0.1', country: 'AU' }], 5, 1e9]);
    expect(own.userAgent).toBeUndefined();
    expect(parseThreatConfig({ feeds: [], sources: { userAgent: 'acme-ipdata/1 ops@acme.example' } }, '/conf').sources.userAgent).toBe(
      'acme-ipdata/1 ops@acme.example',
    );
  });

  it('of a configuration that extends the default one are the default URLs, unless it names its own', () => {
    const inherited = parseThreatConfig({ extends: 'default', feeds: [] }, '/conf').sources;
    expect(inherited).toEqual(defaultThreatConfig().sources);
    expect(inherited.geo?.every((u) => u.startsWith('https://github.com/sapics/ip-location-db/releases/'))).toBe(true);
    expect(parseThreatConfig({ extends: 'default', feeds: [], sources: { geo: ['g.mmdb'] } }, '/conf').sources.geo).toEqual([
      '/conf/g.mmdb',
    ]);
  });

  it.each([
    [[], /"sources" must be an object/],
    [{ geo: 'city.mmdb' }, /"sources.geo" must be a list of URLs or file paths/],
    [{ asn: [] }, /"sources.asn" must be a list of URLs or file paths/],
    [{ networks: 'https://www.peeringdb.com/api/net' }, /"sources.networks" must be a list of URLs or file paths/],
    [{ isp: ['isp.mmdb'] }, /unknown member "isp"/],
    [{ checks: [{ country: 'US' }] }, /"sources.checks" must be a list of \{ "ip", "country", "asn" \}/],
    [{ checks: [{ ip: '8.8.8.8', asn: 'AS15169' }] }, /"sources.checks"/],
    [{ minNetworks: -1 }, /"sources.minNetworks" must be a whole number/],
    [{ maxCsvBytes: '1GB' }, /"sources.maxCsvBytes" must be a whole number of bytes/],
    [{ userAgent: '' }, /"sources.userAgent" must be a User-Agent header's text/],
    [{ userAgent: 'me\r\nX-Evil: 1' }, /"sources.userAgent" must be a User-Agent header's text/],
    [{ userAgent: 'Zoë/1' }, /"sources.userAgent" must be a User-Agent header's text/],
    [{ userAgent: 7 }, /"sources.userAgent" must be a User-Agent header's text/],
  ])('refuse %j', (sources, message) => {
    expect(() => parseThreatConfig({ feeds: [], sources }, '/conf')).toThrow(message);
  });
});

describe('feeds that aggregate others', () => {
  it('name them in "includes"; the default configuration names only feeds it loads', () => {
    const config = parseThreatConfig(
      { feeds: [{ name: 'agg', source: 'a.txt', format: 'list', categories: ['attacker'], includes: ['part'] }] },
      '/conf',
    );
    expect(config.feeds[0].includes).toEqual(['part']);
    expect(() =>
      parseThreatConfig({ feeds: [{ name: 'agg', source: 'a.txt', format: 'list', categories: ['attacker'], includes: 'part' }] }, '/conf'),
    ).toThrow(/"includes" must be a list of feed names/);
    const defaults = defaultThreatConfig();
    const names = new Set(defaults.feeds.map((f) => f.name));
    const aggregators = defaults.feeds.filter((f) => f.includes !== undefined);
    expect(aggregators.map((f) => f.name)).toEqual([
      'firehol_level1',
      'firehol_level2',
      'firehol_level3',
      'firehol_level4',
      'firehol_abusers_30d',
    ]);
    for (const f of aggregators) for (const n of f.includes ?? []) expect(names.has(n), `${f.name} includes ${n}`).toBe(true);
  });

  it('"widest" takes a prefix length per family, 0 for any entry; a feed without it takes its categories\' default', () => {
    const feed = (widest: unknown) => ({ feeds: [{ name: 'f', source: 'x.txt', format: 'list', categories: ['bogon'], widest }] });
    const [f] = parseThreatConfig(feed({ ipv4: 0 }), '/conf').feeds;
    expect(widestOf(f)).toEqual({ ipv4: 0, ipv6: 4 });
    expect(
      widestOf(parseThreatConfig({ feeds: [{ name: 'g', source: 'x.txt', format: 'list', categories: ['tor'] }] }, '/conf').feeds[0]),
    ).toEqual({ ipv4: 8, ipv6: 16 });
    for (const bad of [{ ipv4: 33 }, { ipv6: -1 }, { ipv6: 1.5 }, { ipv5: 8 }, 'wide', null])
      expect(() => parseThreatConfig(feed(bad), '/conf'), JSON.stringify(bad)).toThrow(/feeds\[0\]: "widest/);
  });
});
