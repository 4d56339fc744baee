/**
 * `iprecord serve`: the service's HTTP API over local data, until SIGTERM
 * or SIGINT (graceful: requests in flight finish, counts are saved).
 * SIGHUP reloads the data; with --data, so does a change of the directory.
 */

import cluster from 'node:cluster';
import { createWriteStream, openSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onPrimaryStop, runPrimary } from '../../server/cluster.js';
import { ensureDataset } from '../../dataset/locate.js';
import { holdsBuild } from '../../dataset/store.js';
import type { IprecordServer, ServerOptions } from '../../server/index.js';
import { KeyStore } from '../../server/keys.js';
import { isRedisUrl, redisLabel } from '../../server/shared-counts.js';
import type { OpenOptions } from '../../engine/options.js';
import { atMostFourACore, commandOptions, dataDir, options, type UsageError } from '../args.js';
import { warnMissingLists } from '../../engine/inside.js';

export const USAGE = `Usage: iprecord serve [options]

Answers the hosted service's HTTP API (GET /, /<ip>, /<field>, /<ip>/<field>,
/<ip>/threat, POST /bulk, ?fields=, ?callback=) from local data, plus
GET /healthz and the flag images under /flags/. See docs/server.md.

Options:
  --port n           port; default 8080 ($PORT)
  --host addr        address to listen on; default 127.0.0.1 (0.0.0.0 for all)
  --data dir         a dataset directory, watched for new builds; default $IPRECORD_DATA, else the user's when it is there
                     (before its first build, the default data answers until iprecord update swaps one in)
  --keys file        API keys (JSON); without it every request is answered as Business
  --counts where     where the keys' 24-hour counts are kept: a file (default <keys file>.counts.json),
                     or redis://host:port/db shared by every instance (one count and quota per key)
  --counts-sync-every s  with Redis: how often counts are exchanged, in seconds; default 1
  --quota-lease n    with Redis: the most requests of a key's quota an instance takes at once; default 1000
  --quota-when-redis-down m  open (default: quota keys answered as this instance counts) or closed (503)
  --trust-proxy v    whose address GET / looks up: false (the socket's peer, default),
                     true (the first Forwarded / X-Forwarded-For address) or n (n proxies back)
  --base-path p,q    also serve the API under these paths (the EU base address: /eu)
  --hosts a,b        answer only these host names (default: any)
  --flag-base url    base URL of the records' flag field (http://host:port/flags to use this server)
  --body-limit n     largest POST /bulk body in bytes; default 65536
  --access-log dest  a file, - (standard output, default) or off
  --memory m         mmap (default) or read
  --workers n        server processes sharing the port (node:cluster); default 1, at most 4 a core
  --metrics-port n   serve GET /metrics (Prometheus's text format) on this port of --host; default none
  --check-data-every s  how often the dataset file is checked to be the bytes answered from (a stat), in seconds; default 5
  -h, --help         this help

Signals: SIGTERM/SIGINT stop gracefully; SIGHUP reloads the data.
Exit codes: 0 stopped by a signal, 2 usage, data or listening error.
`;

const NAMES = [
  'port',
  'host',
  'data',
  'keys',
  'counts',
  'trust-proxy',
  'base-path',
  'hosts',
  'flag-base',
  'body-limit',
  'access-log',
  'memory',
  'workers',
  'metrics-port',
  'check-data-every',
  'counts-sync-every',
  'quota-lease',
  'quota-when-redis-down',
] as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = commandOptions('serve', USAGE, options(argv, NAMES));
  if (typeof parsed === 'number') return parsed;
  const serve = serveOptions(parsed.o, parsed.usage);
  if (typeof serve === 'number') return serve;
  if (serve.workers > 1 && cluster.isPrimary) return servePrimary(serve);
  return untilStopped(await serveHere(serve));
}

/** What `iprecord serve` was asked: the server's options and where to listen, its workers, data and counts. */
interface Serve {
  readonly config: ServerOptions;
  readonly port: number;
  readonly host: string;
  readonly workers: number;
  readonly data: string | undefined;
  readonly keys: string | undefined;
  readonly countsFile: string | undefined;
  readonly redis: string | undefined;
  readonly metricsPort: string | undefined;
}

