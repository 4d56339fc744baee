/**
 * The lookup API over data that answers (`Answerable`): `lookup()`,
 * `tryLookup()`, `lookupJson()`, `writeJson()`, `tryWriteJson()`, `field()`, `threat()`,
 * `select()` and `bulk()`, the same for an engine over files (`Engine`,
 * whose methods call these and carry their documentation) and one over
 * bytes (`BytesEngine`). Nothing here reaches the file system: the
 * `iprecord/bytes` entry is built from it.
 */

import { InvalidBulkError, InvalidFieldError, InvalidOptionsError, isIprecordError } from '../contract/errors.js';
import { checkOptions } from './option-names.js';
import { Bad, type Parsed } from '../ip/check.js';
import { isFieldName, parseFields } from '../record/fields.js';
import type { Selected } from '../record/select.js';
import { Answers, type Answerable, type AnswerOptions } from './answers.js';
import { GROUP as PREFETCH_GROUP, prefetch } from '../dataset/prefetch.js';
import { utf8Length, writeUtf8 } from '../platform/bytes.js';
import type { BulkError, FieldName, Fields, IpRecord, RecordOf, Threat } from '../contract/types.js';

export type { Answerable, AnswerOptions } from './answers.js';

export interface LookupOptions<F extends Fields | undefined = Fields | undefined> extends AnswerOptions {
  /** Only these fields, in this order: `'ip,city'` or `['ip', 'city']` (the answer's type has those members: `RecordOf`). */
  fields?: F;
}

/** Chosen fields of a record as a function of the address (`select`); `try()` answers an error as a value. */
export interface Selector<P extends string> {
  (ip: string): Selected<P>;
  try(ip: string): Selected<P> | BulkError;
}

const ANSWER_OPTIONS = ['count', 'basicThreat'] as const satisfies readonly (keyof AnswerOptions)[];
const LOOKUP_OPTIONS = ['fields', ...ANSWER_OPTIONS] as const satisfies readonly (keyof LookupOptions)[];

export class Lookups<S extends Answerable> {
  /** The record, JSON and chosen fields of a parsed address, with the per-lookup state they reuse. */
  readonly answers: Answers;
  /** The address check of `answers` (its parsed address). */
  readonly ip: Answers['ip'];
  /** Whether `first` was called. */
  private begun = false;

  /**
   * `live`: the data answering now (throwing when there is none); `first`:
   * called before the first address is checked (the engine's warning).
   */
  constructor(
    flagBaseUrl: string,
    readonly live: () => S,
    private readonly first: () => void,
  ) {
    this.answers = new Answers(flagBaseUrl);
    this.ip = this.answers.ip;
  }

  /** Marks the first lookup's step done (a command that called it at its start). */
  begin(): void {
    this.begun = true;
  }

  private check(ip: unknown): Bad {
    if (!this.begun) this.start();
    return this.ip.check(ip);
  }

  /** The address parsed and checked (into `ip.words`; reused). @throws InvalidIpError, PrivateIpError, ReservedIpError */
  private address(ip: unknown): Parsed {
    if (!this.begun) this.start();
    return this.ip.address(ip);
  }

  private start(): void {
    this.begun = true;
    this.first();
  }

  lookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> {
    checkAnswerOptions(options, LOOKUP_OPTIONS);
    const snap = this.live();
    const fields = options?.fields === undefined ? null : parseFields(options.fields);
    return this.answers.record(snap, this.address(ip), fields, options) as RecordOf<F>;
  }

  tryLookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> | BulkError {
    checkAnswerOptions(options, LOOKUP_OPTIONS);
    const snap = this.live();
    const fields = options?.fields === undefined ? null : parseFields(options.fields);
    const bad = this.check(ip);
    if (bad === Bad.None) return this.answers.record(snap, this.ip.parsed, fields, options) as RecordOf<F>;
    return this.ip.failure(bad, ip);
  }

  lookupJson(ip: string, options?: LookupOptions): string {
    checkAnswerOptions(options, LOOKUP_OPTIONS);
    if (options?.fields !== undefined && parseFields(options.fields) !== null) return JSON.stringify(this.lookup(ip, options));
    const snap = this.live();
    return this.answers.json(snap, this.address(ip), options);
  }

