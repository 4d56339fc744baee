import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_NAMES, open, type Engine } from '../../src/index.js';
import { formatIp } from '../../src/ip/format.js';
import { ByteWriter } from '../../src/text/writer.js';
import { csvField } from '../../src/text/csv.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { csvCells } from '../../src/engine/inside.js';
import { same } from '../helpers/check.js';

let engine: Engine;
beforeAll(async () => {
  engine = await open();
});
afterAll(() => engine.close());

/** Every path of the record: its members, and the members of its objects. */
const PATHS = [
  ...FIELD_NAMES,
  ...['asn', 'name', 'domain', 'route', 'type'].map((k) => `asn.${k}`),
  ...['name', 'mcc', 'mnc'].map((k) => `carrier.${k}`),
  ...['name', 'code', 'symbol', 'native', 'plural'].map((k) => `currency.${k}`),
  ...['name', 'abbr', 'offset', 'is_dst', 'current_time'].map((k) => `time_zone.${k}`),
  ...[
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
  ].map((k) => `threat.${k}`),
  ...['vpn_score', 'proxy_score', 'threat_score', 'trust_score'].map((k) => `threat.scores.${k}`),
];

const at = (v: unknown, path: string) =>
  path.split('.').reduce<unknown>((o, k) => (o === null || typeof o !== 'object' ? undefined : (o as Record<string, unknown>)[k]), v);
/** The clock moves between two calls: its times are left out of both sides. */
const timeless = (s: string) => s.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d/g, 'T');

describe('CSV cells of chosen paths (iprecord enrich)', () => {
  it('are the CSV cells of the record lookup() answers, for every path, both threat forms, over the default data', () => {
    const rand = xorshift32(seed());
    let records = 0;
    for (const basicThreat of [false, true]) {
      const options = { count: '12', basicThreat };
      const write = csvCells(engine, PATHS, options);
      const out = new ByteWriter(256);
      const failure = { message: '' };
      for (let n = 0; n < 4000; n++) {
        // IPv4 from the whole space, IPv6 from the routed 2000::/4 (most of it unrouted: records without asn).
        const words = n % 4 === 3 ? [0x20000000 + (rand() >>> 4), rand(), rand(), rand()] : [0, 0, 0, rand()];
        const ip = formatIp(
          n % 4 === 3 ? 6 : 4,
          words.map((w) => w >>> 0),
        );
        const record = engine.tryLookup(ip, options);
        out.used = 0;
        const wrote = write(ip, out, failure);
        if ('code' in record) {
          same(wrote, false, ip);
          same(failure.message, record.message);
          continue;
        }
        records++;
        same(wrote, true, ip);
        const want = PATHS.map((p) => ',' + csvField(at(record, p))).join('');
        same(timeless(Buffer.from(out.result()).toString()), timeless(want), ip);
      }
    }
    expect(records).toBeGreaterThan(5000);
  });
});