/** The command's options checked and turned into the server's; the usage error's exit code where one is wrong. */
function serveOptions(o: Record<string, string>, usage: UsageError): Serve | number {
  const portText = o.port ?? process.env.PORT ?? '8080';
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) return usage(`--port must be a port number, not ${portText}`);
  let trustProxy: boolean | number = false;
  if (o['trust-proxy'] !== undefined) {
    const t = o['trust-proxy'];
    if (t === 'true' || t === 'false') trustProxy = t === 'true';
    else if (/^\d+$/.test(t)) trustProxy = Number(t);
    else return usage(`--trust-proxy must be true, false or a number, not ${t}`);
  }
  if (o.memory !== undefined && o.memory !== 'mmap' && o.memory !== 'read') return usage(`--memory must be mmap or read, not ${o.memory}`);
  if (o['body-limit'] !== undefined && !/^\d+$/.test(o['body-limit']))
    return usage(`--body-limit must be a number of bytes, not ${o['body-limit']}`);
  if (o.workers !== undefined && !/^[1-9]\d*$/.test(o.workers))
    return usage(`--workers must be a whole number of at least 1, not ${o.workers}`);
  const workers = o.workers === undefined ? 1 : atMostFourACore(Number(o.workers), '--workers', 'server processes', cluster.isPrimary);
  // Intervals in seconds (a millisecond at least), as milliseconds.
  const badSeconds = (['check-data-every', 'counts-sync-every'] as const).find(
    (n) => o[n] !== undefined && !(/^\d+(\.\d+)?$/.test(o[n]) && Number(o[n]) >= 0.001),
  );
  if (badSeconds !== undefined) return usage(`--${badSeconds} must be a number of seconds above 0, not ${o[badSeconds]}`);
  const ms = (v: string | undefined) => (v === undefined ? undefined : Math.round(Number(v) * 1000));
  const checkEvery = ms(o['check-data-every']);
  const syncEvery = ms(o['counts-sync-every']);
  const metricsPort = o['metrics-port'];
  if (metricsPort !== undefined && (!/^\d+$/.test(metricsPort) || Number(metricsPort) > 65535))
    return usage(`--metrics-port must be a port number, not ${metricsPort}`);
  const list = (v: string | undefined) =>
    v === undefined
      ? undefined
      : v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);

  const redis = o.counts !== undefined && isRedisUrl(o.counts) ? o.counts : undefined;
  if (redis !== undefined) {
    try {
      redisLabel(redis);
    } catch (e) {
      return usage(`--counts: ${(e as Error).message}`);
    }
  }
  for (const n of ['counts-sync-every', 'quota-lease', 'quota-when-redis-down'] as const)
    if (o[n] !== undefined && redis === undefined) return usage(`--${n} is for counts in Redis (--counts redis://host:port/db)`);
  if (o['quota-lease'] !== undefined && !/^[1-9]\d*$/.test(o['quota-lease']))
    return usage(`--quota-lease must be a whole number of at least 1, not ${o['quota-lease']}`);
  const whenDown = o['quota-when-redis-down'];
  if (whenDown !== undefined && whenDown !== 'open' && whenDown !== 'closed')
    return usage(`--quota-when-redis-down must be open or closed, not ${whenDown}`);
  const countsFile = redis !== undefined ? undefined : (o.counts ?? (o.keys === undefined ? undefined : `${o.keys}.counts.json`));
  // Named, else the user's directory when it is there, even before its first build (an updater beside this server
  // fills it: the default data answers until a build is swapped in).
  const data = dataDir(o.data, true);
  const open: OpenOptions = {
    ...(data === undefined ? {} : { data, watch: true }),
    ...(o.memory === undefined ? {} : { memory: o.memory as 'mmap' | 'read' }),
    ...(o['flag-base'] === undefined ? {} : { flagBaseUrl: o['flag-base'] }),
  };
  const logTo = o['access-log'] ?? '-';
  let accessLog: NodeJS.WritableStream | null = null;
  if (logTo === '-') accessLog = process.stdout;
  else if (logTo !== 'off') {
    // Opened here, so that a file that cannot be written is said before the server starts, not thrown by it later.
    try {
      accessLog = createWriteStream(logTo, { fd: openSync(logTo, 'a') });
    } catch (e) {
      process.stderr.write(`iprecord serve: cannot write the access log ${logTo}: ${(e as Error).message}\n`);
      return 2;
    }
  }
  const config: ServerOptions = {
    open,
    trustProxy,
    accessLog,
    ...(o.keys === undefined ? {} : { keys: o.keys }),
    ...(countsFile === undefined ? {} : { countsFile }),
    ...(redis === undefined ? {} : { counts: redis }),
    ...(o['base-path'] === undefined ? {} : { basePaths: list(o['base-path']) }),
    ...(o.hosts === undefined ? {} : { hosts: list(o.hosts) }),
    ...(o['body-limit'] === undefined ? {} : { bodyLimit: Number(o['body-limit']) }),
    ...(metricsPort === undefined ? {} : { metricsPort: Number(metricsPort) }),
    ...(checkEvery === undefined ? {} : { checkDataEvery: checkEvery }),
    ...(syncEvery === undefined ? {} : { countsSyncEvery: syncEvery }),
    ...(o['quota-lease'] === undefined ? {} : { quotaLease: Number(o['quota-lease']) }),
    ...(whenDown === undefined ? {} : { quotaWhenRedisDown: whenDown }),
  };
  return { config, port: Number(portText), host: o.host ?? '127.0.0.1', workers, data, keys: o.keys, countsFile, redis, metricsPort };
}

