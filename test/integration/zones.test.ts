/**
 * A dataset's zone rules come from the newest tz release at hand: the
 * system's zoneinfo (TZDIR) when later than the package's table, else the
 * package's; a newer release on the system compiles the data again. Real
 * compiles of the fixture databases, over a zoneinfo directory made from
 * the system's with one zone's file swapped, so the answer shows which
 * rules were used; a zone whose file cannot be read (a FIFO, a device,
 * damaged or oversized) takes the package's rules for itself alone.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../src/index.js';
import { PACKAGE_ZONES } from '../../src/time/package-zones.js';
import { SMALL } from '../helpers/maxmind.js';

const SYSTEM = '/usr/share/zoneinfo';
const HAS_ZONEINFO = existsSync(join(SYSTEM, 'Europe', 'London')) && existsSync(join(SYSTEM, 'Asia', 'Tokyo'));
if (!HAS_ZONEINFO && process.env.IPRECORD_REQUIRE_ZONEINFO === '1')
  throw new Error('IPRECORD_REQUIRE_ZONEINFO=1: the system zoneinfo is required');
if (!HAS_ZONEINFO) console.warn(`skipping the zoneinfo choice tests: they need the system's zoneinfo in ${SYSTEM} (apt install tzdata)`);

/** An address of the fixture databases in Australia/Brisbane, and one in Africa/Cairo. */
const BRISBANE = '1.0.0.1';
const CAIRO = '41.32.0.1';

