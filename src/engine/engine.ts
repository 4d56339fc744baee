/**
 * The engine: `open()` once, then synchronous lookups. A record is its
 * range's static values from the compiled dataset (`dataset/`), with what
 * changes per lookup written between them: `ip`, `asn.route`,
 * `time_zone`'s clock and `count` (`contract/template.ts`).
 *
 * Over 300 lines: the public Engine, whose methods are the lookup API, each short; its inside is in answers.ts, snapshot.ts and held-data.ts.
 */

import { EventEmitter } from 'node:events';
import { watchDataset } from '../dataset/watch.js';
import { InvalidBulkError, type InvalidDatasetError, InvalidFieldError, isIprecordError } from '../contract/errors.js';
import { HeldData } from './held-data.js';
import { Bad, type Parsed } from '../ip/check.js';
import { checkOptions, resolveOptions, type OpenOptions, type ResolvedOptions, type SharedFiles } from './options.js';
import { isFieldName, parseFields } from '../record/fields.js';
import { Snapshot } from './snapshot.js';
import type { Selected } from '../record/select.js';
import { Answers, type AnswerOptions } from './answers.js';
import { GROUP as PREFETCH_GROUP, prefetch } from '../dataset/prefetch.js';
import { describeEngine, MISSING_LISTS, missingListsWarning, type EngineInfo } from './info.js';
import { Compared } from '../evidence/compare.js';
import { type DamagedHistory, explainRecord, seenPath, type Explanation } from '../evidence/explain.js';

export type { EngineInfo, FeedState, ListState } from './info.js';
import type { BulkError, FieldName, Fields, IpRecord, RecordOf, Threat } from '../contract/types.js';

export type { AnswerOptions } from './answers.js';

export interface LookupOptions<F extends Fields | undefined = Fields | undefined> extends AnswerOptions {
  /** Only these fields, in this order: `'ip,city'` or `['ip', 'city']` (the answer's type has those members: `RecordOf`). */
  fields?: F;
}

/** An opened dataset. Lookups are synchronous; `reload()` swaps the data atomically. */
export interface EngineEvents {
  /** The data was reloaded (by `reload()` or by watching the dataset directory). */
  reload: [info: { readonly loadedAt: string }];
  /** A reload started by watching failed; the engine kept its data. */
  error: [error: Error];
  /** The data failed its check (its mapped file written in place, or bytes damaged): lookups throw this until good data is loaded. */
  damaged: [error: InvalidDatasetError];
}

/** Chosen fields of a record as a function of the address (`Engine.select`); `try()` answers an error as a value. */
export interface Selector<P extends string> {
  (ip: string): Selected<P>;
  try(ip: string): Selected<P> | BulkError;
}

/** What the package's own commands and server reach of an engine (`engine/inside.ts`), beside its API. */
export interface EngineInside {
  readonly options: ResolvedOptions;
  readonly answers: Answers;
  /** The snapshot answering now. @throws ClosedError, or the data's damage */
  live(): Snapshot;
  /** The address parsed and checked, or null with the message of what keeps it from having a record. */
  checked(ip: string, failure: { message: string }): Parsed | null;
  warnMissingLists(): void;
}

let create: (snapshot: Snapshot, options: ResolvedOptions) => Engine;
let reach: (engine: Engine) => EngineInside;

/** The inside of an engine, for the package's commands and server (`engine/inside.ts`). */
export function insideOf(engine: Engine): EngineInside {
  return reach(engine);
}

const ANSWER_OPTIONS = ['count', 'basicThreat'] as const satisfies readonly (keyof AnswerOptions)[];
const LOOKUP_OPTIONS = ['fields', ...ANSWER_OPTIONS] as const satisfies readonly (keyof LookupOptions)[];

/** The missing-lists warnings this process gave (`warnMissingLists`). */
const toldMissing = new Set<string>();

export class Engine extends EventEmitter<EngineEvents> {
  /** The data answering, and its reloads, checks and damage. */
  private readonly data: HeldData;
  private watcher: { close(): void } | null = null;
  private readonly options: ResolvedOptions;
  /** The record, JSON and chosen fields of a parsed address, with the per-lookup state they reuse. */
  private readonly answers: Answers;
  /** The address check of `answers` (its parsed address). */
  private readonly ip: Answers['ip'];

  static {
    create = (snapshot, options) => new Engine(snapshot, options);
    reach = (e) => e.inside;
  }

  /** What the package's commands and server reach (`engine/inside.ts`): not part of the API. */
  private readonly inside: EngineInside;

  /** The location databases `explain()` compares the country with (`compare`), or null. */
  private readonly compared: Compared | null;

