import { spawnSync } from 'node:child_process';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equal, matches, same } from '../helpers/check.js';
import {
  ClosedError,
  FIELD_NAMES,
  InvalidBulkError,
  InvalidFieldError,
  InvalidIpError,
  InvalidOptionsError,
  PrivateIpError,
  ReservedIpError,
  isIprecordError,
  open,
  openSync,
  type Engine,
  type IpRecord,
  type LookupOptions,
} from '../../src/index.js';
import { recordBytes } from '../../src/engine/inside.js';
import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { SMALL, SMALL_SOURCES } from '../helpers/maxmind.js';
import { builtEntry, seed, xorshift32 } from '../helpers/env.js';
import { ADDRESS_FORMS } from '../helpers/recipes.js';
import { formatIp } from '../../src/ip/format.js';

let engine: Engine;
beforeAll(async () => {
  engine = await open();
});
afterAll(() => engine.close());

const KEYS = [
  'ip',
  'is_eu',
  'city',
  'region',
  'region_code',
  'region_type',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'latitude',
  'longitude',
  'postal',
  'calling_code',
  'flag',
  'emoji_flag',
  'emoji_unicode',
  'asn',
  'languages',
  'currency',
  'time_zone',
  'threat',
  'count',
];
const THREAT_KEYS = [
  'is_tor',
  'is_vpn',
  'is_icloud_relay',
  'is_proxy',
  'is_datacenter',
  'is_anonymous',
  'is_known_attacker',
  'is_known_abuser',
  'is_threat',
  'is_bogon',
  'blocklists',
  'scores',
];

const strOrNull = (v: unknown) => v === null || typeof v === 'string';
const numOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

/** Checks a record against CONTRACT.md: keys, order, types, and the derived flags. */
function checkRecord(r: IpRecord): void {
  equal(Object.keys(r), r.carrier ? [...KEYS.slice(0, 18), 'carrier', ...KEYS.slice(18)] : KEYS);
  for (const k of [
    'city',
    'region',
    'region_code',
    'region_type',
    'country_name',
    'postal',
    'calling_code',
    'flag',
    'emoji_flag',
    'emoji_unicode',
  ] as const) {
    same(strOrNull(r[k]), true, k);
  }
  same(numOrNull(r.latitude) && numOrNull(r.longitude), true);
  same(r.is_eu === null || typeof r.is_eu === 'boolean', true);
  if (r.country_code !== null) {
    matches(r.country_code, /^[A-Z]{2}$/);
    matches(r.continent_code, /^(AF|AN|AS|EU|NA|OC|SA)$/);
    same(r.flag, `https://flagcdn.com/w320/${r.country_code.toLowerCase()}.png`);
    matches(r.emoji_unicode, /^U\+1F1[EF][0-9A-F] U\+1F1[EF][0-9A-F]$/);
    if (r.calling_code !== null) matches(r.calling_code, /^\d+$/);
  }
  if (r.asn !== null) {
    equal(Object.keys(r.asn), ['asn', 'name', 'domain', 'route', 'type']);
    matches(r.asn.asn, /^AS\d+$/);
    matches(r.asn.route, /\/\d+$/);
    const types = [null, 'isp', 'hosting', 'business', 'education', 'government'];
    if (!types.includes(r.asn.type)) expect(types).toContain(r.asn.type);
  }
  if (r.languages !== null) for (const l of r.languages) equal(Object.keys(l), ['name', 'native', 'code']);
  if (r.currency !== null) equal(Object.keys(r.currency), ['name', 'code', 'symbol', 'native', 'plural']);
  if (r.time_zone !== null) {
    equal(Object.keys(r.time_zone), ['name', 'abbr', 'offset', 'is_dst', 'current_time']);
    matches(r.time_zone.offset, /^[+-]\d{4}$/);
    matches(r.time_zone.current_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d$/);
    same(r.time_zone.current_time.slice(-6).replace(':', ''), r.time_zone.offset);
  }
  const t = r.threat;
  equal(Object.keys(t), THREAT_KEYS);
  same(t.is_anonymous, t.is_tor || t.is_proxy);
  same(t.is_threat, t.is_known_abuser || t.is_known_attacker);
  equal(Object.keys(t.scores ?? {}), ['vpn_score', 'proxy_score', 'threat_score', 'trust_score']);
  for (const v of Object.values(t.scores ?? {})) same(Number.isInteger(v) && v >= 0 && v <= 100, true);
  matches(r.count, /^\d+$/);
}