describe.skipIf(!HAS_ZONEINFO)("the dataset's zone rules", () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-zones-'));
  const zoneinfo = join(dir, 'zoneinfo');
  const saved = { TZDIR: process.env.TZDIR, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };

  /** A zoneinfo directory of the system's files, Australia/Brisbane's being `brisbane` (a path), stating `release`. */
  function makeZoneinfo(release: string, brisbane: string): void {
    rmSync(zoneinfo, { recursive: true, force: true });
    mkdirSync(join(zoneinfo, 'Australia'), { recursive: true });
    for (const e of readdirSync(SYSTEM)) if (e !== 'Australia' && e !== 'tzdata.zi') symlinkSync(join(SYSTEM, e), join(zoneinfo, e));
    for (const e of readdirSync(join(SYSTEM, 'Australia')))
      symlinkSync(e === 'Brisbane' ? brisbane : join(SYSTEM, 'Australia', e), join(zoneinfo, 'Australia', e));
    writeFileSync(join(zoneinfo, 'tzdata.zi'), `# version ${release}\n# the rest of the file is not read\n`);
  }

  beforeAll(() => {
    process.env.TZDIR = zoneinfo;
    // A cache of this file's own: its keys name this zoneinfo.
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    rmSync(dir, { recursive: true, force: true });
  });

  const answer = async () => {
    const e = await open({ geo: SMALL.geo, asn: SMALL.asn });
    try {
      return { zone: e.lookup(BRISBANE).time_zone, info: e.info().timeZones, cairo: e.lookup(CAIRO).time_zone };
    } finally {
      e.close();
    }
  };

  it('are read from the system zoneinfo when its release is later, and compiled again when it changes', async () => {
    makeZoneinfo('2099a', join(SYSTEM, 'Asia', 'Tokyo'));
    const later = await answer();
    expect(later.info).toEqual({ tzdata: '2099a', source: zoneinfo, from: PACKAGE_ZONES.from, to: PACKAGE_ZONES.to });
    // Brisbane's name, Tokyo's rules: what the directory holds, not what the package or the runtime knows.
    expect(later.zone).toMatchObject({ name: 'Australia/Brisbane', abbr: 'JST', offset: '+0900', is_dst: false });

    // An earlier release on the system: the package's own table, in a dataset compiled again (the key names the release).
    makeZoneinfo('2001a', join(SYSTEM, 'Asia', 'Tokyo'));
    const earlier = await answer();
    expect(earlier.info).toEqual({ tzdata: PACKAGE_ZONES.tzdata, source: 'package', from: PACKAGE_ZONES.from, to: PACKAGE_ZONES.to });
    expect(earlier.zone).toMatchObject({ name: 'Australia/Brisbane', abbr: 'AEST', offset: '+1000' });
  });

  /** A TZif file of `changes` transitions an hour apart from 2021, between two local time types. */
  function busyTzif(changes: number): Buffer {
    const chars = Buffer.from('AAA\0BBB\0', 'latin1');
    const head = (counts: number[]) => {
      const h = Buffer.alloc(44);
      h.write('TZif2', 0, 'latin1');
      counts.forEach((n, i) => h.writeUInt32BE(n, 20 + i * 4));
      return h;
    };
    const times = Buffer.alloc(changes * 8);
    for (let i = 0; i < changes; i++) times.writeBigInt64BE(BigInt(1_609_459_200 + i * 3600), i * 8);
    const index = Buffer.from(Array.from({ length: changes }, (_, i) => i % 2));
    const types = Buffer.alloc(12);
    types.writeInt32BE(3600, 0);
    types.writeInt32BE(7200, 6);
    types[11] = 4;
    return Buffer.concat([
      head([0, 0, 0, 0, 1, 1]),
      Buffer.alloc(6),
      Buffer.alloc(1),
      head([0, 0, 0, changes, 2, chars.length]),
      times,
      index,
      types,
      chars,
      Buffer.from('\nAAA-1\n'),
    ]);
  }

  // Each must give way quickly: a FIFO read would wait forever, /dev/zero would fill memory.
  /** A file of the test's folder with these bytes: its path. */
  const file = (name: string, bytes: string | Buffer): string => {
    writeFileSync(join(dir, name), bytes);
    return join(dir, name);
  };
  const fifo = (): string => {
    spawnSync('mkfifo', [join(dir, 'fifo')]);
    return join(dir, 'fifo');
  };
  const unreadable: [string, () => string][] = [
    ['a file that is not TZif', () => file('not-tzif', 'not a TZif file')],
    ['a FIFO', fifo],
    ['a device (/dev/zero)', () => '/dev/zero'],
    ['a directory', () => dir],
    ['a TZif of 3 MB', () => file('huge', Buffer.concat([busyTzif(10), Buffer.alloc(3_000_000)]))],
    ['a TZif of 5 000 changes', () => file('busy', busyTzif(5000))],
    ['a TZif cut short', () => file('short', busyTzif(50).subarray(0, 300))],
  ];
  // Each case states its own release, so that each compiles afresh (a dataset's key names the release).
  it.each(unreadable.map(([what, make], i) => [what, make, `2098${'abcdefghij'[i]}`] as const))(
    "take the package's rules for that zone alone, named, when its file is %s",
    async (_what, make, release) => {
      makeZoneinfo(release, make());
      const started = Date.now();
      const { zone, info, cairo } = await answer();
      // The directory's release for every other zone (Cairo read from its file), the package's for Brisbane.
      expect(info).toEqual({
        tzdata: release,
        source: zoneinfo,
        from: PACKAGE_ZONES.from,
        to: PACKAGE_ZONES.to,
        fromPackage: ['Australia/Brisbane'],
      });
      expect(zone).toMatchObject({ name: 'Australia/Brisbane', abbr: 'AEST', offset: '+1000' });
      expect(cairo).toMatchObject({ name: 'Africa/Cairo' });
      // A bound on a hang (a crafted file walked for ever), not a speed.
      expect(Date.now() - started).toBeLessThan(30_000);
    },
  );

  it('a well-formed busy zone within the bound is read (the crafted file is real TZif)', async () => {
    makeZoneinfo('2099c', file('ok', busyTzif(20)));
    expect((await answer()).info.source).toBe(zoneinfo);
  });

  it("give way to the package's table when the release file is a FIFO (never waiting on it)", async () => {
    makeZoneinfo('2099d', join(SYSTEM, 'Asia', 'Tokyo'));
    rmSync(join(zoneinfo, 'tzdata.zi'));
    spawnSync('mkfifo', [join(zoneinfo, 'tzdata.zi')]);
    const { zone, info } = await answer();
    expect(info.source).toBe('package');
    expect(zone).toMatchObject({ abbr: 'AEST', offset: '+1000' });
  });
});
