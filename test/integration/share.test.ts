/**
 * Engines in worker threads over one copy of the data: `engine.share()` in
 * the main thread, `open({ shared })` in the worker.
 */

import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, isIprecordError, open, openSync, type Engine, type IpRecord, type OpenOptions } from '../../src/index.js';
import { FIXTURES_DIR } from '../../scripts/make-fixtures.js';
import { seed } from '../helpers/env.js';
import { startWorker } from '../../src/platform/threads.js';

const fixture = (name: string) => join(FIXTURES_DIR, 'test-data', name);

function shareWorker(options: OpenOptions): Promise<Worker> {
  const w = startWorker(new URL('../helpers/share-worker.ts', import.meta.url), { workerData: options });
  return new Promise((resolve, reject) => {
    w.once('message', () => resolve(w));
    w.once('error', reject);
  });
}

function ask<T>(w: Worker, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.postMessage(message);
  });
}

/** A record without what differs between two engines asked at different moments (their own counts, the clock). */
function comparable(r: IpRecord | string): unknown {
  if (typeof r === 'string') return r;
  const { count: _count, time_zone, ...rest } = r;
  return { ...rest, time_zone: time_zone && { ...time_zone, current_time: undefined } };
}

describe('share() and open({ shared })', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-share-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uses the same bytes, not a copy, for files read into memory; a file changed since is opened anew', () => {
    const geo = join(dir, 'geo.mmdb');
    const asn = join(dir, 'asn.mmdb');
    copyFileSync(fixture('GeoIP2-City-Fixture.mmdb'), geo);
    copyFileSync(fixture('GeoLite2-ASN-Fixture.mmdb'), asn);
    const first = openSync({ geo, asn, memory: 'read' });
    const shared = first.share();
    // The dataset compiled from the two databases.
    expect(shared.files.map((f) => f.path)).toEqual([expect.stringMatching(/\.iprd$/)]);
    for (const f of shared.files) expect(f.bytes).toBeInstanceOf(SharedArrayBuffer);

    const second = openSync({ geo, asn, memory: 'read', shared });
    const bytes = (e: Engine) => e.share().files[0].bytes;
    expect(bytes(second)).toBe(bytes(first));
    expect(comparable(second.lookup('81.2.69.142'))).toEqual(comparable(first.lookup('81.2.69.142')));

    // The geo file replaced: compiled again into the same place (not beside the old one), and read anew.
    copyFileSync(fixture('DBIP-City-Lite-Fixture.mmdb'), join(dir, 'next.mmdb'));
    renameSync(join(dir, 'next.mmdb'), geo);
    const third = openSync({ geo, asn, memory: 'read', shared });
    expect(third.share().files[0].path).toBe(shared.files[0].path);
    expect(third.share().files[0].stamp).not.toBe(shared.files[0].stamp);
    expect(bytes(third)).not.toBe(bytes(first));
    expect(third.info().databases.find((d) => d.role === 'geo')?.schema).toBe('flat');
    for (const e of [first, second, third]) e.close();
  });

  it('gives mapped files without bytes (each thread maps them: one copy in the page cache)', () => {
    const e = openSync({ geo: fixture('GeoIP2-City-Fixture.mmdb'), asn: fixture('GeoLite2-ASN-Fixture.mmdb'), memory: 'mmap' });
    const mapped = e.info().memory.mode === 'mmap';
    for (const f of e.share().files) expect(f.bytes === null).toBe(mapped);
    e.close();
  });

  it('rejects a malformed shared option', () => {
    for (const bad of [null, {}, { files: 'x' }, { files: [{ path: 'a', stamp: 's', readAt: 'r', bytes: new ArrayBuffer(4) }] }]) {
      expect(() => openSync({ shared: bad as never })).toThrow(InvalidOptionsError);
    }
  });

  it('refuses an option it does not know, naming the one meant, rather than answer from data the caller did not mean', async () => {
    expect(() => openSync({ datadir: '/x' } as never)).toThrow(/Unknown option "datadir" \(did you mean "data"\?\)/);
    await expect(open({ Geo: '/x' } as never)).rejects.toThrow(/did you mean "geo"/);
    expect(() => openSync({ cache: true } as never)).toThrow(InvalidOptionsError);
    // createServer() and exportDataset() alike, before any work.
    const { createServer } = await import('../../src/server/index.js');
    const { exportDataset } = await import('../../src/export/index.js');
    const engine = openSync();
    try {
      await expect(createServer({ engine, metricPort: 9464 } as never)).rejects.toThrow(
        /Unknown option "metricPort" \(did you mean "metricsPort"\?\)/,
      );
      await expect(createServer({ engine, trustproxy: 1 } as never)).rejects.toThrow(/did you mean "trustProxy"/);
      await expect(exportDataset(engine, { format: 'csv', out: '/nonexistent/x.csv', field: ['ip'] } as never)).rejects.toThrow(
        /Unknown option "field" \(did you mean "fields"\?\)/,
      );
    } finally {
      engine.close();
    }
  });

  it("a worker thread opened with shared answers as the main thread, over the main thread's memory", async () => {
    const main = openSync({ memory: 'read' });
    const shared = main.share();
    expect(shared.files.length).toBeGreaterThanOrEqual(1);
    const worker = await shareWorker({ memory: 'read', shared });
    try {
      const ips = fc.sample(fc.oneof(fc.ipV4(), fc.ipV4(), fc.ipV6()), { seed: seed(), numRuns: 300 });
      const theirs = await ask<(IpRecord | string)[]>(worker, { kind: 'lookup', ips });
      const ours = ips.map((ip) => {
        try {
          return main.lookup(ip);
        } catch (e) {
          if (isIprecordError(e)) return e.code;
          throw e;
        }
      });
      expect(theirs.map(comparable)).toEqual(ours.map(comparable));
      expect(theirs.filter((r) => typeof r !== 'string').length).toBeGreaterThan(100);

      // One block of memory: a byte changed here is seen there (and put back).
      const file = shared.files.find((f) => f.bytes !== null && f.bytes.byteLength > 1000);
      expect(file).toBeDefined();
      const view = new Uint8Array(file!.bytes!);
      const at = view.length - 1;
      const was = view[at];
      view[at] = was ^ 0xff;
      try {
        expect(await ask(worker, { kind: 'peek', path: file!.path, at })).toBe(was ^ 0xff);
      } finally {
        view[at] = was;
      }
      expect(await ask(worker, { kind: 'peek', path: file!.path, at })).toBe(was);
    } finally {
      await worker.terminate();
      main.close();
    }
  });
});