  private constructor(snapshot: Snapshot, options: ResolvedOptions) {
    super();
    this.options = options;
    this.compared = options.compare.length === 0 ? null : new Compared(options.compare);
    this.answers = new Answers(options.flagBaseUrl);
    this.data = new HeldData(snapshot, options, {
      swapped: (next, otherDataset) => {
        // Threat objects are kept by where a dataset holds them: another dataset has other rows.
        if (otherDataset) this.answers.forget();
        this.emit('reload', { loadedAt: next.loadedAt.toISOString() });
      },
      stopped: (damage) => {
        this.answers.forget();
        this.emit('damaged', damage);
      },
    });
    this.ip = this.answers.ip;
    this.inside = {
      options,
      answers: this.answers,
      live: () => this.live(),
      checked: (ip, failure) => this.checked(ip, failure),
      warnMissingLists: () => this.warnMissingLists(),
    };
    // A new build swapped in: reloaded. Without an 'error' listener a failure is dropped: the old data stays in use.
    if (options.watch && options.data !== null)
      this.watcher = watchDataset(options.data, () => {
        this.reload().catch((e: unknown) => {
          if (this.listenerCount('error') > 0) this.emit('error', e as Error);
        });
      });
  }

  private live(): Snapshot {
    return this.data.live();
  }

  /** Checks an address (`AddressCheck.check`), after the missing-lists warning of the engine's first lookup. */
  private check(ip: unknown): Bad {
    if (!this.warned) this.warnMissingLists();
    return this.ip.check(ip);
  }

  /**
   * The address parsed and checked (into `this.ip.words`; reused).
   * @throws InvalidIpError, PrivateIpError, ReservedIpError
   */
  private address(ip: unknown): Parsed {
    if (!this.warned) this.warnMissingLists();
    return this.ip.address(ip);
  }

  /**
   * The full record of an address, or the chosen fields in the order given.
   * Nested objects other than `time_zone`, `asn` and `carrier` are shared and frozen.
   * @throws InvalidIpError, PrivateIpError, ReservedIpError, InvalidFieldError, ClosedError
   */
  lookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> {
    checkOptions(options, LOOKUP_OPTIONS);
    const snap = this.live();
    const fields = options?.fields === undefined ? null : parseFields(options.fields);
    return this.answers.record(snap, this.address(ip), fields, options) as RecordOf<F>;
  }

  /**
   * `lookup()` that answers an address without a record with its error as
   * a value, `{ message, code, status }` as `bulk()` gives it, instead of
   * throwing: for loops over logs, where private and malformed addresses
   * are many (it costs what the check costs; a thrown error, about 0.5 µs
   * more). Tell the two apart with `'code' in answer`.
   * @throws InvalidFieldError, ClosedError
   */
  tryLookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> | BulkError {
    checkOptions(options, LOOKUP_OPTIONS);
    const snap = this.live();
    const fields = options?.fields === undefined ? null : parseFields(options.fields);
    const bad = this.check(ip);
    if (bad === Bad.None) return this.answers.record(snap, this.ip.parsed, fields, options) as RecordOf<F>;
    return this.ip.failure(bad, ip);
  }

  /**
   * The record as JSON text: the same text as `JSON.stringify(lookup(ip,
   * options))`, written from the parts the compiler rendered of the
   * record's rows (`record/render.ts`), with what changes per lookup
   * between them.
   */
  lookupJson(ip: string, options?: LookupOptions): string {
    checkOptions(options, LOOKUP_OPTIONS);
    if (options?.fields !== undefined && parseFields(options.fields) !== null) return JSON.stringify(this.lookup(ip, options));
    const snap = this.live();
    return this.answers.json(snap, this.address(ip), options);
  }

  /**
   * Writes the record's JSON, the text `lookupJson(ip, options)` gives, as
   * UTF-8 into `target` from `offset` (default 0), and answers its length
   * in bytes: for servers and writers of files, which send bytes (no string
   * is made). A record longer than the room from `offset` to the end of
   * `target` is not written whole (nothing past that end), and the length
   * answered is more than the room: write it again where it fits (a full
   * record of the default data takes 1.0 to 1.7 kB).
   * @throws the errors of `lookup()`; RangeError when `offset` is not a whole number within `target`
   */
  writeJson(ip: string, target: Uint8Array, offset = 0, options?: LookupOptions): number {
    if (!(target instanceof Uint8Array)) throw new TypeError('writeJson writes into a Uint8Array (or a Buffer)');
    checkOptions(options, LOOKUP_OPTIONS);
    if (!Number.isInteger(offset) || offset < 0 || offset > target.length)
      throw new RangeError(`offset ${offset} is not within the target's ${target.length} bytes`);
    const view = target instanceof Buffer ? target : Buffer.from(target.buffer, target.byteOffset, target.byteLength);
    if (options?.fields !== undefined && parseFields(options.fields) !== null) {
      const text = this.lookupJson(ip, options);
      view.write(text, offset);
      return Buffer.byteLength(text);
    }
    const snap = this.live();
    return this.answers.writeInto(snap, this.address(ip), options, view, offset);
  }