/**
 * Run again with the files read into memory (vitest.config.ts): what does not depend on how the files are held (the
 * warnings, the errors, the operations over one record) runs in the mapped run only.
 */
const READ = process.env.IPRECORD_MEMORY === 'read';

describe('records', () => {
  it('have the contract keys in order, and types, for random addresses', () => {
    let answered = 0;
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        try {
          checkRecord(engine.lookup(ip));
          answered++;
        } catch (e) {
          expect(isIprecordError(e) && ['PRIVATE_IP', 'RESERVED_IP'].includes(e.code)).toBe(true);
        }
      }),
      { seed: seed(), numRuns: 2000 },
    );
    // Most random addresses are public (about 85 % answer a record).
    expect(answered).toBeGreaterThan(1200);
  });

  it('answer known networks from the embedded data', () => {
    const r = engine.lookup('8.8.8.8');
    expect(r).toMatchObject({
      ip: '8.8.8.8',
      country_code: 'US',
      country_name: 'United States',
      is_eu: false,
      continent_code: 'NA',
      calling_code: '1',
      emoji_flag: '🇺🇸',
      emoji_unicode: 'U+1F1FA U+1F1F8',
    });
    expect(r.asn).toMatchObject({ asn: 'AS15169', name: 'Google LLC', route: '8.8.8.0/24', type: 'hosting', domain: null });
    expect(r.threat.is_datacenter).toBe(true);
    expect(r.currency).toEqual({ name: 'US Dollar', code: 'USD', symbol: '$', native: '$', plural: 'US dollars' });
    expect(r.languages).toEqual([{ name: 'English', native: 'English', code: 'en' }]);
    expect(engine.lookup('::ffff:8.8.8.8').ip).toBe('8.8.8.8');
    expect(engine.lookup('2001:4860:4860:0:0:0:0:8888').ip).toBe('2001:4860:4860::8888');
  });

  it('mark unallocated IPv6 space as bogon', () => {
    expect(engine.lookup('4000::1').threat.is_bogon).toBe(true);
    expect(engine.lookup('8.8.8.8').threat.is_bogon).toBe(false);
  });
});

/** The text of a record with the values that change between calls (the clock, the count) blanked. */
/** The record as `writeJson` writes it, at an offset of a buffer, read back as text. */
function written(e: Engine, ip: string, options?: LookupOptions): string {
  const target = Buffer.alloc(8192);
  const n = e.writeJson(ip, target, 100, options);
  expect(n).toBeLessThan(8092);
  return target.toString('utf8', 100, 100 + n);
}

const still = (json: string) => json.replace(/"current_time":"[^"]*"/g, '"current_time":""').replace(/"count":"\d+"/g, '"count":""');

