/**
 * `iprecord serve --workers n`: n server processes (node:cluster) on one
 * port. With mapped database files they share one copy of the data in the
 * page cache.
 *
 * Counts stay one per key across the workers: each worker reports the
 * requests it counted every second; the primary adds them up, saves them,
 * and tells each worker how many requests the others counted (its
 * `offset`). `count` and quotas see the other workers' requests as of the
 * last report, so a key may pass its quota by about a second of its
 * traffic on the other workers.
 */

import cluster, { type Worker } from 'node:cluster';
import { CountWindow } from '../record/count.js';
import type { KeyStore } from './keys.js';

const REPORT_MS = 1000;
/**
 * Young-generation size of each worker (V8's semi-space, MiB), unless
 * Node's own flags set one: V8 grows it to 16 MiB per space under a
 * server's allocation rate, which is most of a worker's private memory;
 * at 2 MiB the rate under load stays the same (bench/README.md).
 */
const WORKER_SEMI_SPACE_MB = 2;

/** Node flags of the workers: the primary's, plus a small young generation unless those or NODE_OPTIONS set one. */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const set = [...execArgv, nodeOptions].some((a) => /semi[-_]space/.test(a));
  return set ? [...execArgv] : [...execArgv, `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`];
}
const SAVE_MS = 60_000;
const RESTART_WINDOW_MS = 10_000;
/** Worker exits beyond the worker count allowed within RESTART_WINDOW_MS. */
const MAX_RESTARTS = 5;

type Minutes = Record<string, [number, number][]>;
type Message =
  | { iprecord: 'counts'; counts: Minutes; final?: boolean }
  | { iprecord: 'hello' }
  | { iprecord: 'offsets'; offsets: Record<string, number> }
  | { iprecord: 'stop' };

/**
 * Sends a message to a worker if its channel is open. A worker that is
 * stopping may close it between the check and the write (EPIPE): that is
 * not an error of the primary's, whose `exit` handler settles the worker;
 * with a callback, node hands that error to it instead of emitting it.
 */
export function tell(worker: Worker, message: Message): void {
  if (worker.isConnected()) worker.send(message, undefined, {}, () => {});
}

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { iprecord?: unknown }).iprecord === 'string';
}

/** A worker's side: reports its counts, takes the others'. */
export class WorkerLink {
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly keys: KeyStore) {
    keys.link();
    process.on('message', (m: unknown) => {
      if (isMessage(m) && m.iprecord === 'offsets') this.apply(m.offsets);
    });
    this.timer = setInterval(() => this.report(false), REPORT_MS);
    this.timer.unref();
  }

  /** Links to the primary and waits for the counts it holds (a restart's saved counts, other workers). */
  static async connect(keys: KeyStore): Promise<WorkerLink> {
    const link = new WorkerLink(keys);
    await new Promise<void>((resolve) => {
      const first = (m: unknown) => {
        if (isMessage(m) && m.iprecord === 'offsets') {
          process.off('message', first);
          resolve();
        }
      };
      process.on('message', first);
      process.send!({ iprecord: 'hello' });
    });
    return link;
  }

  private apply(offsets: Record<string, number>): void {
    for (const [id, n] of Object.entries(offsets)) {
      const a = this.keys.byId(id);
      if (a !== undefined) a.offset = n;
    }
  }

  /** Sends the last counts to the primary. */
  close(): Promise<void> {
    return this.report(true);
  }

  /** Sends what was counted since the last report; resolves once sent. */
  report(final: boolean): Promise<void> {
    const counts: Minutes = {};
    let any = false;
    for (const a of this.keys.accounts()) {
      if (a.pending === null || a.pending.size === 0) continue;
      counts[a.id] = [...a.pending];
      a.pending.clear();
      any = true;
    }
    if (!any && !final) return Promise.resolve();
    if (final) clearInterval(this.timer);
    return new Promise((resolve) => {
      if (process.send === undefined || !process.connected) return resolve();
      process.send({ iprecord: 'counts', counts, final }, undefined, {}, () => resolve());
    });
  }
}

/** The keys' counts the primary holds: its own windows, and per live worker what it reported, added up for every worker. */
class PrimaryCounts {
  /** Per live worker, per account id, the requests it reported. */
  private readonly counted = new Map<number, Map<string, CountWindow>>();

