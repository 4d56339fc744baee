/**
 * Counts and quotas shared by every server instance through Redis (or
 * Valkey): `--counts redis://host:port/db`.
 *
 * Requests are counted in the process, as with one instance; once a second
 * each instance sends what it counted since (one script call: per key,
 * minute buckets in a hash that keeps their 24-hour total) and reads back
 * every key's total, from which it knows how many requests the other
 * instances counted (the account's `offset`). A request never waits on
 * Redis. `count` and quotas see another instance's requests once it has
 * sent them and this one has read them back (each once a second), so a
 * key may pass its quota by up to about two seconds of its traffic on the
 * other instances. The Redis client runs on a thread of its own
 * (`counts-worker.ts`).
 *
 * When Redis does not answer, each instance goes on counting on its own,
 * says so once, and sends what it counted when Redis answers again. Each
 * batch has a number, and Redis keeps the last one each instance sent, so
 * a batch sent again after an answer was lost is not counted twice. The
 * keys are under one hash tag (`{iprecord}`), so a Redis Cluster keeps
 * them on one node.
 */

import { randomBytes } from 'node:crypto';
import { ownEntry, PoolWorker, startWorker } from '../threads.js';
import type { Account, KeyStore } from './keys.js';

const SYNC_MS = 1000;
const MINUTE_MS = 60_000;
/** How long Redis keeps a key's buckets and an instance's last batch number without news: the window and an hour. */
const TTL_S = 25 * 3600;
/** The window of `count` and quotas, in minutes. */
export const WINDOW_MINUTES = 1440;
const WORKER = ownEntry(import.meta.url, './counts-worker.ts', 'counts-worker');

/** A batch of counts sent and not yet acknowledged: its number and counts. */
interface Batch {
  readonly number: number;
  readonly triples: (string | number)[];
}

/** The counts thread's answer to one call of the script. */
type Answer = { readonly totals: number[] } | { readonly error: string };

export class SharedCounts {
  private readonly accounts: Account[];
  private readonly hashes: string[];
  /** Where Redis keeps the number of this process's last batch. */
  private readonly instance = `{iprecord}:instance:${randomBytes(8).toString('hex')}`;
  private sequence = 0;
  private batch: Batch | null = null;
  private syncing: Promise<void> | null = null;
  private down = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly redis: PoolWorker,
    keys: KeyStore,
    private readonly where: string,
    private readonly log: (line: string) => void,
  ) {
    this.accounts = [...keys.accounts()];
    for (const a of this.accounts) a.pending = new Map();
    this.hashes = this.accounts.map((a) => `{iprecord}:counts:${a.id}`);
    this.timer = setInterval(() => void this.sync(), SYNC_MS);
    this.timer.unref();
  }

  /**
   * Connects (waiting at most a few seconds) and reads the totals; a Redis
   * that does not answer yet is said once and tried again every second.
   * @throws Error for a URL that is not redis://, rediss:// or valkey://
   */
  static async connect(url: string, keys: KeyStore, log: (line: string) => void): Promise<SharedCounts> {
    const where = redisLabel(url);
    const worker = startWorker(WORKER, { workerData: { url } });
    worker.unref();
    const shared = new SharedCounts(new PoolWorker(worker), keys, where, log);
    await shared.sync();
    return shared;
  }

  /** Sends what was counted (or the batch not yet acknowledged) and takes every key's total. */
  sync(): Promise<void> {
    this.syncing ??= this.exchange().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async exchange(): Promise<void> {
    const now = Date.now();
    this.batch ??= this.take();
    const first = Math.floor(now / MINUTE_MS) - WINDOW_MINUTES + 1;
    let answer: Answer;
    try {
      answer = await this.redis.run<Answer>({ args: [1 + this.hashes.length, this.instance, ...this.hashes, first, TTL_S, this.batch.number, ...this.batch.triples] });
    } catch (e) {
      answer = { error: `the counts thread stopped: ${(e as Error).message}` };
    }
    if ('error' in answer) {
      if (!this.down) this.log(`counts: Redis at ${this.where} does not answer (${answer.error}); counting here until it does`);
      this.down = true;
      return;
    }
    const { totals } = answer;
    const caughtUp = this.batch.triples.length / 3;
    this.batch = null;
    if (this.down) this.log(`counts: Redis at ${this.where} answers again; ${caughtUp} minute counts sent`);
    this.down = false;
    const at = Date.now();
    this.accounts.forEach((a, i) => {
      // The total holds every request of this process but those counted since the batch was made.
      let unsent = 0;
      for (const n of a.pending!.values()) unsent += n;
      a.offset = Math.max(0, Number(totals[i]) - (a.window.live(at) - unsent));
    });
  }

  /** The counts since the last batch, as a new batch. */
  private take(): Batch {
    const triples: (string | number)[] = [];
    this.accounts.forEach((a, i) => {
      for (const [minute, n] of a.pending!) triples.push(i + 1, minute, n);
      a.pending!.clear();
    });
    return { number: this.sequence++, triples };
  }

  /** Sends the last counts (waiting at most `waitMs`) and disconnects. */
  async close(waitMs = 2000): Promise<void> {
    clearInterval(this.timer);
    await this.syncing;
    await Promise.race([this.sync(), new Promise((r) => setTimeout(r, waitMs).unref())]);
    if ((this.batch !== null && this.batch.triples.length > 0) || this.accounts.some((a) => a.pending!.size > 0))
      this.log(`counts: Redis at ${this.where} did not take the last counts of this instance`);
    this.redis.close();
  }
}

/** A Redis URL without its password, for messages. */
export function redisLabel(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${url} is not a URL`);
  }
  if (!/^(redis|rediss|valkey|valkeys):$/.test(u.protocol)) throw new Error(`${url} is not a redis://, rediss:// or valkey:// URL`);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/** Whether a `--counts` value names Redis rather than a file. */
export const isRedisUrl = (value: string): boolean => /^(redis|rediss|valkey|valkeys):\/\//i.test(value);