  /** The address parsed and checked, or null with the message of what keeps it from having a record. */
  private checked(ip: string, failure: { message: string }): Parsed | null {
    const bad = this.check(ip);
    if (bad === Bad.None) return this.ip.parsed;
    failure.message = this.ip.message(bad, ip);
    return null;
  }

  /**
   * One field of the record, as a bare value.
   * @throws InvalidFieldError, and the errors of `lookup`
   */
  field<K extends FieldName>(ip: string, name: K, options?: AnswerOptions): IpRecord[K] | null {
    checkOptions(options, ANSWER_OPTIONS);
    if (!isFieldName(name)) throw new InvalidFieldError(name);
    const value = this.lookup(ip, options === undefined ? undefined : { count: options.count, basicThreat: options.basicThreat })[name];
    return value === undefined ? null : value;
  }

  /**
   * The threat object of an address (the service's `/<ip>/threat`).
   * @throws the errors of `lookup`
   */
  threat(ip: string, options?: AnswerOptions): Threat {
    checkOptions(options, ANSWER_OPTIONS);
    const snap = this.live();
    return this.answers.threatOf(snap, this.address(ip), options?.basicThreat === true);
  }

  /**
   * The record of an address with the evidence behind it: the databases
   * and time zone rules it comes from, how `asn.type` was decided, where
   * the zone came from, the country of each `compare` database, and each
   * threat list that holds the address or held it in the last 90 days,
   * with the list's range that holds it, when the list first and last held
   * it and its latest download (kept by each `iprecord build` and
   * `update`; `lists` is null where the data keeps no such record). Opens
   * the build's `seen.bin` on each call: for investigating an address, not
   * for every request. A seen.bin that cannot be read or is damaged (its
   * checksum, checked once per file) is answered as `lists: null` with a
   * warning (`IPRECORD_SEEN_DAMAGED`), or thrown where `damagedHistory` is
   * `throw`.
   * @throws the errors of `lookup`; InvalidDatasetError for a damaged seen.bin where `damagedHistory` is `throw`
   */
  explain(ip: string, options: { readonly damagedHistory?: DamagedHistory } = {}): Explanation {
    const record = this.lookup(ip);
    const snap = this.live();
    const seen = seenPath(snap.build, snap.threatPath);
    return explainRecord(ip, record, snap.dataset, this.info(), seen, this.compared, options.damagedHistory ?? 'warn');
  }

  /**
   * A function that answers chosen fields of an address's record, read on
   * their own (only the rows that hold them): paths are members
   * (`'country_code'`) or members of members (`'asn.asn'`,
   * `'threat.is_tor'`, `'threat.scores.trust_score'`), in a list or text
   * separated by commas, compiled once. It answers an object with each
   * path as a key, in the order given (null where the record, or an object
   * on the way, has none), and throws as `lookup()` does; its `try()`
   * answers an address without a record with its error as a value, as
   * `tryLookup()` does. Each answer counts as a lookup.
   * @throws InvalidFieldError naming a path the record has not
   */
  select<const P extends string>(paths: string | readonly P[], options?: AnswerOptions): Selector<P> {
    checkOptions(options, ANSWER_OPTIONS);
    const answer = this.answers.selection(paths, options) as (snap: Snapshot, parsed: Parsed) => Selected<P>;
    const selector = (ip: string) => {
      const snap = this.live();
      return answer(snap, this.address(ip));
    };
    selector.try = (ip: string): Selected<P> | BulkError => {
      const snap = this.live();
      const bad = this.check(ip);
      if (bad === Bad.None) return answer(snap, this.ip.parsed);
      return this.ip.failure(bad, ip);
    };
    return selector;
  }

  /**
   * Records for many addresses, in input order. A bad entry becomes
   * `{ message, code, status }` in its place; the others still answer.
   * There is no limit on the number of addresses.
   * @throws InvalidBulkError when `ips` is not an array; InvalidFieldError
   */
  bulk<const F extends Fields | undefined = undefined>(ips: readonly string[], options?: LookupOptions<F>): (RecordOf<F> | BulkError)[] {
    if (!Array.isArray(ips)) throw new InvalidBulkError();
    checkOptions(options, LOOKUP_OPTIONS);
    const ds = this.live().dataset;
    if (options?.fields !== undefined) parseFields(options.fields);
    return ips.map((ip, i) => {
      // What the records of the next addresses are read from, read together (`dataset/prefetch.ts`).
      if (i % PREFETCH_GROUP === 0) prefetch(ds, ips, i, i + PREFETCH_GROUP, false);
      try {
        return this.tryLookup<F>(ip, options);
      } catch (e) {
        // A dataset error at one address (`InvalidDatasetError`) is that entry's answer too.
        if (!isIprecordError(e) || e.code === 'CLOSED') throw e;
        return { message: e.message, code: e.code, status: e.status };
      }
    });
  }