  writeJson(ip: string, target: Uint8Array, offset = 0, options?: LookupOptions): number {
    checkTarget('writeJson', target, offset, options);
    if (options?.fields !== undefined && parseFields(options.fields) !== null)
      return writeText(this.lookupJson(ip, options), target, offset);
    const snap = this.live();
    return this.answers.writeInto(snap, this.address(ip), options, target, offset);
  }

  tryWriteJson(ip: string, target: Uint8Array, offset = 0, options?: LookupOptions): number {
    checkTarget('tryWriteJson', target, offset, options);
    const snap = this.live();
    const fields = options?.fields === undefined ? null : parseFields(options.fields);
    const bad = this.check(ip);
    if (bad !== Bad.None) return -this.ip.writeFailure(bad, ip, target, offset);
    if (fields !== null) return writeText(JSON.stringify(this.answers.record(snap, this.ip.parsed, fields, options)), target, offset);
    return this.answers.writeInto(snap, this.ip.parsed, options, target, offset);
  }

  /** The address parsed and checked, or null with the message of what keeps it from having a record. */
  checked(ip: string, failure: { message: string }): Parsed | null {
    const bad = this.check(ip);
    if (bad === Bad.None) return this.ip.parsed;
    failure.message = this.ip.message(bad, ip);
    return null;
  }

  field<K extends FieldName>(ip: string, name: K, options?: AnswerOptions): IpRecord[K] | null {
    checkAnswerOptions(options, ANSWER_OPTIONS);
    if (!isFieldName(name)) throw new InvalidFieldError(name);
    const value = this.lookup(ip, options === undefined ? undefined : { count: options.count, basicThreat: options.basicThreat })[name];
    return value === undefined ? null : value;
  }

  threat(ip: string, options?: AnswerOptions): Threat {
    checkAnswerOptions(options, ANSWER_OPTIONS);
    const snap = this.live();
    return this.answers.threatOf(snap, this.address(ip), options?.basicThreat === true);
  }

  select<const P extends string>(paths: string | readonly P[], options?: AnswerOptions): Selector<P> {
    checkAnswerOptions(options, ANSWER_OPTIONS);
    const answer = this.answers.selection(paths, options) as (snap: S, parsed: Parsed) => Selected<P>;
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

  bulk<const F extends Fields | undefined = undefined>(ips: readonly string[], options?: LookupOptions<F>): (RecordOf<F> | BulkError)[] {
    if (!Array.isArray(ips)) throw new InvalidBulkError();
    checkAnswerOptions(options, LOOKUP_OPTIONS);
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
}

/**
 * Refuses options a lookup does not take (`checkOptions`), and values of
 * the wrong type: a `count` that is not text would be written into the
 * record as it is (`"count":5`, `"count":{}`), where the record has a string.
 * @throws InvalidOptionsError
 */
function checkAnswerOptions(options: AnswerOptions | undefined, names: readonly string[]): void {
  checkOptions(options, names);
  if (options === undefined) return;
  const { count, basicThreat } = options as { count?: unknown; basicThreat?: unknown };
  if (count !== undefined && typeof count !== 'string')
    throw new InvalidOptionsError(`Option "count" must be a string (the count's text), not ${count === null ? 'null' : typeof count}.`);
  if (basicThreat !== undefined && typeof basicThreat !== 'boolean')
    throw new InvalidOptionsError('Option "basicThreat" must be true or false.');
}

/** @throws TypeError when `target` is not bytes; RangeError when `offset` is not a whole number within it; the options' errors */
function checkTarget(method: string, target: Uint8Array, offset: number, options: LookupOptions | undefined): void {
  if (!(target instanceof Uint8Array)) throw new TypeError(method + ' writes into a Uint8Array (or a Buffer)');
  checkAnswerOptions(options, LOOKUP_OPTIONS);
  if (!Number.isInteger(offset) || offset < 0 || offset > target.length)
    throw new RangeError(`offset ${offset} is not within the target's ${target.length} bytes`);
}

/** Writes `text` as UTF-8 into `target` from `offset` where it fits whole (else nothing); its length in bytes. */
function writeText(text: string, target: Uint8Array, offset: number): number {
  const n = utf8Length(text);
  if (n <= target.length - offset) writeUtf8(target, text, offset);
  return n;
}
