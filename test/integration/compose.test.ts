/**
 * compose.yaml, as far as it can be checked without Docker (not on this
 * machine): read as Compose reads it (YAML with merge keys), its Redis
 * service's command run as a redis-server process and each iprecord
 * service's command as an `iprecord serve` process (container host names
 * and paths mapped to this machine's), the two sharing one quota.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../helpers/env.js';
import { freePort, get, HAS_REDIS, RedisProcess, type ServeProcess, serveProcess, sleep } from '../helpers/redis.js';

if (!HAS_REDIS) console.warn('skipping the compose.yaml test: it needs redis-server (apt install redis-server)');

interface Service {
  readonly command: string[];
  readonly volumes?: string[];
  readonly ports?: string[];
  readonly depends_on?: string[];
  readonly build?: string;
}
const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const KEY = 'compose-key-0001';
const QUOTA = 100;

describe.skipIf(!HAS_REDIS)('compose.yaml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-compose-'));
  const started: ServeProcess[] = [];
  let redis: RedisProcess | null = null;
  afterAll(() => {
    for (const s of started) s.child.kill('SIGKILL');
    redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs two instances of the image sharing one Redis: one quota across them', async () => {
    const iprecord = Object.entries(compose.services).filter(([, s]) => s.command[0] === 'iprecord');
    expect(iprecord.length).toBe(2);
    const [redisName, redisService] = Object.entries(compose.services).find(([, s]) => s.command[0] === 'redis-server')!;
    // Redis keeps its data across restarts; each instance is the image built here, after Redis, on the image's port.
    expect(redisService.command).toContain('--appendonly');
    const port = /ENV .*PORT=(\d+)/.exec(dockerfile)![1];
    for (const [, s] of iprecord) {
      expect(s.build).toBe('.');
      expect(s.depends_on).toContain(redisName);
      expect(s.ports?.[0]).toMatch(new RegExp(`:${port}$`));
    }

    redis = new RedisProcess(await freePort(), dir, redisService.command.slice(1));
    await redis.start();
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys: [{ key: KEY, plan: 'paid', quota: QUOTA }] }));
    for (const [, s] of iprecord) {
      // The keys file where the service mounts it, Redis where the service names it, this machine's loopback for 0.0.0.0.
      const keysAt = s.volumes!.map((v) => v.split(':')).find(([from]) => from === './keys.json')![1];
      const args = s.command.slice(1).map((a) => (a === keysAt ? join(dir, 'keys.json') : a === '0.0.0.0' ? '127.0.0.1' : a.replace(`//${redisName}:6379`, `//127.0.0.1:${redis!.port}`)));
      const metrics = args.indexOf('--metrics-port');
      args[metrics + 1] = '0';
      started.push(await serveProcess([...args, '--access-log', 'off'], { PORT: '0' }));
    }
    for (const s of started) expect((await get(s.port, '/healthz')).status).toBe(200);

    // 60 requests on the first, two seconds and a half (two syncs and more), then 60 on the second: 40 of them within the quota.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await get(started[0].port, `/8.8.8.8?api-key=${KEY}`)).status);
    await sleep(2500);
    for (let i = 0; i < 60; i++) statuses.push((await get(started[1].port, `/8.8.8.8?api-key=${KEY}`)).status);
    expect(statuses.filter((s) => s === 200).length).toBe(QUOTA);
    expect(statuses.slice(100).every((s) => s === 403)).toBe(true);
  }, 60_000);
});
