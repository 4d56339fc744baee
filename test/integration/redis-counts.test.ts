/**
 * Counts and quotas shared through a real Redis: three `iprecord serve`
 * processes count 15 000 requests of three keys in one place, enforce one
 * quota across them, and lose no request when Redis stops and starts
 * again mid-run (its append-only file keeps what it had).
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/server/keys.js';
import { SharedCounts } from '../../src/server/shared-counts.js';
import { ROOT } from '../helpers/env.js';
import { freePort, get, HAS_REDIS, load, RedisProcess, type ServeProcess, serveProcess, sleep } from '../helpers/redis.js';

if (!HAS_REDIS) console.warn('skipping the shared counts tests: they need redis-server (apt install redis-server)');

const KEYS = { a: 'shared-key-aaaa', b: 'shared-key-bbbb', q: 'shared-key-qqqq' };
const QUOTA = 3000;
/** The instances' sync interval. */
const SYNC_MS = 250;
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

describe.skipIf(!HAS_REDIS)('counts shared through Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-redis-'));
  let redis: RedisProcess;
  const servers: ServeProcess[] = [];
  const serve = async () => {
    // Counts exchanged four times a second (once by default): the waits below are counted in syncs.
    const s = await serveProcess([
      'serve',
      '--port',
      '0',
      '--keys',
      join(dir, 'keys.json'),
      '--counts',
      redis.url,
      '--access-log',
      'off',
      '--counts-sync-every',
      String(SYNC_MS / 1000),
    ]);
    servers.push(s);
    return s;
  };
  const ports = () => servers.slice(0, 3).map((s) => s.port);

  beforeAll(async () => {
    redis = new RedisProcess(await freePort(), dir);
    writeFileSync(
      join(dir, 'keys.json'),
      JSON.stringify({
        keys: [
          { key: KEYS.a, plan: 'paid' },
          { key: KEYS.b, plan: 'business' },
          { key: KEYS.q, plan: 'paid', quota: QUOTA },
        ],
      }),
    );
    await redis.start();
    await Promise.all([serve(), serve(), serve()]);
  });

  afterAll(() => {
    for (const s of servers) s.child.kill('SIGKILL');
    redis.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('15 000 requests over three processes: exact counts per key, one quota, Redis restarted mid-run losing none', async () => {
    // Keys a and b, 6 000 requests each; Redis stops after 2 000 of a's and starts again eight syncs later.
    let restart: Promise<void> | null = null;
    const a = await load(ports(), KEYS.a, 6000, (sent) => {
      if (sent === 2000)
        restart = (async () => {
          await redis.stop();
          await sleep(8 * SYNC_MS);
          await redis.start();
        })();
    });
    const b = await load(ports(), KEYS.b, 6000);
    await restart;
    expect([...a]).toEqual([[200, 6000]]);
    expect([...b]).toEqual([[200, 6000]]);

    // Every instance has Redis again (each says so) before the quota is put to the test.
    for (let i = 0; !servers.slice(0, 3).every((s) => s.err().includes('answers again')); i++) {
      if (i > 200) throw new Error(`an instance did not reconnect: ${servers.map((s) => s.err()).join('\n')}`);
      await sleep(100);
    }
    // The quota key: half the quota, time for every instance to hear of it (two syncs and more: ten, on a busy
    // machine), the other half, then as much again, all refused.
    const q = new Map<number, number>();
    for (const n of [QUOTA / 2, QUOTA / 2, QUOTA]) {
      if (q.size > 0) await sleep(10 * SYNC_MS);
      for (const [status, count] of await load(ports(), KEYS.q, n)) q.set(status, (q.get(status) ?? 0) + count);
    }
    expect(Object.fromEntries(q)).toEqual({ 200: QUOTA, 403: QUOTA });

    // What Redis holds once every instance sent its last batch (two syncs and more): every request answered, counted once.
    await sleep(10 * SYNC_MS);
    const client = new Redis(redis.port, '127.0.0.1');
    const totals = await Promise.all(Object.values(KEYS).map((k) => client.hget(`{iprecord}:counts:${digest(k)}`, 'total')));
    client.disconnect();
    expect(totals.map(Number)).toEqual([6000, 6000, QUOTA]);

    // A fourth process answers the same counts from its first request, and refuses the quota key at once.
    const fourth = await serve();
    expect((await get(fourth.port, `/1.1.1.1/count?api-key=${KEYS.a}`)).body).toBe('6000');
    expect((await get(fourth.port, `/1.1.1.1/count?api-key=${KEYS.b}`)).body).toBe('6000');
    expect((await get(fourth.port, `/1.1.1.1?api-key=${KEYS.q}`)).status).toBe(403);

    // Each process said once that Redis was away and once that it was back.
    for (const s of servers.slice(0, 3)) {
      expect(s.err().match(/does not answer/g)?.length, s.err()).toBe(1);
      expect(s.err().match(/answers again/g)?.length, s.err()).toBe(1);
    }
  }, 120_000);

  it("drops the minutes that left the 24 hours from a key's total, a key used lately and one idle for days", async () => {
    const keys = KeyStore.of({
      keys: [
        { key: 'window-key-0001', plan: 'paid' },
        { key: 'window-key-0002', plan: 'paid' },
      ],
    });
    const now = Math.floor(Date.now() / 60_000);
    const client = new Redis(redis.port, '127.0.0.1');
    // Minutes as instances left them: one 25 hours old beside one of 16 hours; one of 3.5 days beside one of 10 minutes.
    await client.hset(
      `{iprecord}:counts:${digest('window-key-0001')}`,
      String(now - 1500),
      '7',
      String(now - 1000),
      '5',
      'total',
      '12',
      'oldest',
      String(now - 1500),
    );
    await client.hset(
      `{iprecord}:counts:${digest('window-key-0002')}`,
      String(now - 5000),
      '3',
      String(now - 10),
      '4',
      'total',
      '7',
      'oldest',
      String(now - 5000),
    );
    // And, as they do, the keys in the set of keys by the last second counted (Redis's clock).
    const [clock] = await client.time();
    await client.zadd(
      '{iprecord}:active',
      Number(clock) - 1000 * 60,
      `{iprecord}:counts:${digest('window-key-0001')}`,
      Number(clock) - 10 * 60,
      `{iprecord}:counts:${digest('window-key-0002')}`,
    );
    const shared = await SharedCounts.connect(redis.url, keys, () => {});
    await shared.close();
    expect([keys.find('window-key-0001')!.offset, keys.find('window-key-0002')!.offset]).toEqual([5, 4]);
    const left = await client.hgetall(`{iprecord}:counts:${digest('window-key-0002')}`);
    // The first minute of the window as the sync saw it (a minute may have turned since \`now\`).
    expect([now - 1439, now - 1438]).toContain(Number(left.oldest));
    expect({ ...left, oldest: undefined }).toEqual({ [String(now - 10)]: '4', total: '4', oldest: undefined });
    client.disconnect();
  });
  /** Two instances in this process over the same Redis, each with its own accounts of these keys. */
  async function twoInstances(keys: { key: string; plan: 'paid'; quota?: number }[]) {
    const logs: string[][] = [[], []];
    const stores = [KeyStore.of({ keys }), KeyStore.of({ keys })];
    const shared = await Promise.all(stores.map((k, i) => SharedCounts.connect(redis.url, k, (line) => logs[i].push(line))));
    return {
      logs,
      stores,
      shared,
      syncAll: async () => {
        for (const s of shared) await s.sync();
      },
    };
  }

  it('after Redis loses its data, the instances send their 24 hours again and agree within two syncs', async () => {
    const key = 'loss-key-00001';
    const { logs, stores, shared, syncAll } = await twoInstances([{ key, plan: 'paid', quota: 1000 }]);
    const [a, b] = stores.map((k) => k.find(key)!);
    a.count(Date.now(), 300);
    b.count(Date.now(), 200);
    await syncAll();
    await syncAll();
    expect([a.offset, b.offset]).toEqual([200, 300]);

    const client = new Redis(redis.port, '127.0.0.1');
    await client.flushall();
    a.count(Date.now(), 5);
    await syncAll();
    await syncAll();
    expect(Number(await client.hget(`{iprecord}:counts:${digest(key)}`, 'total'))).toBe(505);
    expect([a.offset, b.offset]).toEqual([200, 305]);
    // The quota sees every request again: 495 more pass on either instance, 496 do not.
    expect([a.allows(495, Date.now()), a.allows(496, Date.now()), b.allows(495, Date.now()), b.allows(496, Date.now())]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    for (const l of logs) expect(l.filter((line) => line.includes('lost its counts'))).toHaveLength(1);
    client.disconnect();
    await Promise.all(shared.map((s) => s.close()));
  });

  it('a key of another type where a count hash belongs costs that key only, and is shared again once removed', async () => {
    const [good, bad] = ['type-key-good1', 'type-key-bad01'];
    const client = new Redis(redis.port, '127.0.0.1');
    await client.set(`{iprecord}:counts:${digest(bad)}`, 'not a hash');
    const { logs, stores, shared, syncAll } = await twoInstances([
      { key: good, plan: 'paid' },
      { key: bad, plan: 'paid' },
    ]);
    for (const [i, k] of stores.entries()) {
      k.find(good)!.count(Date.now(), 10 * (i + 1));
      k.find(bad)!.count(Date.now(), 100 * (i + 1));
    }
    await syncAll();
    await syncAll();
    expect(Number(await client.hget(`{iprecord}:counts:${digest(good)}`, 'total'))).toBe(30);
    expect(stores.map((k) => k.find(good)!.offset)).toEqual([20, 10]);
    // The bad key counts on each instance alone, said once by each.
    expect(stores.map((k) => k.find(bad)!.offset)).toEqual([0, 0]);
    await syncAll();
    for (const l of logs) expect(l.filter((line) => line.includes('is not a count hash') && line.includes('key-2'))).toHaveLength(1);

    await client.del(`{iprecord}:counts:${digest(bad)}`);
    await syncAll();
    await syncAll();
    await syncAll();
    expect(Number(await client.hget(`{iprecord}:counts:${digest(bad)}`, 'total'))).toBe(300);
    expect(stores.map((k) => k.find(bad)!.offset)).toEqual([200, 100]);
    client.disconnect();
    await Promise.all(shared.map((s) => s.close()));
  });
  it('a keys file of 100 000 keys none of which is used costs under 30 MB and under 1 % of Redis', async () => {
    // Only the two instances measured call Redis meanwhile: the first test's (four syncs a second each) are done.
    for (const s of servers.splice(0)) s.child.kill('SIGKILL');
    const keys = Array.from({ length: 100_000 }, (_, i) => ({ key: `idle-key-${String(i).padStart(8, '0')}`, plan: 'paid', quota: 1000 }));
    writeFileSync(join(dir, 'many.json'), JSON.stringify({ keys }));
    writeFileSync(join(dir, 'few.json'), JSON.stringify({ keys: keys.slice(0, 3) }));
    // What each process holds, collected every quarter second (not garbage of the parse a busy machine left for later).
    const collected = { NODE_OPTIONS: `--expose-gc --require ${join(ROOT, 'test/helpers/gc-often.cjs')}` };
    const [many, few] = await Promise.all(
      ['many', 'few'].map((f) =>
        serveProcess(['serve', '--port', '0', '--keys', join(dir, `${f}.json`), '--counts', redis.url, '--access-log', 'off'], collected),
      ),
    );
    try {
      const client = new Redis(redis.port, '127.0.0.1');
      const cpu = async () => {
        const info = await client.info('cpu');
        return Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
      };
      await sleep(1000);
      const before = await cpu();
      const started = Date.now();
      // Three seconds of the CPU Redis spends (a call a second from each).
      await sleep(3000);
      const share = (await cpu()) - before;
      client.disconnect();
      const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
      const more = rss(many.child.pid!) - rss(few.child.pid!);
      console.log(
        `100 000 idle keys: ${more.toFixed(1)} MB more than 3 keys; Redis ${((share / ((Date.now() - started) / 1000)) * 100).toFixed(2)} % of a core`,
      );
      expect(more).toBeLessThan(30);
      expect(share / ((Date.now() - started) / 1000)).toBeLessThan(0.01);
      // Answering still: a key of the file, its first use.
      expect((await get(many.port, `/8.8.8.8/ip?api-key=${keys[99_999].key}`)).body).toBe('8.8.8.8');
    } finally {
      many.child.kill('SIGKILL');
      few.child.kill('SIGKILL');
    }
  });
});
