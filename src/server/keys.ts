/**
 * API keys, plans, quotas and the `count` of each key.
 *
 * Keys are held as SHA-256 digests, never as text: a presented key is
 * hashed, its digest looked up, and the match confirmed with
 * `crypto.timingSafeEqual`. What the time taken depends on is the digest,
 * which tells nothing about how much of a real key a guess got right.
 *
 * Counts are per key, over the last 24 hours in minute buckets, and are
 * saved to a file (by digest) so that they survive a restart.
 */

import { hash, timingSafeEqual } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { readRegularText, unreadableReason, withoutBom } from '../files/read.js';
import { writeAtomic } from '../files/write.js';
import { InvalidOptionsError } from '../contract/errors.js';
import { CountWindow } from '../record/count.js';

/** The most a keys or counts file is read to (a counts file holds up to about 30 kB a key): past it, it is no such file. */
const MAX_FILE_BYTES = 1 << 30;

export type Plan = 'free' | 'paid' | 'business';
export const PLANS: readonly Plan[] = ['free', 'paid', 'business'];

/** One key of a keys file. */
export interface KeyConfig {
  /** The secret, as callers send it. */
  readonly key: string;
  readonly plan: Plan;
  /** Requests allowed over any 24 hours (a bulk request counts once per address). Default: no limit. */
  readonly quota?: number;
  /** A label for the access log and `info`; the key itself is never logged. */
  readonly name?: string;
}

/** The keys file: `{ "keys": [ { "key": "...", "plan": "paid", "quota": 100000, "name": "shop" } ] }`. */
export interface KeysConfig {
  readonly keys: readonly KeyConfig[];
}

/** The caller behind a key (or everyone, when the server has no keys). */
export class Account {
  /** This process's requests. */
  readonly window = new CountWindow();
  /** Requests counted elsewhere in the window: the other workers of a cluster, as its primary last said. */
  offset = 0;
  /** Whether requests are reported elsewhere (a cluster's primary, Redis): then `pending` keeps them until taken. */
  linked = false;
  /** Requests per minute not yet reported (made at the first, so that keys never used cost nothing). */
  pending: Map<number, number> | null = null;
  /** With a quota shared through Redis: requests of this key's lease not yet answered (`shared-counts.ts`). */
  lease = 0;
  /** The size of the last lease granted (0: none held). */
  leaseGrant = 0;
  /** A lease being asked for. */
  leasing: Promise<void> | null = null;
  /** Until when (epoch ms) Redis said nothing is left: refused here meanwhile. */
  spentUntil = 0;
  private minute = -1;
  private text = '0';

  constructor(
    /** Hex SHA-256 of the key; `anonymous` without keys. */
    readonly id: string,
    readonly plan: Plan,
    readonly quota: number | null,
    /** For the access log. */
    readonly label: string,
  ) {}

  /** Whether `n` more lookups stay within the quota. */
  allows(n: number, nowMs: number): boolean {
    return this.quota === null || this.window.live(nowMs) + this.offset + n <= this.quota;
  }

  /** Counts `n` requests; returns `count` as of the start of this minute (refreshed once a minute). */
  count(nowMs: number, n: number): string {
    const m = Math.floor(nowMs / MINUTE_MS);
    if (m !== this.minute) {
      this.minute = m;
      this.text = String(this.window.live(nowMs) + this.offset);
    }
    this.window.add(nowMs, n);
    if (this.linked) {
      const pending = (this.pending ??= new Map());
      pending.set(m, (pending.get(m) ?? 0) + n);
    }
    return this.text;
  }
}

/** Hex SHA-256 of a key (crypto.hash: one call, no hash object). */
function digestOf(key: string): string {
  return hash('sha256', key, 'hex');
}

const COUNTS_VERSION = 1;
const MINUTE_MS = 60_000;