  constructor(
    private readonly keys: KeyStore,
    private readonly countsFile: string | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /** A worker's counts start empty. */
  add(worker: Worker): void {
    this.counted.set(worker.id, new Map());
  }

  /** What every other worker and the primary counted, per account: what a worker adds to its own counts. */
  offsetsFor(worker: Worker): Record<string, number> {
    const now = Date.now();
    const own = this.counted.get(worker.id);
    const offsets: Record<string, number> = {};
    for (const a of this.keys.accounts()) {
      let total = a.window.live(now);
      for (const w of this.windowsOf(a.id)) total += w.live(now);
      offsets[a.id] = total - (own?.get(a.id)?.live(now) ?? 0);
    }
    return offsets;
  }

  /** A worker's report of its counts, per account, by the minute. */
  report(worker: Worker, counts: Minutes): void {
    const byId = this.counted.get(worker.id);
    if (byId === undefined) return;
    const now = Date.now();
    for (const [id, minutes] of Object.entries(counts)) {
      if (this.keys.byId(id) === undefined) continue;
      let w = byId.get(id);
      if (w === undefined) byId.set(id, (w = new CountWindow()));
      w.restore(minutes, now);
    }
  }

  /** A stopped worker's counts go into the primary's own windows. */
  retire(worker: Worker): void {
    const byId = this.counted.get(worker.id);
    this.counted.delete(worker.id);
    if (byId === undefined) return;
    const now = Date.now();
    for (const [id, w] of byId) this.keys.byId(id)?.window.restore(w.minutes(now), now);
  }

  /** Saves every count to the counts file, when there is one. */
  save(): void {
    if (this.countsFile === undefined) return;
    try {
      this.keys.saveCounts(this.countsFile, Date.now(), (id) => this.windowsOf(id));
    } catch (e) {
      this.log(`cannot save counts: ${(e as Error).message}`);
    }
  }

  private windowsOf(id: string): CountWindow[] {
    const out: CountWindow[] = [];
    for (const byId of this.counted.values()) {
      const w = byId.get(id);
      if (w !== undefined) out.push(w);
    }
    return out;
  }
}

/**
 * The primary: forks the workers (again when one dies), adds up their
 * counts, saves them, and stops them on SIGTERM or SIGINT. Resolves with
 * the exit code once every worker has stopped and the counts are saved.
 */
export function runPrimary(workers: number, keys: KeyStore, countsFile: string | undefined, log: (line: string) => void): Promise<number> {
  const counts = new PrimaryCounts(keys, countsFile, log);
  const fork = () => {
    const worker = cluster.fork();
    counts.add(worker);
    worker.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      if (m.iprecord === 'hello') tell(worker, { iprecord: 'offsets', offsets: counts.offsetsFor(worker) });
      else if (m.iprecord === 'counts') counts.report(worker, m.counts);
    });
  };
  cluster.setupPrimary({ execArgv: workerExecArgv() });
  for (let i = 0; i < workers; i++) fork();
  const broadcast = setInterval(() => {
    for (const w of Object.values(cluster.workers ?? {}))
      if (w !== undefined) tell(w, { iprecord: 'offsets', offsets: counts.offsetsFor(w) });
  }, REPORT_MS);
  const saver = setInterval(() => counts.save(), SAVE_MS);
  return superviseWorkers(workers, fork, counts, log, () => {
    clearInterval(broadcast);
    clearInterval(saver);
  });
}

/**
 * Starts another worker when one stops, gives up when they keep stopping,
 * and stops them all on SIGTERM or SIGINT (SIGHUP: each reloads its data);
 * the exit code once every worker has stopped and the counts are saved.
 */
function superviseWorkers(
  workers: number,
  fork: () => void,
  counts: PrimaryCounts,
  log: (line: string) => void,
  done: () => void,
): Promise<number> {
  let stopping = false;
  let failed = false;
  /** Exits of workers in the last RESTART_WINDOW_MS: too many and the primary gives up. */
  const exits: number[] = [];
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      failed = signal === 'too many worker exits';
      log(`${signal}, stopping ${Object.keys(cluster.workers ?? {}).length} workers`);
      for (const w of Object.values(cluster.workers ?? {})) if (w !== undefined) tell(w, { iprecord: 'stop' });
    };
    cluster.on('exit', (worker, code, signal) => {
      counts.retire(worker);
      const now = Date.now();
      exits.push(now);
      while (exits.length > 0 && exits[0] < now - RESTART_WINDOW_MS) exits.shift();
      if (!stopping && exits.length > workers + MAX_RESTARTS) {
        log(`workers keep stopping (${exits.length} in ${RESTART_WINDOW_MS / 1000} s); giving up`);
        stop('too many worker exits');
      }
      if (!stopping) {
        log(`worker ${worker.process.pid} stopped (${signal ?? code}); starting another`);
        fork();
      } else if (Object.keys(cluster.workers ?? {}).length === 0) {
        done();
        counts.save();
        resolve(failed ? 2 : 0);
      }
    });
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // SIGHUP: every worker reloads its data.
    process.on('SIGHUP', () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGHUP');
    });
  });
}

/** In a worker: calls `stop` when the primary asks. */
export function onPrimaryStop(stop: () => void): void {
  process.on('message', (m: unknown) => {
    if (isMessage(m) && m.iprecord === 'stop') stop();
  });
}
