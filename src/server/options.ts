/**
 * The server's options (`createServer()`, `iprecord serve`) and their
 * checks, before anything is opened.
 */

import type { Engine } from '../engine/engine.js';
import { InvalidOptionsError } from '../contract/errors.js';
import { checkOptionNames, type OpenOptions } from '../engine/options.js';
import type { TrustProxy } from './client.js';
import type { KeysConfig } from './keys.js';
import { isRedisUrl } from './shared-counts.js';

export interface ServerOptions {
  /** An opened engine to answer from (closing it stays with the caller). Default: one opened with `open`. */
  engine?: Engine;
  /** Options of the engine the server opens when `engine` is not given. */
  open?: OpenOptions;
  /**
   * API keys: a keys file's path or its parsed content. Without keys every
   * request is answered, as the Business plan, and `count` counts them all.
   */
  keys?: string | KeysConfig;
  /** Where the keys' counts are saved (every minute and on `close()`), so that `count` survives a restart. */
  countsFile?: string;
  /**
   * A Redis (or Valkey) URL, `redis://host:port/db` (`rediss://` over
   * TLS), where every instance keeps the keys' counts: one `count` and one
   * quota per key across instances (`docs/server.md`). Instead of
   * `countsFile`.
   */
  counts?: string;
  /**
   * How often each instance exchanges its counts with Redis (`counts`), in
   * ms: another instance's requests reach `count` and quotas within about
   * two of these. @default 1000
   */
  countsSyncEvery?: number;
  /**
   * With `counts` in Redis, a key with a quota is answered from leases:
   * shares of what is left of its quota that an instance takes from Redis
   * in one step (1/32 of what is left, so they shrink as the quota runs
   * out) and answers from alone. This is the largest lease, and so what a
   * key can pass its quota by for each instance that stops without sending
   * its counts (`docs/server.md`). @default 1000
   */
  quotaLease?: number;
  /**
   * What a key with a quota gets while Redis does not answer: `open`
   * (default) is answered as long as this instance's own counts allow it,
   * said once; `closed` is answered from the lease it holds, then refused
   * with a 503 until Redis answers.
   */
  quotaWhenRedisDown?: 'open' | 'closed';
  /**
   * Whose address `GET /` looks up: false (default) the socket's peer; true
   * the first address of `Forwarded` / `X-Forwarded-For`; a number n the
   * address n proxies back (1: the last entry, added by the one proxy in front).
   */
  trustProxy?: TrustProxy;
  /**
   * Paths the API is also served under, as the service's EU base address
   * (`['/eu']`: `/eu/8.8.8.8` answers as `/8.8.8.8`). The root is always served.
   */
  basePaths?: readonly string[];
  /** Host names answered (any port); others get 404. Default: any host. */
  hosts?: readonly string[];
  /** Largest `POST /bulk` body in bytes (413 above). @default 65536 */
  bodyLimit?: number;
  /** Where access log lines go (`process.stdout`, a file stream). Default: none. */
  accessLog?: NodeJS.WritableStream | null;
  /** Time allowed to send the request headers, in ms. @default 10000 */
  headersTimeout?: number;
  /** Time allowed to send the whole request, in ms. @default 30000 */
  requestTimeout?: number;
  /** Time an idle keep-alive connection stays open, in ms. @default 5000 */
  keepAliveTimeout?: number;
  /**
   * How often the dataset file is checked to be the bytes answered from
   * (a stat; `engine.checkData()`), in ms. @default 5000
   */
  checkDataEvery?: number;
  /** How often the dataset is checked whole on a worker thread (`engine.verifyInBackground()`), in ms. @default 21600000 (6 hours) */
  verifyDataEvery?: number;
  /**
   * Port of the metrics (`GET /metrics`, Prometheus's text format:
   * `docs/server.md`), served on `listen()`'s host apart from the API;
   * 0: a free port (`server.metrics`). @default none
   */
  metricsPort?: number;
  /** @internal A worker of `iprecord serve --workers`: counts go to the cluster's primary (cluster.ts), and metrics too. */
  clusterWorker?: boolean;
}

export interface Config {
  bodyLimit: number;
  trustProxy: TrustProxy;
  basePaths: string[];
  hosts: Set<string> | null;
}

/** Every option `createServer()` takes. */
const SERVER_OPTION_NAMES: readonly string[] = [
  'engine',
  'open',
  'keys',
  'countsFile',
  'counts',
  'countsSyncEvery',
  'quotaLease',
  'quotaWhenRedisDown',
  'trustProxy',
  'basePaths',
  'hosts',
  'bodyLimit',
  'accessLog',
  'headersTimeout',
  'requestTimeout',
  'keepAliveTimeout',
  'checkDataEvery',
  'verifyDataEvery',
  'metricsPort',
  'clusterWorker',
] satisfies readonly (keyof ServerOptions)[];

