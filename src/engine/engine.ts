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
import type { InvalidDatasetError } from '../contract/errors.js';
import { HeldData } from './held-data.js';
import type { Parsed } from '../ip/check.js';
import { resolveOptions, type OpenOptions, type ResolvedOptions, type SharedFiles } from './options.js';
import { Snapshot } from './snapshot.js';
import type { Answers, AnswerOptions } from './answers.js';
import { Lookups, type LookupOptions, type Selector } from './lookups.js';
import { describeEngine, MISSING_LISTS, missingListsWarning, type EngineInfo } from './info.js';
import { Compared } from '../evidence/compare.js';
import { type DamagedHistory, explainRecord, seenPath, type Explanation } from '../evidence/explain.js';

export type { EngineInfo, FeedState, ListState } from './info.js';
import type { BulkError, FieldName, Fields, IpRecord, RecordOf, Threat } from '../contract/types.js';

export type { AnswerOptions } from './answers.js';

export type { LookupOptions, Selector } from './lookups.js';

/** An opened dataset. Lookups are synchronous; `reload()` swaps the data atomically. */
export interface EngineEvents {
  /** The data was reloaded (by `reload()` or by watching the dataset directory). */
  reload: [info: { readonly loadedAt: string }];
  /** A reload started by watching failed; the engine kept its data. */
  error: [error: Error];
  /** The data failed its check (its mapped file written in place, or bytes damaged): lookups throw this until good data is loaded. */
  damaged: [error: InvalidDatasetError];
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

/** The missing-lists warnings this process gave (`warnMissingLists`). */
const toldMissing = new Set<string>();

export class Engine extends EventEmitter<EngineEvents> {
  /** The data answering, and its reloads, checks and damage. */
  private readonly data: HeldData;
  private watcher: { close(): void } | null = null;
  private readonly options: ResolvedOptions;
  /** The lookup API over the data answering (`lookups.ts`), which the methods below call. */
  private readonly api: Lookups<Snapshot>;
  /** The record, JSON and chosen fields of a parsed address, with the per-lookup state they reuse (the API's). */
  private readonly answers: Answers;

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
    this.api = new Lookups(
      options.flagBaseUrl,
      () => this.live(),
      () => this.warnMissingLists(),
    );
    this.answers = this.api.answers;
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
    this.inside = {
      options,
      answers: this.answers,
      live: () => this.live(),
      checked: (ip, failure) => this.api.checked(ip, failure),
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

  /**
   * The full record of an address, or the chosen fields in the order given.
   * Nested objects other than `time_zone`, `asn` and `carrier` are shared and frozen.
   * @throws InvalidIpError, PrivateIpError, ReservedIpError, InvalidFieldError, ClosedError
   */
  lookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> {
    return this.api.lookup(ip, options);
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
    return this.api.tryLookup(ip, options);
  }

  /**
   * The record as JSON text: the same text as `JSON.stringify(lookup(ip,
   * options))`, written from the parts the compiler rendered of the
   * record's rows (`record/render.ts`), with what changes per lookup
   * between them.
   */
  lookupJson(ip: string, options?: LookupOptions): string {
    return this.api.lookupJson(ip, options);
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
    return this.api.writeJson(ip, target, offset, options);
  }

  /**
   * `writeJson()` with an address that has no record answered as a value,
   * as `tryLookup()` is to `lookup()`: its error's JSON, the text
   * `JSON.stringify(tryLookup(ip))` gives (`{"message":…,"code":…,"status":400}`),
   * written in its place, and its length answered negative (-n). Lengths
   * and room as `writeJson()`'s. For writers of logs and servers, whose
   * traffic holds private and malformed addresses: nothing is thrown.
   * @throws RangeError when `offset` is not a whole number within `target`, and an option's error
   */
  tryWriteJson(ip: string, target: Uint8Array, offset = 0, options?: LookupOptions): number {
    return this.api.tryWriteJson(ip, target, offset, options);
  }

  /**
   * One field of the record, as a bare value.
   * @throws InvalidFieldError, and the errors of `lookup`
   */
  field<K extends FieldName>(ip: string, name: K, options?: AnswerOptions): IpRecord[K] | null {
    return this.api.field(ip, name, options);
  }

  /**
   * The threat object of an address (the service's `/<ip>/threat`).
   * @throws the errors of `lookup`
   */
  threat(ip: string, options?: AnswerOptions): Threat {
    return this.api.threat(ip, options);
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
    return this.api.select(paths, options);
  }

  /**
   * Records for many addresses, in input order. A bad entry becomes
   * `{ message, code, status }` in its place; the others still answer.
   * There is no limit on the number of addresses.
   * @throws InvalidBulkError when `ips` is not an array; InvalidFieldError
   */
  bulk<const F extends Fields | undefined = undefined>(ips: readonly string[], options?: LookupOptions<F>): (RecordOf<F> | BulkError)[] {
    return this.api.bulk(ips, options);
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

  /**
   * A process warning (code IPRECORD_MISSING_LISTS) when threat categories
   * have no loaded source, whose flags are then false for every address:
   * at an engine's first lookup or when a command calls this at start, once
   * per process for each message, not with IPRECORD_QUIET=1.
   */
  private warnMissingLists(): void {
    this.api.begin();
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
    return describeEngine(this.live(), this.options, this.api.ip.special, this.answers.counter.peek(Date.now()));
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