export class KeyStore {
  /**
   * The keys of the file by digest: where each one's plan, quota and label
   * are. Its account is made at its first use: a file may list many keys
   * that are never used, at about 120 bytes each.
   */
  private readonly listed = new Map<string, number>();
  private readonly plans: Plan[] = [];
  private readonly quotas: (number | null)[] = [];
  private readonly names: (string | undefined)[] = [];
  /** The accounts of the keys used (made by `find` or `byId`). */
  private readonly made = new Map<string, Account>();
  /** Whether accounts report their counts elsewhere (`link()`). */
  private linked = false;
  /**
   * Keys presented that matched an account: a key's SHA-256 costs more than
   * the rest of routing a request (17 % of the requests per second under
   * wrk). Only keys of the file get in, one entry each at most.
   */
  private readonly matched = new Map<string, Account>();
  /** The keys' lengths: a text of another length is no key, and is not hashed (the access log asks of every long word of every request). */
  private readonly lengths = new Set<number>();
  /** The one account of a server without keys. */
  readonly open: Account | null;

  private constructor(config: KeysConfig | null) {
    if (config === null) {
      this.open = new Account('anonymous', 'business', null, '-');
      this.made.set(this.open.id, this.open);
      return;
    }
    this.open = null;
    for (const k of config.keys) {
      this.listed.set(digestOf(k.key), this.plans.length);
      this.lengths.add(k.key.length);
      this.plans.push(k.plan);
      this.quotas.push(k.quota ?? null);
      this.names.push(k.name);
    }
  }

  /** From now on, every account keeps its counts in `pending` until taken (a cluster's primary, Redis). */
  link(): void {
    this.linked = true;
    for (const a of this.made.values()) a.linked = true;
  }

  /** No keys: every request is answered, as the Business plan, with one shared count. */
  static none(): KeyStore {
    return new KeyStore(null);
  }

  /**
   * Keys from a parsed keys file.
   * @throws InvalidOptionsError naming the first bad entry.
   */
  static of(config: unknown, source = 'keys'): KeyStore {
    return new KeyStore(checkKeys(config, source));
  }

  /** @throws InvalidOptionsError when the file cannot be read or is not a valid keys file. */
  static read(path: string): KeyStore {
    let text: string;
    try {
      text = readRegularText(path, MAX_FILE_BYTES);
    } catch (cause) {
      throw new InvalidOptionsError(`Cannot read the keys file ${path}: ${unreadableReason(cause)}`, { cause });
    }
    let json: unknown;
    try {
      json = JSON.parse(withoutBom(text));
    } catch (cause) {
      throw new InvalidOptionsError(`The keys file ${path} is not JSON: ${(cause as Error).message}`, { cause });
    }
    return KeyStore.of(json, path);
  }

  /** The account of a presented key, or null for a missing or unknown key. */
  find(presented: string | null): Account | null {
    if (this.open !== null) return this.open;
    if (presented === null || presented === '') return null;
    const known = this.matched.get(presented);
    if (known !== undefined) return known;
    const id = digestOf(presented);
    const account = this.byId(id);
    if (account === undefined || !timingSafeEqual(Buffer.from(account.id, 'hex'), Buffer.from(id, 'hex'))) return null;
    this.matched.set(presented, account);
    return account;
  }

  /** Whether a text is one of the keys (for the access log, which must not write one; false without keys). */
  isKey(text: string): boolean {
    return this.open === null && this.lengths.has(text.length) && this.listed.has(digestOf(text));
  }

  /** The accounts of the keys used so far (every other key has counted nothing). */
  accounts(): IterableIterator<Account> {
    return this.made.values();
  }

  /** The account of an id (a key's digest; made at its first use), or undefined for no key of the file. */
  byId(id: string): Account | undefined {
    const made = this.made.get(id);
    if (made !== undefined) return made;
    const i = this.listed.get(id);
    if (i === undefined) return undefined;
    const account = new Account(id, this.plans[i], this.quotas[i], this.names[i] ?? `key-${i + 1}`);
    account.linked = this.linked;
    this.made.set(id, account);
    return account;
  }

