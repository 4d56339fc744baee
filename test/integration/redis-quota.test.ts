/**
 * Quotas shared through a real Redis under a burst: three `iprecord serve`
 * processes answer 1 500 requests of a key with a quota of 600, sent as
 * fast as 32 connections send them, split over the instances in several
 * ways, with an instance killed and restarted mid-burst, and with Redis
 * stopped mid-burst in each mode (`quotaWhenRedisDown`).
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, get, HAS_REDIS, RedisProcess, type ServeProcess, serveProcess, sleep } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

if (!HAS_REDIS) console.warn('skipping the shared quota tests: they need redis-server (apt install redis-server)');

const QUOTA = 600;
const SENT = 1500;
/** The largest lease at this quota (1/32 of what is left, src/server/shared-counts.ts): what an instance killed with its lease can cost. */
const LEASE = Math.ceil(QUOTA / 32);
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/** `n` requests of `key`, 32 at a time, request i to the instance `pick(i)` names (read at send time); `during` before each. */
async function burst(
  pick: (i: number) => number,
  key: string,
  n: number,
  during?: (sent: number) => Promise<void> | void,
): Promise<Record<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const statuses: Record<number, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await during?.(i);
      let status: number;
      try {
        status = (await get(pick(i), `/8.8.${(i >> 8) & 255}.${i & 255}?api-key=${key}`, agent)).status;
      } catch {
        // The instance killed under this request.
        status = 0;
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

describe.skipIf(!HAS_REDIS)('a quota shared through Redis, under a burst', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-quota-'));
  const keys = Array.from({ length: 12 }, (_, i) => ({ key: `quota-key-${String(i).padStart(4, '0')}`, plan: 'paid', quota: QUOTA }));
  let redis: RedisProcess;
  const started: ServeProcess[] = [];
  const serve = async (more: string[] = []) => {
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
      ...more,
    ]);
    started.push(s);
    return s;
  };
  let fleet: ServeProcess[] = [];
  const total = async (key: string) => {
    const client = new Redis(redis.port, '127.0.0.1');
    try {
      return Number((await client.hget(`{iprecord}:counts:${digest(key)}`, 'total')) ?? 0);
    } finally {
      client.disconnect();
    }
  };

  beforeAll(async () => {
    redis = new RedisProcess(await freePort(), dir);
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys }));
    await redis.start();
    fleet = await Promise.all([serve(), serve(), serve()]);
  });

  afterAll(() => {
    for (const s of started) s.child.kill('SIGKILL');
    redis.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['evenly', [1, 1, 1]],
    ['all to one instance', [1, 0, 0]],
    ['60/30/10', [6, 3, 1]],
    ['half and half, one idle', [1, 1, 0]],
  ] as const)(
    'answers at most the quota, split %s, and what it answered is counted once',
    async (split, weights) => {
      const key = keys[['evenly', 'all to one instance', '60/30/10', 'half and half, one idle'].indexOf(split)].key;
      const cycle = weights.flatMap((w, k) => Array.from({ length: w }, () => k));
      const got = await burst((i) => fleet[cycle[i % cycle.length]].port, key, SENT);
      console.log(`quota ${QUOTA}, ${SENT} requests split ${split}: ${JSON.stringify(got)}`);
      // Leases are reserved in Redis before they answer: never past the quota while every instance runs.
      expect(got[200]).toBeLessThanOrEqual(QUOTA);
      // Refused only once what is left is held as other instances' leases, at most one each.
      expect(got[200]).toBeGreaterThanOrEqual(QUOTA - 2 * LEASE);
      expect((got[200] ?? 0) + (got[403] ?? 0)).toBe(SENT);
      // Sent within two syncs, counted once.
      await sleep(2500);
      expect(await total(key)).toBe(got[200]);
    },
    60_000,
  );

  it('answers the whole quota from a second instance once the first went quiet: the lease it held goes back', async () => {
    const key = keys[7].key;
    const first = await burst(() => fleet[0].port, key, QUOTA / 2);
    expect(first[200]).toBe(QUOTA / 2);
    await until(async () => (await redis.leasesHeld(key)) === 0, 'the quiet instance to give back its lease');
    const second = await burst(() => fleet[1].port, key, SENT - QUOTA / 2);
    expect(second[200]).toBe(QUOTA / 2);
    expect(second[403]).toBe(SENT - QUOTA);
  });

  it('a quota key whose Redis key is of another type is answered as the operator chose for Redis away, never as one quota per instance', async () => {
    const client = new Redis(redis.port, '127.0.0.1');
    const [shut, spill] = [keys[8].key, keys[9].key];
    try {
      for (const key of [shut, spill]) await client.set(`{iprecord}:counts:${digest(key)}`, 'not a hash');
      const closed = await Promise.all([serve(['--quota-when-redis-down', 'closed']), serve(['--quota-when-redis-down', 'closed'])]);
      const got = await burst((i) => closed[i % 2].port, shut, SENT);
      console.log(`quota ${QUOTA}, ${SENT} requests of a key whose Redis key is a string, closed: ${JSON.stringify(got)}`);
      expect(got).toEqual({ 503: SENT });
      for (const s of closed) expect(s.err()).toMatch(/is not a count hash; .* answered 503 meanwhile \(quotaWhenRedisDown: closed\)/);
      // open: as each instance counts (at most the quota each), as when Redis is away; the key's removal shares it again.
      const spilled = await burst((i) => fleet[i % 2].port, spill, SENT);
      console.log(`the same, open: ${JSON.stringify(spilled)}`);
      expect(spilled[200]).toBeLessThanOrEqual(2 * QUOTA);
      expect(spilled[200]).toBeGreaterThan(QUOTA);
      for (const s of closed) s.child.kill('SIGKILL');
    } finally {
      client.disconnect();
    }
  });

  it('passes the quota by at most the lease of an instance killed mid-burst and restarted', async () => {
    const key = keys[4].key;
    const ports = fleet.map((s) => s.port);
    const got = await burst(
      (i) => ports[i % 3],
      key,
      SENT,
      async (sent) => {
        if (sent !== 300) return;
        fleet[1].child.kill('SIGKILL');
        fleet[1] = await serve();
        ports[1] = fleet[1].port;
      },
    );
    console.log(`quota ${QUOTA}, ${SENT} requests, an instance killed after 300: ${JSON.stringify(got)}; bound ${LEASE}`);
    expect(LEASE).toBeLessThan(QUOTA * 0.05);
    expect(got[200]).toBeLessThanOrEqual(QUOTA + LEASE);
    expect(got[200]).toBeGreaterThanOrEqual(QUOTA - 3 * LEASE);
  });

  it('with Redis stopped mid-burst: closed answers from the leases held, then 503; open answers as each instance counts, said once', async () => {
    const closed = await Promise.all([serve(['--quota-when-redis-down', 'closed']), serve(['--quota-when-redis-down', 'closed'])]);
    const open = await Promise.all([serve(), serve()]);
    // Each set takes its leases while Redis answers.
    for (const [set, key] of [
      [closed, keys[5].key],
      [open, keys[6].key],
    ] as const)
      for (const s of set) expect((await get(s.port, `/1.1.1.1?api-key=${key}`)).status).toBe(200);
    await redis.stop();
    try {
      const shut = await burst((i) => closed[i % 2].port, keys[5].key, 200);
      console.log(`Redis stopped, closed: ${JSON.stringify(shut)}`);
      // Two requests before, and what was left of two leases at most.
      expect((shut[200] ?? 0) + 2).toBeLessThanOrEqual(2 * LEASE);
      expect(shut[503]).toBeGreaterThan(0);
      const spilled = await burst((i) => open[i % 2].port, keys[6].key, 2 * QUOTA);
      console.log(`Redis stopped, open: ${JSON.stringify(spilled)}`);
      // Each instance answers up to the quota as it counts alone.
      expect(spilled[200]).toBeGreaterThan(LEASE * 2);
      expect(spilled[200]).toBeLessThanOrEqual(2 * QUOTA);
      for (const s of open) expect(s.err().match(/quota keys are answered as this instance counts them/g)?.length, s.err()).toBe(1);
    } finally {
      await redis.start();
    }
    for (const s of [...closed, ...open]) s.child.kill('SIGKILL');
  });
});
