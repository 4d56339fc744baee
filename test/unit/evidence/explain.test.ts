/**
 * `evidence/explain.ts` over a dataset of the fixtures and a seen.bin
 * written here: the lists that hold an address are the ranges of the file
 * that hold it (IPv4 also in its IPv6 forms), with their days, the range
 * as one CIDR block or as `first - last`, only the lists of the build's
 * own feeds; no history (no feeds, no file) is `lists: null`; a damaged
 * or special file is no history with a warning, or thrown where asked.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { openSources } from '../../../src/compile/run.js';
import { InvalidDatasetError } from '../../../src/contract/errors.js';
import { openSync } from '../../../src/engine/engine.js';
import { resolveOptions } from '../../../src/engine/options.js';
import { Snapshot } from '../../../src/engine/snapshot.js';
import { explainRecord, seenPath, type ExplainedInfo } from '../../../src/evidence/explain.js';
import { dayText, encodeSeen, FIRST_DAY } from '../../../src/evidence/seen.js';
import { specialTable } from '../../../src/ip/special.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const db = (name: string) => testDb(FIXTURES_DIR, name);
const dir = mkdtempSync(join(tmpdir(), 'iprecord-explain-unit-'));
const dataset = join(dir, 'fixtures.iprd');
writeFileSync(
  dataset,
  compileDataset(
    openSources({ geo: [db('GeoIP2-City-Fixture')], asn: [db('GeoIP2-ISP-Fixture')], anonymous: [] }),
    null,
    specialTable(),
    'fixtures',
  ).toBuffer(),
);
const engine = openSync({ dataset });
const ds = Snapshot.openSync(resolveOptions({ dataset })).dataset;
afterAll(() => {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The engine's info as a build with threat feeds `feeds` has it. */
const info = (feeds: string[]): ExplainedInfo => ({
  ...engine.info(),
  threat: { path: join(dir, 'threat.bin'), builtAt: '2026-06-01T00:00:00.000Z' },
  feeds: feeds.map((name) => ({ name, categories: ['attacker'] })),
});
const LATEST = FIRST_DAY + 2345;
/** Public IPv4 addresses of the fixtures (they have a record), as numbers. */
const HELD = [0x51024500, 0x5102459f, 0x5102bfff, 0x59a01480];
/** A record less what changes per lookup. */
const timeless = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'current_time' || k === 'count' ? null : x)));
const dotted = (a: number) => [a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join('.');

/** Writes a seen.bin with the IPv4 ranges given for list 'a' and one range of list 'gone' (left out of the configuration). */
function seenWith(ranges: [number, number, number, number][]): string {
  const path = join(dir, `seen-${Math.random().toString(36).slice(2)}.bin`);
  writeFileSync(
    path,
    encodeSeen([
      { name: 'a', latest: LATEST, v4: Uint32Array.from(ranges.flat()), v6: [] },
      { name: 'gone', latest: LATEST, v4: Uint32Array.of(0, 0xffffffff, FIRST_DAY, LATEST), v6: [] },
    ]),
  );
  return path;
}

describe('explain()', () => {
  it("gives each range that holds the address with its days, only the build's own lists, IPv4 also in IPv6 forms", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...HELD),
        fc.integer({ min: 0, max: 24 }),
        fc.nat(600),
        fc.nat(600),
        fc.boolean(),
        (address, bits, a, b, mapped) => {
          // The range of the address's /bits block, or that block less its first address (not one CIDR block).
          const size = 2 ** (32 - bits);
          const start = Math.floor(address / size) * size;
          const whole = bits === 0 || address !== start;
          const [from, to] = [whole ? start : start + 1, start + size - 1];
          const first = FIRST_DAY + Math.min(a, b);
          const last = Math.min(LATEST, FIRST_DAY + Math.max(a, b) + (b % 3 === 0 ? 2345 : 0));
          const seen = seenWith(to >= from ? [[from, to, first, last]] : []);
          const ip = mapped ? `::ffff:${dotted(address)}` : dotted(address);
          const e = explainRecord(ip, engine.lookup(ip), ds, info(['a']), seen, null);
          const held = address >= from && address <= to;
          expect(e.lists).toEqual(
            held
              ? [
                  {
                    name: 'a',
                    categories: ['attacker'],
                    listed: last === LATEST,
                    range: whole ? `${dotted(start)}/${bits}` : `${dotted(from)} - ${dotted(to)}`,
                    first_seen: dayText(first),
                    last_seen: dayText(last),
                    downloaded: dayText(LATEST),
                  },
                ]
              : [],
          );
          expect(timeless(e.record)).toEqual(timeless(engine.lookup(ip)));
          expect(e.asn_type?.type ?? null).toBe(e.record.asn?.type ?? null);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers lists null without a history: no feeds, no seen.bin, a build made before it', () => {
    const ip = dotted(HELD[0]);
    const seen = seenWith([[0, 0xffffffff, FIRST_DAY, LATEST]]);
    expect(explainRecord(ip, engine.lookup(ip), ds, { ...info([]), threat: null }, seen, null).lists).toBeNull();
    expect(explainRecord(ip, engine.lookup(ip), ds, info(['a']), null, null).lists).toBeNull();
    expect(explainRecord(ip, engine.lookup(ip), ds, info(['a']), join(dir, 'absent.bin'), null).lists).toBeNull();
    expect(seenPath('/d/builds/b', '/d/x/threat.bin')).toBe('/d/builds/b/seen.bin');
    expect(seenPath(null, '/d/x/threat.bin')).toBe('/d/x/seen.bin');
    expect(seenPath(null, null)).toBeNull();
  });

  it('answers a damaged or special seen.bin as no history with a warning, or throws it where asked', async () => {
    const ip = dotted(HELD[1]);
    const damaged = seenWith([[0, 0xffffffff, FIRST_DAY, LATEST]]);
    const bytes = Buffer.from(encodeSeen([{ name: 'a', latest: LATEST, v4: Uint32Array.of(0, 0xffffffff, FIRST_DAY, LATEST), v6: [] }]));
    // The range's first day (after the header, the name 'a', its latest and IPv4 count, the range's start and end).
    bytes[16 + 3 + 8 + 8] ^= 1;
    writeFileSync(damaged, bytes);
    const fifo = join(dir, 'fifo.bin');
    execFileSync('mkfifo', [fifo]);
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
    process.on('warning', listen);
    try {
      for (const [path, why] of [
        [damaged, /its checksum does not match its bytes/],
        [fifo, /it is not a regular file/],
        [sub, /it is not a regular file/],
      ] as const) {
        expect(explainRecord(ip, engine.lookup(ip), ds, info(['a']), path, null).lists).toBeNull();
        expect(() => explainRecord(ip, engine.lookup(ip), ds, info(['a']), path, null, 'throw')).toThrow(InvalidDatasetError);
        expect(() => explainRecord(ip, engine.lookup(ip), ds, info(['a']), path, null, 'throw')).toThrow(why);
      }
      await new Promise((r) => setImmediate(r));
      expect(warned.length).toBe(3);
    } finally {
      process.off('warning', listen);
    }
  });
});
