/**
 * The hosted service's HTTP API over a local engine (`iprecord/server`):
 *
 *   GET  /              record of the caller's address
 *   GET  /<ip>          record of an address
 *   GET  /<field>       one field of the caller's record
 *   GET  /<ip>/<field>  one field of an address's record
 *   GET  /<ip>/threat   the threat object
 *   POST /bulk          records of a JSON array of at most 100 addresses
 *   GET  /healthz       for load balancers
 *   GET  /flags/<cc>.png|.svg   the flag images records link to
 *   GET  /explain/<ip>  outside the service's API: the record and the evidence behind it (a request of the quota)
 *
 * `fields` and `callback` (JSONP) query parameters; `api-key` as a query
 * parameter or header when a keys file is given. Every answer goes through
 * the engine; this file only parses requests and writes responses.
 *
 * Over 300 lines: the route table and a request's one path through keys, counts and answers; the parts are in the files beside it.
 */

import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { open, type Engine } from '../engine/engine.js';
import { clientAddress } from './client.js';
import { Flags } from './flags.js';
import { type Account, KeyStore } from './keys.js';
import { WorkerLink } from './cluster.js';
import { SharedCounts, type QuotaAnswer } from './shared-counts.js';
import { checkOptions, type Config, type ServerOptions } from './options.js';
import { absolutePath, hostName, NO_QUERY, Op, parsePath, parseQuery, type Query, type Route } from './request.js';
import { AccessLog } from './log.js';
import { JSON_TYPE, MAX_BULK, MESSAGES, Responder, TEXT_TYPE, type Exchange } from './respond.js';
import { metricsServer, ServerMetrics, type Operation } from './metrics.js';
import { bulkJson, readBody } from './bulk.js';
import { publicExplanation } from './explain.js';

export type { KeyConfig, KeysConfig, Plan } from './keys.js';
export type { TrustProxy } from './client.js';
export type { ServerOptions } from './options.js';

export interface IprecordServer {
  /** The `node:http` server (already listening after `listen()`). */
  readonly http: Server;
  /** The metrics' server (`metricsPort`; listening after `listen()`), or null. */
  readonly metrics: Server | null;
  readonly engine: Engine;
  /** Starts listening; resolves with the bound address. @default port 8080, host 127.0.0.1 */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Reloads the engine's data; requests in flight finish on the old data. */
  reload(): Promise<void>;
  /** Writes the counts file now (when `countsFile` is set). */
  saveCounts(): void;
  /**
   * Stops accepting connections, lets requests in flight finish (at most
   * `graceMs`, then closes what is left), saves the counts, flushes the
   * log, and closes the engine if the server opened it.
   */
  close(graceMs?: number): Promise<void>;
}

const CALLBACK = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const LOOKUP_METHODS = 'GET, HEAD, OPTIONS';
const BULK_METHODS = 'POST, OPTIONS';
const COUNTS_EVERY_MS = 60_000;
/** The `operation` label of each route (`/<ip>/threat` is told from other fields when answered). */
const OPERATIONS: Record<Op, Operation> = {
  [Op.Lookup]: 'lookup',
  [Op.Field]: 'field',
  [Op.Bulk]: 'bulk',
  [Op.Health]: 'health',
  [Op.Flag]: 'flag',
  [Op.Explain]: 'explain',
};

