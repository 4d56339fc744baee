/**
 * Counts and quotas shared by every server instance through Redis (or
 * Valkey): `--counts redis://host:port/db`.
 *
 * Requests are counted in the process, as with one instance; once a second
 * (`countsSyncEvery`) each instance sends what it counted since (one script call: per key,
 * minute buckets in a hash that keeps their 24-hour total) and reads back
 * the totals of the keys in use, from which it knows how many requests the
 * other instances counted (the account's `offset`). `count` sees another
 * instance's requests once it has sent them and this one has read them
 * back. A key with a quota is answered from leases (`allows`): shares of
 * what is left of its quota taken from Redis in one atomic step, so that
 * a key passes its quota only by the leases of instances that stopped
 * without sending their counts; a request waits on Redis only when its
 * key's lease is spent, and a key without a quota never. A lease unused
 * for a whole exchange goes back, so that an instance whose key went
 * quiet holds none of what another instance may answer. The Redis client
 * runs on a thread of its own (`counts-worker.ts`).
 *
 * Work and memory follow the keys in use, not the keys listed: a call
 * carries the keys this instance counted since the last one and those
 * with requests in the window anywhere (Redis keeps a sorted set of keys
 * by the last second counted, on its own clock; each call answers the
 * keys counted since the last, which this instance reads from then on). A keys file of 100 000 keys none of
 * which is used costs one call of three Redis keys a second.
 *
 * When Redis does not answer, each instance goes on counting on its own,
 * says so once, and sends what it counted when Redis answers again. Each
 * batch has a number, and Redis keeps the last one each instance sent, so
 * a batch sent again after an answer was lost is not counted twice. When
 * Redis comes back without its data (restarted without persistence,
 * flushed, failed over to an empty replica), a random epoch it kept is
 * gone: each instance sees that at its next call and sends its whole
 * 24 hours again, so the totals agree again within two seconds. A key of
 * another type where a count hash belongs (WRONGTYPE) is left alone and
 * counted on each instance alone, said once; its quota, which cannot be
 * one quota then, is answered as the operator chose for Redis away
 * (`quotaWhenRedisDown`); other keys are unaffected.
 * The keys are under one hash tag (`{iprecord}`), so a Redis Cluster keeps
 * them on one node.
 *
 * Over 300 lines: counts, quota leases and the Redis connection's states are one protocol, kept together.
 */

import { randomBytes } from 'node:crypto';
import { ownEntry, PoolWorker, startWorker } from '../platform/threads.js';
import type { Account, KeyStore } from './keys.js';

/** How often an instance exchanges its counts with Redis, by default (`countsSyncEvery`). */
const SYNC_MS = 1000;
const MINUTE_MS = 60_000;
/** How long Redis keeps a key's buckets and an instance's last batch number without news: the window and an hour. */
const TTL_S = 25 * 3600;
/** The window of `count` and quotas, in minutes. */
export const WINDOW_MINUTES = 1440;
const WORKER = ownEntry(import.meta.url, './counts-worker.ts', 'counts-worker');
const HASH_PREFIX = '{iprecord}:counts:';
const LEASE_PREFIX = '{iprecord}:leases:';
/** A lease takes this share of what is left of its key's quota (1/32), so the leases shrink as the quota runs out. */
const LEASE_SHARE = 32;
/** The largest lease, by default (`quotaLease`). */
export const QUOTA_LEASE = 1000;
/** How long a lease lasts without news from its instance, at the least: a stopped instance's lease is free again after it. */
const LEASE_TTL_S = 10;
const EPOCH_KEY = '{iprecord}:epoch';
const ACTIVE_KEY = '{iprecord}:active';

/** A batch of counts sent and not yet acknowledged: its number, the accounts it names, and (index in `accounts`, minute, count) triples. */
interface Batch {
  readonly number: number;
  readonly accounts: readonly Account[];
  readonly triples: number[];
}

/**
 * The counts thread's answer to one call of the script: `['ok', Redis's
 * clock in seconds, keys counted since the second asked, ...each account's
 * total (-1: not a hash)]`, or `['epoch', epoch]` when this instance's
 * epoch is not Redis's.
 */
type Reply = ['ok', number, string[], ...number[]] | ['epoch', string];
type Answer = { readonly reply: Reply } | { readonly error: string };
/** The lease script's reply: `['ok', granted, left]`, `['epoch']` or `['type']` (`counts-worker.ts`). */
type LeaseAnswer = { readonly reply: ['ok', number, number] | ['epoch'] | ['type'] } | { readonly error: string };

