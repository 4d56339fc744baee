/**
 * compose.yaml, as far as it can be checked without Docker (not on this
 * machine): read as Compose reads it (YAML with merge keys), its Redis
 * service's command run as a redis-server process and each iprecord
 * service's command as an `iprecord serve` process (container host names
 * and paths mapped to this machine's, the image's /data a folder here),
 * the two sharing one quota; then the updater's loop as a process, whose
 * first build both instances answer from.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../helpers/env.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';
import { freePort, get, HAS_REDIS, RedisProcess, type ServeProcess, serveProcess, sleep } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';

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
/** A key without a quota, for the requests after the first one's is spent. */
const OTHER_KEY = 'compose-key-0002';
const QUOTA = 100;

describe.skipIf(!HAS_REDIS)('compose.yaml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-compose-'));
  const started: ServeProcess[] = [];
  /** The image's /data. */
  const data = join(dir, 'data');
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
    writeFileSync(
      join(dir, 'keys.json'),
      JSON.stringify({
        keys: [
          { key: KEY, plan: 'paid', quota: QUOTA },
          { key: OTHER_KEY, plan: 'paid' },
        ],
      }),
    );
    // The image's /data (XDG_DATA_HOME), its dataset directory made by the Dockerfile and empty until an update.
    const xdg = /ENV .*XDG_DATA_HOME=(\S+)/.exec(dockerfile)![1];
    expect(dockerfile).toContain(`mkdir -p ${xdg}/iprecord`);
    mkdirSync(join(data, 'iprecord'), { recursive: true });
    for (const [, s] of iprecord) {
      // The keys file where the service mounts it, Redis where the service names it, this machine's loopback for 0.0.0.0.
      const keysAt = s.volumes!.map((v) => v.split(':')).find(([from]) => from === './keys.json')![1];
      const args = s.command
        .slice(1)
        .map((a) =>
          a === keysAt
            ? join(dir, 'keys.json')
            : a === '0.0.0.0'
              ? '127.0.0.1'
              : a.replace(`//${redisName}:6379`, `//127.0.0.1:${redis!.port}`),
        );
      const metrics = args.indexOf('--metrics-port');
      args[metrics + 1] = '0';
      started.push(await serveProcess([...args, '--access-log', 'off'], { PORT: '0', XDG_DATA_HOME: data }));
    }
    for (const s of started) expect((await get(s.port, '/healthz')).status).toBe(200);

    // 60 requests on the first; once it has given back the lease it holds (idle for a sync), 60 on the second: 40 within the quota.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await get(started[0].port, `/8.8.8.8?api-key=${KEY}`)).status);
    await until(async () => (await redis!.leasesHeld(KEY)) === 0, 'the first instance to give back its lease');
    for (let i = 0; i < 60; i++) statuses.push((await get(started[1].port, `/8.8.8.8?api-key=${KEY}`)).status);
    expect(statuses.filter((s) => s === 200).length).toBe(QUOTA);
    expect(statuses.slice(100).every((s) => s === 403)).toBe(true);
  });

  it('runs one updater beside them on the data they share: both answer from its first build, with no restart', async () => {
    expect(started.length).toBe(2);
    const updater = Object.values(compose.services).find((s) => s.command.join(' ').includes('iprecord update'));
    expect(updater, 'an updater service').toBeDefined();
    const volume = (s: Service) => s.volumes?.find((v) => v.endsWith(':/data'));
    for (const s of Object.values(compose.services).filter((s) => s.command[0] === 'iprecord')) {
      expect(volume(s)).toBe(volume(updater!));
      // They read the image's dataset directory (no --data): the one the updater fills.
      expect(s.command).not.toContain('--data');
    }
    expect(updater!.ports).toBeUndefined();
    const [shell, flag, loop] = updater!.command;
    expect(loop).toMatch(/^while true; do iprecord update; sleep \d+; done$/);
    const listed = '185.220.101.1';
    const isTor = async (port: number) =>
      (JSON.parse((await get(port, `/${listed}?api-key=${OTHER_KEY}`)).body) as { threat: { is_tor: boolean } }).threat.is_tor;
    for (const s of started) expect(await isTor(s.port)).toBe(false);
    // The loop as a process: its update on a configuration of local files (the public lists are not reached from
    // here), a second's sleep for six hours'.
    writeFileSync(join(dir, 'tor.txt'), `${listed}\n`);
    writeFileSync(
      join(dir, 'feeds.json'),
      JSON.stringify({
        feeds: [{ name: 'tor', source: join(dir, 'tor.txt'), format: 'list', categories: ['tor'] }],
        sources: SMALL_SOURCES,
      }),
    );
    const script = loop
      .replace(
        'iprecord update',
        `'${process.execPath}' '${join(ROOT, 'dist', 'cli.js')}' update --quiet --config '${join(dir, 'feeds.json')}'`,
      )
      .replace(/sleep \d+/, 'sleep 1');
    const child = spawn(shell, [flag, script], { env: { ...process.env, XDG_DATA_HOME: data }, stdio: 'ignore', detached: true });
    try {
      for (const s of started) {
        const deadline = Date.now() + 30_000;
        while (!(await isTor(s.port)) && Date.now() < deadline) await sleep(200);
        expect(await isTor(s.port), `the instance on ${s.port} answers from the updater's build`).toBe(true);
        expect(s.child.exitCode).toBeNull();
      }
    } finally {
      process.kill(-(child.pid as number), 'SIGKILL');
    }
  });
});