/** The cluster's primary: it holds the keys' counts (unless Redis does: each worker then counts there); the workers answer requests. */
async function servePrimary({ workers, keys: keysFile, countsFile, redis, metricsPort, host }: Serve): Promise<number> {
  const keys = keysFile === undefined || redis !== undefined ? KeyStore.none() : KeyStore.read(keysFile);
  if (countsFile !== undefined) keys.restoreCounts(countsFile);
  process.stderr.write(`iprecord serve: primary ${process.pid}, ${workers} workers\n`);
  // The default dataset compiled once here (when install scripts did not run), not by every worker at once.
  ensureDataset({ geo: null, asn: null, anonymous: [] });
  // The workers' metrics, added up, served here (each worker keeps its own).
  let metrics: Server | null = null;
  if (metricsPort !== undefined) {
    const { clusterMetricsServer } = await import('../../server/metrics.js');
    metrics = clusterMetricsServer();
    const m = metrics;
    await new Promise<void>((resolve, reject) => m.once('error', reject).listen(Number(metricsPort), host, resolve));
    process.stderr.write(`iprecord serve: metrics on port ${(m.address() as AddressInfo).port}\n`);
  }
  const code = await runPrimary(workers, keys, countsFile, (line) => process.stderr.write(`iprecord serve: ${line}\n`));
  metrics?.close();
  return code;
}

/** A server on this process (alone, or a worker of the cluster), listening, with what it answers from said on standard error. */
async function serveHere({ config, port, host, data }: Serve): Promise<IprecordServer> {
  if (cluster.isWorker) {
    delete config.countsFile;
    config.clusterWorker = true;
  }
  // Imported here: the cluster's primary does without the engine (less memory of its own).
  const { createServer } = await import('../../server/index.js');
  const server = await createServer(config);
  server.engine.on('reload', ({ loadedAt }) => process.stderr.write(`iprecord serve: data reloaded (${loadedAt})\n`));
  server.engine.on('error', (e) => {
    if (server.engine.damaged === null) process.stderr.write(`iprecord serve: reload failed, serving the previous data: ${e.message}\n`);
  });
  server.engine.on('damaged', (e) => process.stderr.write(`iprecord serve: the data failed its check: ${e.message}\n`));
  const address = await server.listen(port, host);
  if (server.metrics !== null) process.stderr.write(`iprecord serve: metrics on port ${(server.metrics.address() as AddressInfo).port}\n`);
  const info = server.engine.info();
  warnMissingLists(server.engine);
  const at = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  process.stderr.write(
    `iprecord serve: ${cluster.isWorker ? `worker ${process.pid} ` : ''}listening on http://${at}:${address.port} (memory ${info.memory.mode}${config.keys === undefined ? ', no keys: every request answered as Business' : ''}${data === undefined ? '' : `, data ${data}`})\n`,
  );
  if (data !== undefined && !holdsBuild(data))
    process.stderr.write(`iprecord serve: ${data} holds no build yet: answering the default data until iprecord update swaps one in\n`);
  return server;
}

/** Answers until SIGTERM or SIGINT (or the primary's stop), reloading on SIGHUP; the exit code. */
function untilStopped(server: IprecordServer): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`iprecord serve: ${signal}, stopping\n`);
      server.close().then(
        () => {
          // A worker's IPC channel would keep it alive.
          if (cluster.isWorker && process.connected) process.disconnect();
          resolve(0);
        },
        (e: unknown) => {
          process.stderr.write(`iprecord serve: ${(e as Error).message}\n`);
          resolve(2);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    if (cluster.isWorker) onPrimaryStop(() => stop('stop from the primary'));
    process.on('SIGHUP', () => {
      server.reload().then(
        () => undefined,
        // Damaged data was said by the 'damaged' event: there is no previous data to serve.
        (e: unknown) => {
          if (server.engine.damaged === null)
            process.stderr.write(`iprecord serve: reload failed, serving the previous data: ${(e as Error).message}\n`);
        },
      );
    });
  });
}