/** Starts a server listening; resolves with its address. */
function listening(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => reject(e);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Opens the engine (unless given) and builds the server; `listen()` starts it.
 * @throws InvalidOptionsError on bad options or keys; the engine's errors
 */
export async function createServer(options: ServerOptions = {}): Promise<IprecordServer> {
  const config = checkOptions(options);
  const keys =
    options.keys === undefined
      ? KeyStore.none()
      : typeof options.keys === 'string'
        ? KeyStore.read(options.keys)
        : KeyStore.of(options.keys);
  if (options.countsFile !== undefined) keys.restoreCounts(options.countsFile);
  // Counts shared through Redis, else (a cluster's worker) through the cluster's primary.
  const link =
    options.counts !== undefined
      ? await SharedCounts.connect(
          options.counts,
          keys,
          (line) => process.stderr.write(`iprecord server: ${line}\n`),
          options.countsSyncEvery,
          {
            lease: options.quotaLease,
            whenDown: options.quotaWhenRedisDown,
          },
        )
      : options.clusterWorker === true
        ? await WorkerLink.connect(keys)
        : null;
  const owned = options.engine === undefined;
  const engine = options.engine ?? (await open(options.open));
  return new ApiServer(engine, owned, keys, config, options, link);
}

class ApiServer implements IprecordServer {
  readonly http: Server;
  readonly metrics: Server | null = null;
  private readonly counters: ServerMetrics | null = null;
  private readonly flags = new Flags();
  private readonly log: AccessLog | null;
  private readonly out: Responder;
  private readonly countsTimer: NodeJS.Timeout | null = null;
  /** The dataset checked: its file by a stat every few seconds, its bytes whole every few hours. */
  private readonly dataTimers: NodeJS.Timeout[];
  private closing: Promise<void> | null = null;

  constructor(
    readonly engine: Engine,
    private readonly ownsEngine: boolean,
    private readonly keys: KeyStore,
    private readonly config: Config,
    private readonly options: ServerOptions,
    private readonly link: WorkerLink | SharedCounts | null,
  ) {
    this.log = options.accessLog == null ? null : new AccessLog(options.accessLog, (text) => keys.isKey(text));
    if (options.metricsPort !== undefined) {
      const counters = new ServerMetrics(engine);
      this.counters = counters;
      // A cluster's workers hand theirs to the primary, which serves them added up.
      if (options.clusterWorker === true) counters.shareWithPrimary();
      else this.metrics = metricsServer(() => counters.registry.metrics(), counters.registry.contentType);
    }
    this.out = new Responder(this.log, config.trustProxy, this.counters);
    const headersTimeout = options.headersTimeout ?? 10_000;
    const requestTimeout = options.requestTimeout ?? 30_000;
    this.http = createHttpServer(
      {
        headersTimeout,
        requestTimeout,
        keepAliveTimeout: options.keepAliveTimeout ?? 5_000,
        // Node checks the timeouts every 30 s by default, so a 10 s limit fell anywhere up to 40 s.
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(headersTimeout, requestTimeout) / 4))),
        // A request without Host is answered here, as JSON and logged, not by Node's bare 400.
        requireHostHeader: false,
      },
      (req, res) => this.handle(req, res),
    );
    this.http.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.out.clientError(err, socket));
    // CONNECT is no method of the API: 405 as JSON, where Node would close the socket without a word.
    this.http.on('connect', (req: IncomingMessage, socket: Socket) =>
      this.out.refuseRaw(socket, 405, MESSAGES.method, req, ['Allow', LOOKUP_METHODS]),
    );
    if (options.countsFile !== undefined) {
      this.countsTimer = setInterval(() => this.saveCountsQuietly(), COUNTS_EVERY_MS);
      this.countsTimer.unref();
    }
    // Failures are the engine's 'damaged' and 'error' events to tell; a check never stops the server.
    const quietly = (check: () => Promise<unknown>) => () => void check().catch(() => undefined);
    this.dataTimers = [
      setInterval(
        quietly(() => engine.checkData()),
        options.checkDataEvery ?? 5000,
      ),
      setInterval(
        quietly(() => engine.verifyInBackground()),
        options.verifyDataEvery ?? 6 * 3600_000,
      ),
    ];
    for (const t of this.dataTimers) t.unref();
  }

  async listen(port = 8080, host = '127.0.0.1'): Promise<AddressInfo> {
    if (this.metrics !== null) await listening(this.metrics, this.options.metricsPort ?? 0, host);
    return listening(this.http, port, host);
  }

  reload(): Promise<void> {
    return this.engine.reload().catch((e: unknown) => {
      this.counters?.reloadFailed();
      throw e;
    });
  }

  saveCounts(): void {
    if (this.options.countsFile !== undefined) this.keys.saveCounts(this.options.countsFile);
  }

  private saveCountsQuietly(): void {
    try {
      this.saveCounts();
    } catch (e) {
      process.emitWarning(`iprecord server: cannot save counts: ${(e as Error).message}`);
    }
  }

  close(graceMs = 10_000): Promise<void> {
    if (this.closing !== null) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      // Idle keep-alive connections go at once; busy ones after their response.
      const sweep = setInterval(() => this.http.closeIdleConnections(), 50);
      const force = setTimeout(() => this.http.closeAllConnections(), graceMs);
      this.http.close(() => {
        clearInterval(sweep);
        clearTimeout(force);
        resolve();
      });
      this.http.closeIdleConnections();
      this.metrics?.close();
    }).then(async () => {
      if (this.countsTimer !== null) clearInterval(this.countsTimer);
      for (const t of this.dataTimers) clearInterval(t);
      this.saveCountsQuietly();
      await this.link?.close();
      this.log?.flush(true);
      if (this.ownsEngine) this.engine.close();
    });
    return this.closing;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const ctx: Exchange = {
      req,
      res,
      started: this.log === null && this.counters === null ? 0 : performance.now(),
      account: null,
      callback: null,
      op: 'other',
    };
    try {
      this.route(ctx);
    } catch (e) {
      this.out.failed(ctx, e);
    }
  }

  private route(ctx: Exchange): void {
    const found = this.target(ctx);
    if (found === null) return;
    const { route, query: rawQuery } = found;
    if (route.op === Op.Health) return this.health(ctx);
    if (route.op === Op.Flag) return this.flag(ctx, route.name);
    const query = rawQuery === null ? NO_QUERY : parseQuery(rawQuery);
    if (query.callback !== null) {
      if (query.callback.length > 64 || !CALLBACK.test(query.callback)) return this.out.fail(ctx, 400, MESSAGES.callback);
      ctx.callback = query.callback;
    }
    let header = ctx.req.headers['api-key'];
    if (Array.isArray(header)) header = header[0];
    const account = this.keys.find(query.key ?? header ?? null);
    if (account === null) return this.out.fail(ctx, 401, MESSAGES.key);
    ctx.account = account;
    const basicThreat = account.plan !== 'business';
    if (route.op === Op.Bulk) {
      if (account.plan === 'free') return this.out.fail(ctx, 403, MESSAGES.bulkPlan);
      return this.bulk(ctx, account, query.fields, basicThreat);
    }
    // A lookup, a field or an explanation: one request of the key's quota and count each.
    const now = Date.now();
    const within = this.allows(account, 1, now);
    if (within === true) return this.lookup(ctx, route, query, account, now, basicThreat);
    if (typeof within !== 'object') return this.refuse(ctx, within);
    within.then(
      (later) => (later === true ? this.lookup(ctx, route, query, account, Date.now(), basicThreat) : this.refuse(ctx, later)),
      (e: unknown) => this.out.failed(ctx, e),
    );
  }

  /**
   * The request's route and query text (null: none), its host, target and
   * method checked; null once the request is answered (an error, a
   * preflight).
   */
  private target(ctx: Exchange): { route: Route; query: string | null } | null {
    const { req } = ctx;
    const method = req.method ?? 'GET';
    // HTTP/1.1 requires Host (RFC 9112, 3.2).
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      this.out.fail(ctx, 400, 'Bad request: no Host header.', ['Connection', 'close']);
      return null;
    }
    if (this.config.hosts !== null && !this.config.hosts.has(hostName(req.headers.host))) {
      this.out.fail(ctx, 404, MESSAGES.host);
      return null;
    }
    let target = req.url ?? '/';
    if (target.charCodeAt(0) !== 47 /* / */) {
      const path = absolutePath(target);
      if (path === null) {
        if (method === 'OPTIONS' && target === '*') this.preflight(ctx, LOOKUP_METHODS);
        else this.out.fail(ctx, 404, MESSAGES.notFound);
        return null;
      }
      target = path;
    }
    const q = target.indexOf('?');
    const path = this.unmount(q < 0 ? target : target.slice(0, q));
    const route = path === null ? null : parsePath(path);
    if (route === null) {
      this.out.fail(ctx, 404, MESSAGES.notFound);
      return null;
    }
    const allowed = route.op === Op.Bulk ? BULK_METHODS : LOOKUP_METHODS;
    ctx.op = OPERATIONS[route.op];
    if (method === 'OPTIONS') {
      ctx.op = 'preflight';
      this.preflight(ctx, allowed);
      return null;
    }
    if (route.op === Op.Bulk ? method !== 'POST' : method !== 'GET' && method !== 'HEAD') {
      this.out.fail(ctx, 405, MESSAGES.method, ['Allow', allowed]);
      return null;
    }
    return { route, query: q < 0 ? null : target.slice(q + 1) };
  }

  /** `GET /healthz`: 200 with the data's load time, or 503 while the data in use is damaged. */
  private health(ctx: Exchange): void {
    const damaged = this.engine.damaged;
    const body =
      damaged === null ? { status: 'ok', loaded_at: this.engine.info().loadedAt } : { status: 'damaged', message: damaged.message };
    this.out.send(ctx, damaged === null ? 200 : 503, JSON_TYPE, JSON.stringify(body), ['Cache-Control', 'no-store']);
  }

  /** `GET /flags/<cc>.png|.svg`. */
  private flag(ctx: Exchange, name: string): void {
    const image = this.flags.get(name);
    if (image === null)
      return this.out.fail(
        ctx,
        404,
        this.flags.available ? MESSAGES.notFound : 'Flag images are not installed (npm install svg-country-flags).',
      );
    this.out.send(ctx, 200, image.type, image.body, ['Cache-Control', 'public, max-age=86400']);
  }

  /** Whether `n` requests of `account` are within its quota: at once, or (a quota shared through Redis whose lease is spent) once Redis answers. */
  private allows(account: Account, n: number, now: number): QuotaAnswer {
    if (account.quota === null) return true;
    return this.link instanceof SharedCounts ? this.link.allows(account, n, now) : account.allows(n, now);
  }

  /** A request past its quota (403), or (Redis away, quotas closed) one that cannot be told (503). */
  private refuse(ctx: Exchange, answer: false | 'unavailable'): void {
    if (answer === 'unavailable') return this.out.fail(ctx, 503, MESSAGES.quotaUnknown, ['Retry-After', '1']);
    this.out.fail(ctx, 403, MESSAGES.quota);
  }

  /** Answers a lookup or field request counted against `account`. */
  private lookup(ctx: Exchange, route: Route, query: Query, account: Account, now: number, basicThreat: boolean): void {
    try {
      this.answer(ctx, route, query, account, now, basicThreat);
    } catch (e) {
      this.out.failed(ctx, e);
    }
  }

  private answer(ctx: Exchange, route: Route, query: Query, account: Account, now: number, basicThreat: boolean): void {
    const { req } = ctx;
    const count = account.count(now, 1);
    // Outside the service's API; its file names alone (`explain.ts`), JSONP as every JSON answer.
    if (route.op === Op.Explain) return this.out.sendJson(ctx, JSON.stringify(publicExplanation(this.engine.explain(route.ip!))));
    const ip = route.ip ?? clientAddress(req.socket.remoteAddress, req.headers, this.config.trustProxy);
    if (route.op === Op.Lookup) {
      if (query.fields === null) return this.out.sendRecord(ctx, this.engine, ip, { count, basicThreat });
      return this.out.sendJson(ctx, this.engine.lookupJson(ip, { fields: query.fields, count, basicThreat }));
    }
    if (route.name === 'threat') ctx.op = 'threat';
    const value =
      route.name === 'threat' ? this.engine.threat(ip, { basicThreat }) : this.engine.field(ip, route.name as 'ip', { count, basicThreat });
    // A string field is plain text, anything else JSON (CONTRACT.md); JSONP always wraps JSON.
    if (typeof value === 'string' && ctx.callback === null) return this.out.send(ctx, 200, TEXT_TYPE, value);
    this.out.sendJson(ctx, JSON.stringify(value));
  }

  /** `POST /bulk`: the body read up to the limit, then one record (or `{ message }`) per address, in order. */
  private bulk(ctx: Exchange, account: Account, fields: string | null, basicThreat: boolean): void {
    readBody(ctx, this.config.bodyLimit, this.out, (text) => {
      let ips: unknown;
      try {
        ips = JSON.parse(text);
      } catch {
        return this.out.fail(ctx, 400, MESSAGES.bulkArray);
      }
      if (!Array.isArray(ips)) return this.out.fail(ctx, 400, MESSAGES.bulkArray);
      if (ips.length > MAX_BULK) return this.out.fail(ctx, 400, MESSAGES.bulkSize);
      if (!ips.every((ip) => typeof ip === 'string')) return this.out.fail(ctx, 400, MESSAGES.bulkArray);
      const answer = (now: number) => {
        const count = account.count(now, ips.length);
        this.counters?.bulk(ips.length);
        const { json, bytes } = bulkJson(this.engine, ips as string[], fields, count, basicThreat);
        this.out.sendJson(ctx, json, bytes);
      };
      const within = this.allows(account, ips.length, Date.now());
      if (within === true) return answer(Date.now());
      if (typeof within !== 'object') return this.refuse(ctx, within);
      within.then(
        (later) => {
          if (later !== true) return this.refuse(ctx, later);
          try {
            answer(Date.now());
          } catch (e) {
            this.out.failed(ctx, e);
          }
        },
        (e: unknown) => this.out.failed(ctx, e),
      );
    });
  }

  private preflight(ctx: Exchange, methods: string): void {
    this.out.send(ctx, 204, TEXT_TYPE, '', [
      'Access-Control-Allow-Methods',
      methods,
      'Access-Control-Allow-Headers',
      'api-key, content-type, accept',
      'Access-Control-Max-Age',
      '86400',
    ]);
  }

  /** The path without a base path it is served under; null when it is under none. */
  private unmount(path: string): string | null {
    for (const base of this.config.basePaths) {
      if (path.startsWith(base) && (path.length === base.length || path.charCodeAt(base.length) === 47))
        return path.length === base.length ? '/' : path.slice(base.length);
    }
    return path;
  }
}
