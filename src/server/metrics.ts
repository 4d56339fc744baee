/**
 * The server's metrics in Prometheus's text format (prom-client), served
 * on a port of their own (`metricsPort`, `--metrics-port`), not on the
 * API's: requests by operation and status, their latency, bulk sizes, the
 * dataset's build time and its sources' data dates, each feed's data age,
 * reloads and failed reloads, and the process's own (CPU, memory, event
 * loop). Labels name operations, statuses, databases and feeds: never a
 * key or an address. With `--workers n` each worker keeps its metrics and
 * the primary serves them added up (`clusterMetrics`).
 */

import { createServer as createHttpServer, type Server } from 'node:http';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Engine } from '../engine/engine.js';

/** What a request asked for (the `operation` label). */
export type Operation = 'lookup' | 'field' | 'threat' | 'bulk' | 'health' | 'flag' | 'explain' | 'preflight' | 'other';

/** Seconds since the epoch of an ISO date, or null. */
const seconds = (iso: string | null | undefined): number | null => {
  const ms = iso == null ? NaN : Date.parse(iso);
  return Number.isNaN(ms) ? null : ms / 1000;
};

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly latency: Histogram<'operation'>;
  private readonly bulkSizes: Histogram;
  private readonly reloads: Counter;
  private readonly failedReloads: Counter;

  constructor(engine: Engine) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'iprecord_requests_total',
      help: 'Requests answered, by operation and HTTP status.',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'iprecord_request_duration_seconds',
      help: 'Time from a request to its response written, by operation.',
      labelNames: ['operation'],
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.bulkSizes = new Histogram({
      name: 'iprecord_bulk_addresses',
      help: 'Addresses in each bulk request answered.',
      buckets: [1, 5, 10, 25, 50, 100],
      registers,
    });
    this.reloads = new Counter({ name: 'iprecord_reloads_total', help: 'Reloads of the data that swapped it in.', registers });
    this.failedReloads = new Counter({
      name: 'iprecord_reload_failures_total',
      help: 'Reloads of the data that failed (the data in use kept).',
      registers,
    });
    engine.on('reload', () => this.reloads.inc());
    engine.on('error', () => this.failedReloads.inc());
    // Read from the engine when scraped: the data in use, whatever reloads did.
    new Gauge({
      name: 'iprecord_dataset_built_timestamp_seconds',
      help: 'When the dataset in use was compiled.',
      aggregator: 'max',
      registers,
      collect() {
        if (!engine.closed) this.set(seconds(engine.info().dataset.builtAt) ?? 0);
      },
    });
    new Gauge({
      name: 'iprecord_source_data_timestamp_seconds',
      help: 'Date of the data of each geo, ASN and Anonymous-IP database the dataset was compiled from.',
      labelNames: ['role', 'database'],
      aggregator: 'max',
      registers,
      collect() {
        this.reset();
        if (engine.closed) return;
        for (const d of engine.info().databases) {
          const at = seconds(d.dataDate);
          if (at !== null) this.set({ role: d.role, database: d.path.split(/[\\/]/).pop() ?? d.path }, at);
        }
      },
    });
    new Gauge({
      name: 'iprecord_feed_age_seconds',
      help: "Age of each threat feed's newest data (feeds with a known date).",
      labelNames: ['feed'],
      aggregator: 'max',
      registers,
      collect() {
        this.reset();
        if (engine.closed) return;
        const now = Date.now() / 1000;
        for (const f of engine.info().feeds) {
          const at = seconds(f.dataDate);
          if (at !== null) this.set({ feed: f.name }, Math.max(0, now - at));
        }
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'iprecord_' });
    // Three of prom-client's are gauges named as counters (`*_total`), which Prometheus's own check (promtool check
    // metrics) refuses: their sums, kept by type in iprecord_nodejs_active_{handles,requests,resources}.
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total'])
      this.registry.removeSingleMetric(`iprecord_nodejs_${name}`);
  }

  /** Counts a response: its operation, status and time (seconds). */
  request(operation: Operation, status: number, secondsTaken: number): void {
    this.requests.inc({ operation, status: String(status) });
    this.latency.observe({ operation }, secondsTaken);
  }

  /** Counts a bulk request's addresses. */
  bulk(addresses: number): void {
    this.bulkSizes.observe(addresses);
  }

  /** A failed reload asked for by `server.reload()` (watched reloads are counted by the engine's events). */
  reloadFailed(): void {
    this.failedReloads.inc();
  }

  /** In a cluster worker: answers the primary's requests for metrics with these (`clusterMetrics`). */
  shareWithPrimary(): void {
    // Making one is what has a worker answer the primary's requests.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.registry]);
  }
}

/** An HTTP server answering `GET /metrics` with `text()` (anything else: 404). */
export function metricsServer(text: () => Promise<string>, contentType: string): Server {
  return createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics.\n');
      return;
    }
    text().then(
      (body) => res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(body),
      (e: unknown) =>
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`Cannot collect the metrics: ${(e as Error).message}\n`),
    );
  });
}

/** The metrics of every worker of a cluster, added up, served by its primary. */
export function clusterMetricsServer(): Server {
  const aggregator = new AggregatorRegistry();
  return metricsServer(() => aggregator.clusterMetrics(), aggregator.contentType);
}