  /**
   * The files of the current data, for engines in worker threads of this
   * process: post the result to a worker (as `workerData` or a message)
   * and open there with `open({ ...options, shared })`. Files read into
   * memory (`memory: 'read'`) are in shared memory and are not copied;
   * mapped files are mapped again by the worker (one copy in the page
   * cache either way).
   * @throws ClosedError
   */
  share(): SharedFiles {
    return this.live().share();
  }

  /** Whether the missing-lists warning was considered (once per engine). */
  private warned = false;

  /**
   * A process warning (code IPRECORD_MISSING_LISTS) when threat categories
   * have no loaded source, whose flags are then false for every address:
   * at an engine's first lookup or when a command calls this at start, once
   * per process for each message, not with IPRECORD_QUIET=1.
   */
  private warnMissingLists(): void {
    this.warned = true;
    // An engine over another engine's files (a worker thread's): that one tells.
    if (this.options.shared.size > 0) return;
    const message = missingListsWarning(this.info());
    // Once per process for each message (engines of one process over the same data tell it once); IPRECORD_QUIET=1 silences it.
    if (message === null || toldMissing.has(message) || process.env.IPRECORD_QUIET === '1') return;
    toldMissing.add(message);
    process.emitWarning(message, { code: MISSING_LISTS });
  }

  /** What is loaded: databases, threat feeds and categories with their state and age, lookups in the last 24 hours. */
  info(): EngineInfo {
    return describeEngine(this.live(), this.options, this.ip.special, this.answers.counter.peek(Date.now()));
  }

  /**
   * Reads the whole dataset file again: its checksum, and that every
   * range, row and value makes a well-formed record (the check
   * opening makes of a file not sealed; about 1 s for the default data,
   * on this thread). `iprecord info` runs it.
   * @throws InvalidDatasetError naming the defect; ClosedError
   */
  verify(): void {
    this.live().dataset.verify();
  }

  /**
   * Opens the databases again and swaps them in as one snapshot. Lookups
   * before the swap answer from the old data, lookups after from the new;
   * on failure the engine keeps the old data and the error is thrown, but
   * for one case: a mapped dataset file written in place (its pages are
   * what lookups read) that fails its check. Then no answer comes from it:
   * good data takes its place where there is some (data compiled from
   * databases is set aside as `<file>.damaged` and compiled again; a
   * dataset directory's build gives way to the build before it), else
   * lookups throw that InvalidDatasetError until good data is loaded.
   */
  reload(): Promise<void> {
    return this.data.reload();
  }

  /**
   * Whether the dataset file is still the bytes this engine answers from,
   * by a stat (no read): `unchanged`; `reloaded` when a mapped file was
   * written in place and still passes its check (or good data was loaded
   * after damage); `damaged` when it fails (see `reload()`). For a server
   * to call every few seconds.
   * @throws ClosedError
   */
  checkData(): Promise<'unchanged' | 'reloaded' | 'damaged'> {
    return this.data.checkData();
  }

  /**
   * Checks the dataset's bytes whole, as opening a file not sealed does
   * (`verify()`), on a worker thread while lookups go on; a defect found
   * is handled as a damaged file by `reload()`. For a server's schedule.
   * @throws ClosedError
   */
  verifyInBackground(): Promise<void> {
    return this.data.verifyInBackground();
  }

  /** Why the engine answers nothing now (its data failed its check), or null. */
  get damaged(): InvalidDatasetError | null {
    return this.data.damage;
  }

  /** Releases the data and stops watching. Later calls throw `ClosedError`. */
  close(): void {
    this.data.close();
    this.answers.forget();
    this.watcher?.close();
    this.watcher = null;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.data.closed;
  }
}

/**
 * Opens the databases (the embedded defaults unless told otherwise).
 * @throws InvalidOptionsError, InvalidDatasetError
 */
export async function open(options?: OpenOptions): Promise<Engine> {
  const resolved = resolveOptions(options);
  return create(await Snapshot.open(resolved), resolved);
}

/**
 * `open()`, synchronously.
 * @throws InvalidOptionsError, InvalidDatasetError
 */
export function openSync(options?: OpenOptions): Engine {
  const resolved = resolveOptions(options);
  return create(Snapshot.openSync(resolved), resolved);
}
