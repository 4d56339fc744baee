/**
 * A real redis-server for the shared counts tests, on a free loopback port,
 * its append-only file in a folder of the test's, and `iprecord serve`
 * processes started from the built CLI.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ROOT } from './env.js';

/** Whether redis-server is installed; IPRECORD_REQUIRE_REDIS=1 (CI) makes its absence an error. */
export const HAS_REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!HAS_REDIS && process.env.IPRECORD_REQUIRE_REDIS === '1')
  throw new Error('IPRECORD_REQUIRE_REDIS=1: redis-server is required (apt install redis-server)');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A free loopback port. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** redis-server on `port`, its data in `dir`: started (resolving once it answers) and stopped (SIGTERM: it writes what it holds). */
export class RedisProcess {
  private child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly args: readonly string[] = ['--appendonly', 'yes', '--appendfsync', 'always'],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      [...this.args, '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''],
      { stdio: 'ignore' },
    );
    for (let i = 0; ; i++) {
      const client = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.ping();
        return;
      } catch (e) {
        if (i > 100) throw e;
        await sleep(50);
      } finally {
        client.disconnect();
      }
    }
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (c === null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGTERM');
    await exited;
    this.child = null;
  }

  kill(): void {
    this.child?.kill('SIGKILL');
  }

  /** What the leases of `key` hold in Redis, over every instance (`src/server/shared-counts.ts`). */
  async leasesHeld(key: string): Promise<number> {
    const client = new Redis(this.port, '127.0.0.1');
    try {
      const leases = await client.hgetall(`{iprecord}:leases:${createHash('sha256').update(key).digest('hex')}`);
      return Object.entries(leases).reduce((n, [field, held]) => (field.endsWith(':until') ? n : n + Number(held)), 0);
    } finally {
      client.disconnect();
    }
  }
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** What it wrote to standard error so far. */
  err(): string;
}

/** `iprecord serve` (the built CLI) with these arguments; resolves once it listens. */
export async function serveProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, IPRECORD_QUIET: '1', ...env },
  });
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, port, err: () => err };
}

/** GET a path of a local server: its status and body, over `agent`'s connections (kept alive: `load`), else one of its own. */
export const get = (port: number, path: string, agent?: Agent) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: agent ?? false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });

/**
 * `n` lookups under `key`, spread over the ports in turn, 16 at a time
 * (`during` called before each): the statuses counted. Its connections are
 * kept alive while it runs and closed at its end: one left idle past the
 * server's keep-alive timeout (5 s) until a later load could be closed by
 * the server as it was sent a request again (ECONNRESET).
 */
export async function load(
  ports: readonly number[],
  key: string,
  n: number,
  during?: (sent: number) => Promise<void> | void,
): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await during?.(i);
      const { status } = await get(ports[i % ports.length], `/8.8.${(i >> 8) & 255}.${i & 255}?api-key=${key}`, agent);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}