export function checkOptions(o: ServerOptions): Config {
  if (o === null || typeof o !== 'object') throw new InvalidOptionsError('Server options must be an object.');
  checkOptionNames(o, SERVER_OPTION_NAMES);
  const bodyLimit = o.bodyLimit ?? 64 * 1024;
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 2)
    throw new InvalidOptionsError('Option "bodyLimit" must be a whole number of bytes (at least 2).');
  const trustProxy = o.trustProxy ?? false;
  if (typeof trustProxy !== 'boolean' && !(Number.isSafeInteger(trustProxy) && trustProxy >= 0)) {
    throw new InvalidOptionsError('Option "trustProxy" must be true, false or a number of proxies.');
  }
  const strings = (v: unknown, name: string): readonly string[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x !== ''))
      throw new InvalidOptionsError(`Option "${name}" must be an array of strings.`);
    return v;
  };
  const e = o.engine as Partial<Engine> | null | undefined;
  if (
    e !== undefined &&
    (typeof e?.lookupJson !== 'function' ||
      typeof e.writeJson !== 'function' ||
      typeof e.reload !== 'function' ||
      typeof e.info !== 'function')
  )
    throw new InvalidOptionsError('Option "engine" must be an engine from open() or openSync().');
  if (o.open !== undefined && (o.open === null || typeof o.open !== 'object'))
    throw new InvalidOptionsError('Option "open" must be the options of open().');
  if (o.countsFile !== undefined && (typeof o.countsFile !== 'string' || o.countsFile === ''))
    throw new InvalidOptionsError('Option "countsFile" must be a path.');
  if (o.counts !== undefined && (typeof o.counts !== 'string' || !isRedisUrl(o.counts)))
    throw new InvalidOptionsError('Option "counts" must be a redis://, rediss:// or valkey:// URL (a file is "countsFile").');
  if (o.counts !== undefined && o.countsFile !== undefined)
    throw new InvalidOptionsError('Options "counts" and "countsFile" cannot both be given: counts are kept in Redis or in a file.');
  const basePaths = (strings(o.basePaths, 'basePaths') ?? []).map((p) => {
    if (typeof p !== 'string' || !/^(\/[\w.~-]+)+\/?$/.test(p))
      throw new InvalidOptionsError(`Base path ${JSON.stringify(p)} must look like /eu (letters, digits, . _ ~ -).`);
    return p.replace(/\/$/, '');
  });
  // Longer paths first: /eu/v1 before /eu.
  basePaths.sort((a, b) => b.length - a.length);
  for (const t of [
    'headersTimeout',
    'requestTimeout',
    'keepAliveTimeout',
    'checkDataEvery',
    'verifyDataEvery',
    'countsSyncEvery',
  ] as const) {
    const v = o[t];
    if (v !== undefined && !(Number.isSafeInteger(v) && v > 0))
      throw new InvalidOptionsError(`Option "${t}" must be a positive number of milliseconds.`);
  }
  if (o.quotaLease !== undefined && !(Number.isSafeInteger(o.quotaLease) && o.quotaLease > 0))
    throw new InvalidOptionsError('Option "quotaLease" must be a positive whole number of requests.');
  if (o.quotaWhenRedisDown !== undefined && o.quotaWhenRedisDown !== 'open' && o.quotaWhenRedisDown !== 'closed')
    throw new InvalidOptionsError('Option "quotaWhenRedisDown" must be "open" or "closed".');
  if ((o.quotaLease !== undefined || o.quotaWhenRedisDown !== undefined) && (o.counts === undefined || !isRedisUrl(o.counts)))
    throw new InvalidOptionsError(
      'Options "quotaLease" and "quotaWhenRedisDown" are for counts in Redis (counts: "redis://host:port/db").',
    );
  const log = o.accessLog as { write?: unknown } | null | undefined;
  if (log != null && typeof log.write !== 'function')
    throw new InvalidOptionsError('Option "accessLog" must be a writable stream (process.stdout, a file stream) or null.');
  if (o.metricsPort !== undefined && !(Number.isSafeInteger(o.metricsPort) && o.metricsPort >= 0 && o.metricsPort < 65536))
    throw new InvalidOptionsError('Option "metricsPort" must be a port number (0 to 65535).');
  const hostList = strings(o.hosts, 'hosts');
  const hosts = hostList === undefined ? null : new Set(hostList.map((h) => h.toLowerCase()));
  return { bodyLimit, trustProxy, basePaths, hosts };
}