describe('lookupJson', () => {
  /** The JSON text from both paths, or the same error from both. */
  function same(e: Engine, ip: string, fields?: string): void {
    let direct: string;
    try {
      direct = JSON.stringify(e.lookup(ip, fields === undefined ? undefined : { fields }));
    } catch (err) {
      expect(() => e.lookupJson(ip, fields === undefined ? undefined : { fields })).toThrow((err as Error).message);
      // Without an error made: the same message.
      const failure = { message: '' };
      expect(recordBytes(e, ip, undefined, failure)).toBeNull();
      expect(() => e.writeJson(ip, Buffer.alloc(4096))).toThrow((err as Error).message);
      expect(failure.message).toBe((err as Error).message);
      return;
    }
    expect(still(e.lookupJson(ip, fields === undefined ? undefined : { fields }))).toBe(still(direct));
    if (fields === undefined) {
      // As bytes (writeJson) and byte text (POST /bulk): the UTF-8 bytes of the same text.
      expect(still(written(e, ip))).toBe(still(direct));
      expect(still(Buffer.from(recordBytes(e, ip, undefined, { message: '' }) as string, 'latin1').toString('utf8'))).toBe(still(direct));
      // A count given by the caller (the server's plans), not ASCII.
      const count = { count: 'ünïcode "count"' };
      expect(still(written(e, ip, count))).toBe(still(JSON.stringify(e.lookup(ip, count))));
    }
  }

  it('is the text of JSON.stringify(lookup()), key for key, for random addresses (twice: cached pieces too)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        same(engine, ip);
        same(engine, ip);
      }),
      { seed: seed(), numRuns: 1500 },
    );
    same(engine, '8.8.8.8', 'ip,city,threat');
    same(engine, 'nope');
    same(engine, '10.0.0.1');
    same(engine, '224.0.0.1');
    same(engine, 'fe80::1');
  });

  it('writeJson: the UTF-8 of lookupJson() at any offset of any buffer, nothing written past its end, the length answered whether it fits or not', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.nat(64),
        fc.nat(2000),
        fc.boolean(),
        fc.constantFrom(undefined, 'ip,city,asn'),
        (ip, offset, room, plain, fields) => {
          let text: string;
          try {
            text = engine.lookupJson(ip, { count: '5', fields });
          } catch (err) {
            expect(() => engine.writeJson(ip, Buffer.alloc(4096), 0, { count: '5', fields })).toThrow((err as Error).message);
            return;
          }
          const want = Buffer.from(still(text));
          // The target is a window of a larger buffer: the bytes on either side of it are a sentinel that must stay.
          const backing = Buffer.alloc(offset + room + 64, 0xee);
          const target = plain
            ? new Uint8Array(backing.buffer, backing.byteOffset + 16, offset + room)
            : backing.subarray(16, 16 + offset + room);
          const n = engine.writeJson(ip, target, offset, { count: '5', fields });
          expect(n).toBe(Buffer.byteLength(text));
          expect(backing.subarray(0, 16 + offset).every((b) => b === 0xee)).toBe(true);
          expect(backing.subarray(16 + offset + room).every((b) => b === 0xee)).toBe(true);
          if (n <= room) expect(still(backing.toString('utf8', 16 + offset, 16 + offset + n))).toBe(want.toString('utf8'));
        },
      ),
      { seed: seed(), numRuns: 1000 },
    );
    expect(() => engine.writeJson('8.8.8.8', Buffer.alloc(10), 11)).toThrow(RangeError);
    expect(() => engine.writeJson('8.8.8.8', Buffer.alloc(10), 1.5)).toThrow(RangeError);
    expect(() => engine.writeJson('8.8.8.8', 'text' as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('tryWriteJson: the UTF-8 of JSON.stringify(tryLookup()), negative for an error, at any offset, nothing past the end', () => {
    const address = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.constantFrom(...ADDRESS_FORMS, '10.0.0.1', '::1', 'fe80::1', '224.0.0.1', '', 'nope', 'ü'.repeat(300)),
    );
    fc.assert(
      fc.property(address, fc.nat(64), fc.nat(2000), fc.constantFrom(undefined, 'ip,city,asn'), (ip, offset, room, fields) => {
        const answer = engine.tryLookup(ip, { count: '5', fields });
        const text = JSON.stringify(answer);
        const backing = Buffer.alloc(offset + room + 64, 0xee);
        const target = backing.subarray(16, 16 + offset + room);
        const n = engine.tryWriteJson(ip, target, offset, { count: '5', fields });
        expect(n < 0, ip).toBe('code' in answer);
        expect(Math.abs(n)).toBe(Buffer.byteLength(text));
        expect(backing.subarray(0, 16 + offset).every((b) => b === 0xee)).toBe(true);
        expect(backing.subarray(16 + offset + room).every((b) => b === 0xee)).toBe(true);
        if (Math.abs(n) <= room) expect(still(backing.toString('utf8', 16 + offset, 16 + offset + Math.abs(n)))).toBe(still(text));
      }),
      { seed: seed(), numRuns: 1000 },
    );
    expect(() => engine.tryWriteJson('8.8.8.8', Buffer.alloc(10), 11)).toThrow(RangeError);
    expect(() => engine.tryWriteJson('10.0.0.1', 'text' as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => engine.tryWriteJson('10.0.0.1', Buffer.alloc(10), 0, { fields: 'nope' })).toThrow(/nope/);
  });

  it('answers ::1300:1 (IPv4-compatible) as 19.0.0.1, route included, whichever was looked up first', () => {
    const fresh = openSync();
    const warmed = openSync();
    try {
      const v6 = fresh.lookup('::1300:1');
      expect(v6.ip).toBe('19.0.0.1');
      expect(v6.asn?.route).toMatch(/^19\.0\.0\.0\/\d+$/);
      expect(warmed.lookup('19.0.0.1').asn?.route).toBe(v6.asn?.route);
      expect(warmed.lookup('::1300:1').asn?.route).toBe(v6.asn?.route);
      same(warmed, '::1300:1');
      same(warmed, '19.0.0.1');
    } finally {
      fresh.close();
      warmed.close();
    }
  });

  it('places carrier after asn for mobile networks (ISP data), and null parts where nothing is known', () => {
    const isp = openSync({ geo: SMALL.geo, asn: join(FIXTURES_DIR, 'test-data', 'GeoIP2-ISP-Fixture.mmdb') });
    try {
      const withCarrier = ['149.101.100.1', '31.13.64.7'].filter((ip) => isp.lookup(ip).carrier !== undefined);
      expect(withCarrier.length).toBeGreaterThan(0);
      for (const ip of [...withCarrier, '1.0.0.1', '8.8.8.8', '2001:4860::1']) same(isp, ip);
    } finally {
      isp.close();
    }
  });
});