  /**
   * The counts as saved: per account id, the non-empty minutes of the last
   * 24 hours; `more` adds windows counted elsewhere (a cluster's workers).
   */
  countsJson(nowMs: number, more?: (id: string) => readonly CountWindow[]): string {
    const accounts: Record<string, [number, number][]> = {};
    for (const a of this.made.values()) {
      const sum = new Map<number, number>();
      for (const w of [a.window, ...(more?.(a.id) ?? [])]) for (const [m, n] of w.minutes(nowMs)) sum.set(m, (sum.get(m) ?? 0) + n);
      if (sum.size > 0) accounts[a.id] = [...sum].sort((x, y) => x[0] - y[0]);
    }
    return JSON.stringify({ version: COUNTS_VERSION, savedAt: new Date(nowMs).toISOString(), accounts });
  }

  /** Writes the counts (a new file, then a rename). */
  saveCounts(path: string, nowMs = Date.now(), more?: (id: string) => readonly CountWindow[]): void {
    writeAtomic(path, this.countsJson(nowMs, more));
  }

  /**
   * Adds the counts of a saved file; unknown accounts (keys removed since)
   * and minutes older than 24 hours are left out. A missing file is no
   * counts; a damaged one is an error (the caller decides to go on).
   * @throws InvalidOptionsError
   */
  restoreCounts(path: string, nowMs = Date.now()): void {
    if (!existsSync(path)) {
      // Where it will be saved: a folder that is not there is said now, not at the first save (every count lost).
      const folder = dirname(path);
      if (!existsSync(folder) || !statSync(folder).isDirectory())
        throw new InvalidOptionsError(`The counts file ${path} cannot be written: ${folder} is not a folder.`);
      return;
    }
    let saved: { version?: unknown; accounts?: unknown };
    try {
      saved = JSON.parse(readRegularText(path, MAX_FILE_BYTES)) as typeof saved;
    } catch (cause) {
      throw new InvalidOptionsError(`The counts file ${path} cannot be read: ${unreadableReason(cause)}`, { cause });
    }
    if (
      saved === null ||
      typeof saved !== 'object' ||
      saved.version !== COUNTS_VERSION ||
      typeof saved.accounts !== 'object' ||
      saved.accounts === null
    ) {
      throw new InvalidOptionsError(`The counts file ${path} is not a counts file of version ${COUNTS_VERSION}.`);
    }
    for (const [id, minutes] of Object.entries(saved.accounts as Record<string, unknown>)) {
      if (!Array.isArray(minutes)) continue;
      const account = this.byId(id);
      if (account === undefined) continue;
      account.window.restore(
        minutes.filter(
          (m): m is [number, number] => Array.isArray(m) && m.length === 2 && Number.isSafeInteger(m[0]) && Number.isSafeInteger(m[1]),
        ),
        nowMs,
      );
    }
  }
}

function checkKeys(config: unknown, source: string): KeysConfig {
  const bad = (what: string) => new InvalidOptionsError(`${source}: ${what}`);
  if (config === null || typeof config !== 'object' || !Array.isArray((config as KeysConfig).keys)) {
    throw bad('expected { "keys": [ { "key": "...", "plan": "free" | "paid" | "business", "quota"?: number, "name"?: string } ] }');
  }
  const seen = new Set<string>();
  (config as KeysConfig).keys.forEach((k: unknown, i) => {
    const at = `keys[${i}]`;
    if (k === null || typeof k !== 'object') throw bad(`${at} is not an object`);
    const { key, plan, quota, name } = k as Record<string, unknown>;
    if (typeof key !== 'string' || key.length < 8 || key.trim() !== key)
      throw bad(`${at}.key must be a string of at least 8 characters without surrounding spaces`);
    if (seen.has(key)) throw bad(`${at}.key appears twice`);
    seen.add(key);
    if (!PLANS.includes(plan as Plan)) throw bad(`${at}.plan must be one of ${PLANS.join(', ')}`);
    if (quota !== undefined && !(Number.isSafeInteger(quota) && (quota as number) > 0))
      throw bad(`${at}.quota must be a positive whole number`);
    if (name !== undefined && (typeof name !== 'string' || !/^[\w.@-]{1,64}$/.test(name)))
      throw bad(`${at}.name must be 1 to 64 letters, digits or . _ @ -`);
  });
  return config as KeysConfig;
}