/** What answers a request of a key with a quota: yes, no (403), not now (Redis away and the quota closed: 503), or later. */
export type QuotaAnswer = boolean | 'unavailable' | Promise<boolean | 'unavailable'>;

/** What a quota key may do while Redis does not answer (`quotaWhenRedisDown`). */
export type QuotaWhenDown = 'open' | 'closed';

export class SharedCounts {
  /** Accounts read at each call besides those counted here: used lately anywhere. */
  private readonly watched = new Set<Account>();
  /** Accounts whose whole window goes in the next batch (Redis lost them). */
  private readonly resend = new Set<Account>();
  /** Accounts whose Redis key is of another type, said once each. */
  private readonly broken = new Set<Account>();
  /** Where Redis keeps the number of this process's last batch. */
  private readonly instance = `{iprecord}:instance:${randomBytes(8).toString('hex')}`;
  /** Redis's epoch as last seen ('' before the first call): another one means Redis lost its data. */
  private epoch = '';
  /** Redis's clock at the last answered call, in seconds (0: none yet): keys counted since are asked for. */
  private since = 0;
  private sequence = 0;
  private batch: Batch | null = null;
  private syncing: Promise<void> | null = null;
  private down = false;
  /** Whether quota keys were said to be answered on this instance's counts alone (Redis away, `open`). */
  private saidOpen = false;
  private readonly timer: NodeJS.Timeout;
  private readonly leaseTtl: number;

  private constructor(
    private readonly redis: PoolWorker,
    private readonly keys: KeyStore,
    private readonly where: string,
    private readonly log: (line: string) => void,
    private readonly syncMs: number,
    private readonly quota: { readonly lease: number; readonly whenDown: QuotaWhenDown },
  ) {
    keys.link();
    this.leaseTtl = Math.max(LEASE_TTL_S, Math.ceil((syncMs * 5) / 1000));
    this.timer = setInterval(() => void this.sync(), syncMs);
    this.timer.unref();
  }

  /**
   * Connects (waiting at most a few seconds) and reads the totals of the
   * keys used within the window; a Redis that does not answer yet is said
   * once and tried again every second.
   * @throws Error for a URL that is not redis://, rediss:// or valkey://
   */
  static async connect(
    url: string,
    keys: KeyStore,
    log: (line: string) => void,
    syncMs = SYNC_MS,
    quota: { readonly lease?: number; readonly whenDown?: QuotaWhenDown } = {},
  ): Promise<SharedCounts> {
    const where = redisLabel(url);
    const worker = startWorker(WORKER, { workerData: { url } });
    worker.unref();
    const shared = new SharedCounts(new PoolWorker(worker), keys, where, log, syncMs, {
      lease: quota.lease ?? QUOTA_LEASE,
      whenDown: quota.whenDown ?? 'open',
    });
    // The first call learns the epoch and which keys are in use; the second reads their totals.
    await shared.sync();
    if (!shared.down) await shared.sync();
    return shared;
  }