describe('memory', () => {
  it('maps the files by default when the addon is built (CI requires it), reads them with memory: read, same answers', () => {
    const info = engine.info().memory;
    const wanted = process.env.IPRECORD_MEMORY === 'read' ? 'read' : 'mmap';
    if (wanted === 'read' || process.env.IPRECORD_REQUIRE_MMAP === '1') expect(info).toEqual({ mode: wanted });
    else if (info.mode === 'read') expect(info.reason).toMatch(/memory-map addon is not available: /);
    const other = openSync({ memory: wanted === 'read' ? 'mmap' : 'read' });
    try {
      for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '81.2.69.142'])
        expect(still(other.lookupJson(ip))).toBe(still(engine.lookupJson(ip)));
    } finally {
      other.close();
    }
    expect(() => openSync({ memory: 'swap' as never })).toThrow(/"memory" must be "mmap" or "read"/);
  });
});

describe('reload', () => {
  it('swaps mapped databases replaced by rename while lookups run: no failed lookup, no crash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-swap-'));
    try {
      const geo = join(dir, 'geo.mmdb');
      const sources = [
        join(FIXTURES_DIR, 'test-data', 'GeoIP2-City-Fixture.mmdb'),
        join(FIXTURES_DIR, 'test-data', 'DBIP-City-Lite-Fixture.mmdb'),
      ];
      copyFileSync(sources[0], geo);
      const e = await open({ geo, asn: SMALL.asn });
      const probes = ['81.2.69.142', '2.125.160.216', '8.8.8.8', '1.0.0.1', '2001:480::1'];
      const answer = (ip: string) => {
        try {
          // As bytes too: what the addresses resolved to is kept (the memo of the byte writers).
          written(e, ip);
          return e.lookupJson(ip);
        } catch (err) {
          if (isIprecordError(err) && (err.code === 'PRIVATE_IP' || err.code === 'RESERVED_IP')) return err.code;
          throw err;
        }
      };
      let lookups = 0;
      // Each way twice (each swap compiles a dataset in a child process: about a second).
      const swaps = 4;
      for (let swap = 1; swap <= swaps; swap++) {
        // A new file renamed over the old one (the old mapping stays valid for lookups in flight).
        const next = join(dir, `geo.${swap}.tmp`);
        copyFileSync(sources[swap % 2], next);
        renameSync(next, geo);
        const reloading = e.reload();
        for (let i = 0; i < 200; i++) {
          for (const ip of probes) {
            answer(ip);
            lookups++;
          }
        }
        await reloading;
        for (const ip of probes) {
          answer(ip);
          lookups++;
        }
        // Records written as bytes answer from the new data, as lookup() does.
        for (const ip of probes) {
          const text = answer(ip);
          if (text !== 'PRIVATE_IP' && text !== 'RESERVED_IP') expect(still(written(e, ip))).toBe(still(text));
        }
        expect(e.info().databases[0].schema).toBe(swap % 2 === 0 ? 'maxmind-city' : 'flat');
      }
      expect(lookups).toBe(swaps * (200 + 1) * probes.length);
      e.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads again only what changed (same inode, size and time: the dataset kept)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-reload-'));
    try {
      const geo = join(dir, 'geo.mmdb');
      copyFileSync(join(FIXTURES_DIR, 'test-data', 'GeoIP2-City-Fixture.mmdb'), geo);
      const e = await open({ geo, asn: SMALL.asn });
      const readAt = () => e.info().databases.map((d) => `${d.role} ${d.readAt}`);
      const first = readAt();
      expect(e.info().databases[0].schema).toBe('maxmind-city');
      await new Promise((r) => setTimeout(r, 5));
      await e.reload();
      expect(readAt()).toEqual(first);
      // Rewritten in place: a new modification time, compiled again into a new dataset, read.
      copyFileSync(join(FIXTURES_DIR, 'test-data', 'DBIP-City-Lite-Fixture.mmdb'), geo);
      await e.reload();
      const after = readAt();
      for (let i = 0; i < first.length; i++) expect(after[i]).not.toBe(first[i]);
      expect(e.info().databases[0].schema).toBe('flat');
      e.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(READ)('threat categories without a source', () => {
  /** The process warnings of `f`, emitted on the next tick. */
  const warningsOf = async (f: () => void): Promise<(Error & { code?: string })[]> => {
    const seen: (Error & { code?: string })[] = [];
    const listen = (w: Error) => seen.push(w);
    process.on('warning', listen);
    try {
      f();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    return seen.filter((w) => w.code === 'IPRECORD_MISSING_LISTS');
  };

  it("are told once a process, at the first lookup, naming what info() calls missing; an engine over another's files does not tell; IPRECORD_QUIET=1 silences it", () => {
    const e = openSync(SMALL);
    const missing = e
      .info()
      .lists.filter((l) => l.state === 'missing')
      .map((l) => l.name);
    e.close();
    expect(missing).toEqual(['tor', 'vpn', 'proxy', 'icloud_relay', 'attacker', 'abuser']);
    // A process of its own: this one has told it already.
    const script = [
      `import { open } from ${JSON.stringify(builtEntry('index'))};`,
      `const told = []; process.on('warning', (w) => told.push(w.code + ' ' + w.message + ' @' + step));`,
      `let step = 'open';`,
      `const a = await open(${JSON.stringify(SMALL)}); const b = await open(${JSON.stringify(SMALL)});`,
      `step = 'first'; a.lookup('8.8.8.8'); await new Promise((r) => setImmediate(r));`,
      `step = 'more'; a.lookup('1.1.1.1'); a.lookupJson('1.1.1.1'); a.threat('9.9.9.9'); b.lookup('8.8.8.8');`,
      `const worker = await open({ ...${JSON.stringify(SMALL)}, shared: a.share() }); worker.lookup('8.8.8.8');`,
      `await new Promise((r) => setImmediate(r)); console.log(JSON.stringify(told));`,
    ].join('\n');
    const run = (env: NodeJS.ProcessEnv) => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as string[];
    };
    const told = run({});
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(
      new RegExp(`^IPRECORD_MISSING_LISTS no loaded source answers for ${missing.join(', ')}: .*iprecord update.* @first$`),
    );
    expect(run({ IPRECORD_QUIET: '1' })).toEqual([]);
    // Unhandled, Node prints it: iprecord's one line, then Node's own hint, once a process (docs/library.md); Node's
    // --disable-warning with the code silences it.
    const plain = [
      `import { open } from ${JSON.stringify(builtEntry('index'))};`,
      `(await open(${JSON.stringify(SMALL)})).lookup('8.8.8.8');`,
    ].join('\n');
    const printed = (flags: string[]) => {
      const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', plain], {
        encoding: 'utf8',
        env: { ...process.env, IPRECORD_QUIET: '' },
      });
      expect(r.status, r.stderr).toBe(0);
      return r.stderr;
    };
    expect(printed([]).split('\n')).toEqual([
      expect.stringMatching(/^\(node:\d+\) \[IPRECORD_MISSING_LISTS\] Warning: no loaded source answers for [^\n]*iprecord update/),
      expect.stringMatching(/^\(Use `\S+ --trace-warnings \.\.\.` to show where the warning was created\)$/),
      '',
    ]);
    expect(printed(['--disable-warning=IPRECORD_MISSING_LISTS'])).toBe('');
  });

  it('a category with a source is not named; an error answered is a lookup too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-missing-'));
    try {
      writeFileSync(join(dir, 'tor.txt'), '185.220.101.1\n');
      await buildAndSwap(
        parseThreatConfig(
          { feeds: [{ name: 'tor', source: 'tor.txt', format: 'list', categories: ['tor'] }], sources: SMALL_SOURCES },
          dir,
        ),
        dir,
      );
      const e = await open({ data: dir });
      const told = await warningsOf(() => expect(() => e.lookup('10.0.0.1')).toThrow(PrivateIpError));
      expect(told).toHaveLength(1);
      expect(told[0].message).toContain('no loaded source answers for vpn, proxy, icloud_relay, attacker, abuser:');
      e.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(READ)('errors', () => {
  it.each([
    ['127.0.0.1', PrivateIpError, '127.0.0.1 is a private IP address'],
    ['10.1.2.3', PrivateIpError, '10.1.2.3 is a private IP address'],
    ['fe80::1', PrivateIpError, 'fe80::1 is a private IP address'],
    ['fd00::1', PrivateIpError, 'fd00::1 is a private IP address'],
    ['::ffff:192.168.0.1', PrivateIpError, '192.168.0.1 is a private IP address'],
    ['224.244.244.244', ReservedIpError, '224.244.244.244 is a reserved IP address.'],
    ['192.0.2.1', ReservedIpError, '192.0.2.1 is a reserved IP address.'],
    ['0.1.2.3', ReservedIpError, '0.1.2.3 is a reserved IP address.'],
    ['2001:db8::1', ReservedIpError, '2001:db8::1 is a reserved IP address.'],
    ['ff02::1', ReservedIpError, 'ff02::1 is a reserved IP address.'],
    ['bleh', InvalidIpError, 'bleh does not appear to be an IPv4 or IPv6 address'],
    ['8.8.8.0/24', InvalidIpError, '8.8.8.0/24 does not appear to be an IPv4 or IPv6 address'],
    ['', InvalidIpError, ' does not appear to be an IPv4 or IPv6 address'],
  ])('%j: %o with the service message', (ip, cls, message) => {
    const err = (() => {
      try {
        engine.lookup(ip);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(cls);
    expect((err as Error).message).toBe(message);
    expect((err as { status: number }).status).toBe(400);
  });

  it('tryLookup answers what lookup answers, an error as the value { message, code, status } it throws; thrown address errors carry no stack frames', () => {
    const next = xorshift32(seed());
    const ips: unknown[] = [...ADDRESS_FORMS, '', '10.0.0.1', 'fe80::1', '224.0.0.1', null, 42];
    for (let i = 0; i < 3000; i++)
      ips.push(i % 3 === 0 ? formatIp(6, [0x20000000 | (next() & 0x1fffffff), next(), next(), next()]) : formatIp(4, [0, 0, 0, next()]));
    const without = (s: string) => s.replace(/"current_time":"[^"]*"/, '');
    const seen = { records: 0, errors: 0 };
    for (const ip of ips) {
      const got = engine.tryLookup(ip as string, { count: '1' });
      let want: unknown;
      try {
        want = engine.lookup(ip as string, { count: '1' });
      } catch (e) {
        const err = e as PrivateIpError;
        expect(err).toBeInstanceOf(Error);
        expect(err.stack?.split('\n').filter((l) => l.trimStart().startsWith('at '))).toEqual([]);
        want = { message: err.message, code: err.code, status: err.status };
      }
      expect(without(JSON.stringify(got)), String(ip)).toBe(without(JSON.stringify(want)));
      seen['code' in got ? 'errors' : 'records']++;
    }
    expect(seen.records).toBeGreaterThan(1000);
    expect(seen.errors).toBeGreaterThan(100);
    expect(engine.tryLookup('10.0.0.1')).toEqual({ message: '10.0.0.1 is a private IP address', code: 'PRIVATE_IP', status: 400 });
    expect(Object.keys(engine.tryLookup('8.8.8.8', { fields: 'ip,country_code' }))).toEqual(['ip', 'country_code']);
  });

  it('non-strings are invalid addresses, never a crash', () => {
    for (const v of [null, undefined, 42, {}, ['8.8.8.8']]) expect(() => engine.lookup(v as never)).toThrow(InvalidIpError);
  });

  it('an option a lookup does not take is an InvalidOptionsError naming the nearest it takes, from every method', () => {
    const e = engine;
    const misspelt = { feilds: 'ip' } as unknown as { fields: string };
    for (const call of [
      () => e.lookup('8.8.8.8', misspelt),
      () => e.tryLookup('8.8.8.8', misspelt),
      () => e.lookupJson('8.8.8.8', misspelt),
      () => e.writeJson('8.8.8.8', Buffer.alloc(4096), 0, misspelt),
      () => e.bulk(['8.8.8.8'], misspelt),
    ])
      expect(call).toThrow(/^Unknown option "feilds" \(did you mean "fields"\?\); options are fields, count, basicThreat\.$/);
    const basic = { basicthreat: true } as unknown as { basicThreat: boolean };
    for (const call of [() => e.field('8.8.8.8', 'ip', basic), () => e.threat('8.8.8.8', basic), () => e.select('ip', basic)])
      expect(call).toThrow(InvalidOptionsError);
    expect(() => e.field('8.8.8.8', 'ip', { fields: 'ip' } as never)).toThrow(/Unknown option "fields"; options are count, basicThreat/);
    expect(() => e.lookup('8.8.8.8', 'ip' as never)).toThrow(/must be an object/);
    // Options it takes, and none, answer as before.
    expect(e.lookup('8.8.8.8', { fields: 'ip', count: '3', basicThreat: true })).toEqual({ ip: '8.8.8.8' });
    expect(() => e.lookup('8.8.8.8', null as never)).toThrow(/must be an object, not null/);
    // Values of the wrong type, which would be written into the record as they are ("count":5).
    const buf = Buffer.alloc(4096);
    for (const [options, message] of [
      [{ count: 5 }, 'Option "count" must be a string (the count\'s text), not number.'],
      [{ count: {} }, 'Option "count" must be a string (the count\'s text), not object.'],
      [{ basicThreat: 'yes' }, 'Option "basicThreat" must be true or false.'],
    ] as const)
      for (const call of [
        () => e.lookup('8.8.8.8', options as never),
        () => e.lookupJson('8.8.8.8', options as never),
        () => e.writeJson('8.8.8.8', buf, 0, options as never),
        () => e.tryWriteJson('8.8.8.8', buf, 0, options as never),
        () => e.threat('8.8.8.8', options as never),
        () => e.select('ip', options as never),
        () => e.bulk(['8.8.8.8'], options as never),
      ])
        expect(call).toThrow(new InvalidOptionsError(message));
  });

  it('unknown fields are invalid fields', () => {
    expect(() => engine.lookup('8.8.8.8', { fields: 'ip,bleh' })).toThrow(new InvalidFieldError('bleh'));
    expect(() => engine.field('8.8.8.8', 'bleh' as never)).toThrow('bleh is not a valid field.');
  });
});

describe.skipIf(READ)('operations', () => {
  it('fields: only those keys, in the order requested', () => {
    const r = engine.lookup('8.8.8.8', { fields: 'country_name,ip,asn,city' });
    expect(Object.keys(r)).toEqual(['country_name', 'ip', 'asn', 'city']);
    expect(Object.keys(engine.lookup('8.8.8.8', { fields: ['threat', 'ip'] }))).toEqual(['threat', 'ip']);
  });

  it.each(['', ',', ' , ,', '\t'])('fields %j selects nothing: the full record', (fields) => {
    const full = Object.keys(engine.lookup('8.8.8.8'));
    expect(Object.keys(engine.lookup('8.8.8.8', { fields }))).toEqual(full);
    expect(Object.keys(JSON.parse(engine.lookupJson('8.8.8.8', { fields })))).toEqual(full);
    expect(Object.keys(engine.lookup('8.8.8.8', { fields: [] }))).toEqual(full);
    expect(Object.keys(engine.bulk(['8.8.8.8'], { fields })[0])).toEqual(full);
  });

  it('field: the bare value', () => {
    expect(engine.field('8.8.8.8', 'country_name')).toBe('United States');
    expect(engine.field('8.8.8.8', 'carrier')).toBeNull();
    expect(FIELD_NAMES).toContain('region_type');
  });

  it("threat: the threat object alone, equal to the record's", () => {
    expect(engine.threat('1.1.1.1')).toEqual(engine.lookup('1.1.1.1').threat);
  });

  it('bulk: every entry in input order, errors in place, no 100 limit', () => {
    const ips = ['8.8.8.8', 'bleh', '127.0.0.1', '1.1.1.1', ...Array.from({ length: 150 }, (_, i) => `9.9.${i}.9`)];
    const out = engine.bulk(ips);
    expect(out).toHaveLength(ips.length);
    expect((out[0] as IpRecord).ip).toBe('8.8.8.8');
    expect(out[1]).toEqual({ message: 'bleh does not appear to be an IPv4 or IPv6 address', code: 'INVALID_IP', status: 400 });
    expect(out[2]).toEqual({ message: '127.0.0.1 is a private IP address', code: 'PRIVATE_IP', status: 400 });
    expect((out[153] as IpRecord).ip).toBe('9.9.149.9');
    expect(() => engine.bulk('8.8.8.8' as never)).toThrow(InvalidBulkError);
  });

  it('info: databases and the state of each threat list', () => {
    const info = engine.info();
    expect(info.databases.map((d) => d.role)).toEqual(['geo', 'geo', 'asn']);
    expect(info.lists.find((l) => l.name === 'tor')).toMatchObject({ state: 'missing' });
    expect(info.lists.find((l) => l.name === 'bogon')).toMatchObject({ state: 'loaded' });
  });

  it('count: a string of digits', () => {
    expect(engine.lookup('8.8.8.8').count).toMatch(/^\d+$/);
  });

  it('close: later calls throw ClosedError; reload keeps answering', async () => {
    const e = await open();
    const before = e.lookup('8.8.8.8');
    await e.reload();
    expect(e.lookup('8.8.8.8').asn).toEqual(before.asn);
    e.close();
    expect(() => e.lookup('8.8.8.8')).toThrow(ClosedError);
    expect(isIP('8.8.8.8')).toBe(4);
  });
});