  /** Sends what was counted (or the batch not yet acknowledged) and takes the totals of the keys in use. */
  sync(): Promise<void> {
    this.syncing ??= this.exchange().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async exchange(): Promise<void> {
    // A second round only when Redis lost its data: the first finds out, the second sends the whole window.
    for (let round = 0; round < 2; round++) {
      const now = Date.now();
      const batch = (this.batch ??= this.take(now));
      const first = Math.floor(now / MINUTE_MS) - WINDOW_MINUTES + 1;
      let answer: Answer;
      try {
        const hashes = batch.accounts.map((a) => HASH_PREFIX + a.id);
        const leases = batch.accounts.map((a) => LEASE_PREFIX + a.id);
        answer = await this.redis.run<Answer>({
          args: [
            3 + 2 * hashes.length,
            this.instance,
            EPOCH_KEY,
            ACTIVE_KEY,
            ...hashes,
            ...leases,
            first,
            TTL_S,
            batch.number,
            this.epoch,
            randomBytes(8).toString('hex'),
            Math.max(0, this.since - 1),
            hashes.length,
            this.leaseTtl,
            ...batch.triples,
          ],
        });
      } catch (e) {
        answer = { error: `the counts thread stopped: ${(e as Error).message}` };
      }
      if ('error' in answer) {
        if (!this.down) this.log(`counts: Redis at ${this.where} does not answer (${answer.error}); counting here until it does`);
        this.down = true;
        return;
      }
      const { reply } = answer;
      if (reply[0] === 'epoch') {
        if (this.epoch !== '') this.log(`counts: Redis at ${this.where} lost its counts; this instance sends its last 24 hours again`);
        this.epoch = reply[1];
        // The batch was not applied: the whole window goes instead (it holds the batch's counts).
        this.batch = null;
        for (const a of this.keys.accounts()) if (a.window.live(now) > 0) this.resend.add(a);
        continue;
      }
      this.answered(reply, batch);
      return;
    }
  }

  private answered([, clock, lately, ...totals]: ['ok', number, string[], ...number[]], batch: Batch): void {
    const caughtUp = batch.triples.length / 3;
    const counted = new Set<Account>();
    for (let t = 0; t < batch.triples.length; t += 3) counted.add(batch.accounts[batch.triples[t]]);
    this.batch = null;
    if (this.down) this.log(`counts: Redis at ${this.where} answers again; ${caughtUp} minute counts sent`);
    this.down = false;
    this.saidOpen = false;
    this.since = Number(clock);
    const at = Date.now();
    batch.accounts.forEach((a, i) => {
      const total = Number(totals[i]);
      if (total < 0) {
        this.unshareable(a);
        return;
      }
      if (this.broken.delete(a)) {
        // Its counts were not kept meanwhile: this instance's whole window goes again.
        this.resend.add(a);
        this.log(`counts: the Redis key ${HASH_PREFIX}${a.id} is a count hash again; key ${a.label} is shared again`);
      }
      // The total holds every request of this process but those counted since the batch was made.
      let unsent = 0;
      if (a.pending !== null) for (const n of a.pending.values()) unsent += n;
      a.offset = Math.max(0, total - (a.window.live(at) - unsent));
      // Read while anyone uses it: a key without requests in the window anywhere is dropped.
      if (total === 0 && a.window.live(at) === 0) this.watched.delete(a);
    });
    for (const hash of lately) {
      const a = this.keys.byId(String(hash).slice(HASH_PREFIX.length));
      if (a !== undefined) this.watched.add(a);
    }
    // Idle since the last exchange, and every request it answered now in Redis's total: what it holds is what it keeps.
    for (const a of batch.accounts)
      if (a.lease > 0 && a.leasing === null && !counted.has(a) && (a.pending === null || a.pending.size === 0)) void this.giveBack(a);
  }

  /** Gives back what is left of `a`'s lease (its requests all sent): Redis frees it for every instance. */
  private giveBack(a: Account): Promise<void> {
    a.lease = 0;
    a.leaseGrant = 0;
    const given = this.redis
      .run({ lease: true, args: [HASH_PREFIX + a.id, LEASE_PREFIX + a.id, EPOCH_KEY, this.instance, -1, 0, 1, 0, this.epoch, 0, 0, 0] })
      .then(
        () => undefined,
        () => undefined,
      );
    // A request meanwhile asks for a new lease after it, not before.
    a.leasing = given;
    void given.finally(() => {
      if (a.leasing === given) a.leasing = null;
    });
    return given;
  }

  /** The counts since the last batch (a whole window for the accounts to send again), as a new batch naming every account in use. */
  private take(now: number): Batch {
    const accounts: Account[] = [];
    const triples: number[] = [];
    const add = (a: Account, minutes: Iterable<[number, number]>) => {
      const i = accounts.push(a) - 1;
      for (const [minute, n] of minutes) triples.push(i, minute, n);
    };
    for (const a of this.keys.accounts()) {
      if (this.resend.has(a)) add(a, a.window.minutes(now));
      else if (a.pending !== null && a.pending.size > 0) add(a, a.pending);
      else if (this.watched.has(a) || this.broken.has(a) || a.leaseGrant > 0) add(a, []);
      else continue;
      a.pending?.clear();
    }
    this.resend.clear();
    return { number: this.sequence++, accounts, triples };
  }

  /**
   * Whether `n` requests of `a` (a key with a quota) are answered: from the
   * lease this instance holds, at once; when it is spent, after asking
   * Redis for another (one round trip, the request waiting on it), refused
   * when Redis says too little is left. A new lease is asked for ahead,
   * when half of the last one is spent, so that a key far from its quota
   * never waits. While Redis does not answer: `open`, the quota as this
   * instance counts it (`Account.allows`); `closed`, the lease held, then
   * 'unavailable'.
   */
  allows(a: Account, n: number, now: number): QuotaAnswer {
    if (a.quota === null) return true;
    if (this.broken.has(a)) return this.unshared(a, n, now);
    if (a.lease >= n) {
      a.lease -= n;
      if (a.leasing === null && a.lease < a.leaseGrant / 2 && !this.down) void this.lease(a, 1);
      return true;
    }
    if (this.down) return this.whileDown(a, n, now);
    if (now < a.spentUntil) return false;
    return this.leaseFor(a, n);
  }

  /** `a`'s Redis key is of another type: counted on each instance alone from now on, said once. */
  private unshareable(a: Account): void {
    if (this.broken.has(a)) return;
    this.broken.add(a);
    this.log(
      `counts: the Redis key ${HASH_PREFIX}${a.id} is not a count hash; key ${a.label} is counted on each instance alone until it is removed${a.quota === null ? '' : this.quota.whenDown === 'closed' ? ', its requests answered 503 meanwhile (quotaWhenRedisDown: closed)' : ', its quota as each instance counts it meanwhile (quotaWhenRedisDown: open)'}`,
    );
  }

  /**
   * A quota key whose Redis key is of another type is counted on each
   * instance alone, so its quota cannot be one quota: it is answered as
   * the operator chose for Redis away (`closed`: 503 until the key is
   * removed; `open`: as this instance counts it).
   */
  private unshared(a: Account, n: number, now: number): boolean | 'unavailable' {
    return this.quota.whenDown === 'closed' ? 'unavailable' : a.allows(n, now);
  }

  private whileDown(a: Account, n: number, now: number): boolean | 'unavailable' {
    if (this.quota.whenDown === 'closed') return 'unavailable';
    if (!this.saidOpen)
      this.log(
        `counts: quota keys are answered as this instance counts them until Redis at ${this.where} answers (quotaWhenRedisDown: open)`,
      );
    this.saidOpen = true;
    return a.allows(n, now);
  }

  /** Waits for leases until `n` requests are covered or Redis says they are not. */
  private async leaseFor(a: Account, n: number): Promise<boolean | 'unavailable'> {
    for (;;) {
      if (a.leasing !== null) await a.leasing;
      else {
        const granted = await this.lease(a, n - a.lease);
        if (granted === null) return this.broken.has(a) ? this.unshared(a, n, Date.now()) : this.whileDown(a, n, Date.now());
        if (granted === 0 && a.lease < n) return false;
      }
      if (a.lease >= n) {
        a.lease -= n;
        return true;
      }
      if (Date.now() < a.spentUntil) return false;
    }
  }

  /** Asks Redis for a lease of at least `need` requests of `a`; what was granted (null: Redis did not answer). */
  private lease(a: Account, need: number): Promise<number | null> {
    const asked = (async (): Promise<number | null> => {
      let answer: LeaseAnswer;
      try {
        answer = await this.redis.run<LeaseAnswer>({
          lease: true,
          args: [
            HASH_PREFIX + a.id,
            LEASE_PREFIX + a.id,
            EPOCH_KEY,
            this.instance,
            need,
            a.quota!,
            LEASE_SHARE,
            this.quota.lease,
            this.epoch,
            this.leaseTtl,
            TTL_S,
            this.firstMinute(),
          ],
        });
      } catch (e) {
        answer = { error: (e as Error).message };
      }
      if ('error' in answer) return null;
      const [state, granted] = answer.reply;
      if (state === 'type') {
        this.unshareable(a);
        return null;
      }
      if (state === 'epoch') {
        // Redis lost its data or this instance has not called yet: the next sync learns the epoch; refused until then.
        a.spentUntil = Date.now() + this.syncMs;
        void this.sync();
        return 0;
      }
      a.lease += granted!;
      a.leaseGrant = granted! > 0 ? granted! : a.leaseGrant;
      if (granted === 0) {
        // Nothing left: refused here until the next exchange, so that a key past its quota does not call Redis per request.
        a.spentUntil = Date.now() + this.syncMs;
        this.watched.add(a);
      }
      return granted!;
    })();
    a.leasing = asked.then(() => undefined);
    void asked.finally(() => {
      a.leasing = null;
    });
    return asked;
  }

  private firstMinute(): number {
    return Math.floor(Date.now() / MINUTE_MS) - WINDOW_MINUTES + 1;
  }

  /** Sends the last counts (waiting at most `waitMs`) and disconnects. */
  async close(waitMs = 2000): Promise<void> {
    clearInterval(this.timer);
    await this.syncing;
    await Promise.race([this.sync(), new Promise((r) => setTimeout(r, waitMs).unref())]);
    // What is left of the leases goes back: the counts they answered were just sent.
    const held = [...this.keys.accounts()].filter((a) => a.leaseGrant > 0 && (a.pending === null || a.pending.size === 0));
    if (!this.down && held.length > 0)
      await Promise.race([Promise.all(held.map((a) => this.giveBack(a))), new Promise((r) => setTimeout(r, waitMs).unref())]);
    if (
      (this.batch !== null && this.batch.triples.length > 0) ||
      [...this.keys.accounts()].some((a) => a.pending !== null && a.pending.size > 0)
    )
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
