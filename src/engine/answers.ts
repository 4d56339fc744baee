/**
 * How an engine answers from its snapshot: the record of a parsed address
 * as an object, as JSON text or as bytes, its threat object, and chosen
 * fields, with what changes per lookup (`ip`, the clock, `count`) filled
 * in. One per engine, whose lookups are synchronous: the address check,
 * the render state and the scratch buffer are reused.
 */

import { specialTable } from '../ip/special.js';
import { AddressCheck, Parsed } from '../ip/check.js';
import { ByteWriter } from '../text/writer.js';
import { latin1Text } from '../platform/bytes.js';
import { textWords } from '../text/words.js';
import type { RenderState } from '../record/render.js';
import { RECORD, THR, THREAT, type Dataset, findRange } from '../dataset/format.js';
import { CountWindow } from '../record/count.js';
import { compileCells } from '../record/cells.js';
import { compileSelection, fieldSelection, type Reading } from '../record/select.js';
import type { RecordObjects } from '../record/objects.js';
import type { ZoneClock } from '../time/zone.js';
import { nowMicros } from '../time/zone.js';
import type { FieldName, IpRecord, Threat } from '../contract/types.js';

/** How a record is answered for one caller (the server's keys and plans). */
export interface AnswerOptions {
  /**
   * The text of `count` (a server answering for one API key passes that
   * key's count). Default: the engine's lookups in the last 24 hours.
   */
  count?: string;
  /**
   * Leaves `is_vpn` and `scores` out of `threat`: the service's shape for
   * plans below Business (the object then lacks the two members its type
   * names).
   * @default false
   */
  basicThreat?: boolean;
}

/** What answers read of the data: a snapshot of files (`snapshot.ts`), or a bytes engine's data (`bytes.ts`). */
export interface Answerable {
  readonly dataset: Dataset;
  readonly objects: RecordObjects;
  readonly clock: ZoneClock;
}

const NO_ADDRESS = new Parsed(new Uint32Array(4));

/** Threat objects of a compiled dataset kept (the default data has a few dozen). */
const THREAT_CACHE_SIZE = 4096;

export class Answers {
  readonly counter = new CountWindow();
  /** The address of the lookup under way, parsed and checked (reused: lookups are synchronous). */
  readonly ip = new AddressCheck(specialTable());
  /** Where `bytes()` writes a record before making it a string. */
  private readonly scratch = new ByteWriter(4096);
  /** Where `writeInto()` writes: over the caller's buffer. */
  private readonly caller = new ByteWriter(0);
  /** What a record from a compiled dataset is written with besides its static values, reused. */
  private readonly render: RenderState;
  /**
   * Threat objects of the dataset, parsed from their text, by where its
   * threat table holds it: the one cache of the engine, bounded (the
   * default data has a few threat rows; a dataset with threat feeds
   * compiled in, some thousands).
   */
  private readonly threats = new Map<number, Threat>();

  /** What chosen fields are read from, reused (`chosen`); its threat is the basic form when `render.basic`. */
  private readonly reading: Reading;

  constructor(private readonly flagBaseUrl: string) {
    const flagText = JSON.stringify(flagBaseUrl).slice(1, -1);
    const flag = textWords([flagText]);
    this.render = {
      address: NO_ADDRESS,
      now: 0,
      count: '',
      ownCount: true,
      basic: false,
      flagBase: flag.words,
      flagBaseEnd: flag.at[1],
    };
    const r = { threat: () => this.threat(r.ds, r.ref, this.render.basic), flagBase: flagBaseUrl, basic: false, now: -1 } as Reading;
    this.reading = r;
  }

  /** Fills the per-lookup members of a record from a compiled dataset. */
  private renderState(address: Parsed, options: AnswerOptions | undefined): RenderState {
    const s = this.render;
    s.now = nowMicros();
    s.count = countOf(this.counter.tick(s.now), options);
    s.ownCount = options === undefined || options.count === undefined;
    s.basic = options !== undefined && options.basicThreat === true;
    s.address = address;
    return s;
  }

  /** The record of the parsed address (in `ip.words`), or its chosen fields (read on their own). */
  record(snap: Answerable, parsed: Parsed, fields: readonly FieldName[] | null, options: AnswerOptions | undefined): IpRecord {
    if (fields !== null) return this.chosen(snap, parsed, fieldSelection(fields), options) as unknown as IpRecord;
    const ds = snap.dataset;
    const ref = findRange(ds, parsed.version, this.ip.words);
    const s = this.renderState(parsed, options);
    const threat = this.threat(ds, ref, s.basic);
    return snap.objects.record(snap.clock, parsed.version, this.ip.words, ref, s, threat, this.flagBaseUrl);
  }

  /** The record's JSON text. */
  json(snap: Answerable, parsed: Parsed, options: AnswerOptions | undefined): string {
    const ref = findRange(snap.dataset, parsed.version, this.ip.words);
    return snap.objects.json(snap.clock, parsed.version, this.ip.words, ref, this.renderState(parsed, options));
  }

  /** Writes the record's JSON text in UTF-8 to `out`. */
  write(snap: Answerable, parsed: Parsed, options: AnswerOptions | undefined, out: ByteWriter): void {
    const ref = findRange(snap.dataset, parsed.version, this.ip.words);
    snap.objects.write(snap.clock, parsed.version, this.ip.words, ref, this.renderState(parsed, options), out);
  }

  /**
   * Writes the record's JSON text in UTF-8 into `target` from `offset`, as far as its end; its length in bytes (more
   * than the room when it did not fit).
   */
  writeInto(snap: Answerable, parsed: Parsed, options: AnswerOptions | undefined, target: Uint8Array, offset: number): number {
    const out = this.caller;
    out.into(target, offset);
    this.write(snap, parsed, options, out);
    return out.used - offset;
  }

  /** The record's JSON text as byte text (one character per UTF-8 byte). */
  bytes(snap: Answerable, parsed: Parsed, options: AnswerOptions | undefined): string {
    const out = this.scratch;
    out.used = 0;
    this.write(snap, parsed, options, out);
    return latin1Text(out.buf, 0, out.used);
  }

  /** The threat object of the parsed address, counted as a lookup. */
  threatOf(snap: Answerable, parsed: Parsed, basic: boolean): Threat {
    this.counter.tick(Date.now());
    const ds = snap.dataset;
    return this.threat(ds, findRange(ds, parsed.version, this.ip.words), basic);
  }

  /** The threat object (or its basic form) of a range, frozen, kept by where the dataset holds its text (a dataset has few: one per label and flags). */
  private threat(ds: Dataset, ref: number, basic: boolean): Threat {
    const at = ds.records[(ref >>> 8) * RECORD + 2] * THREAT + (basic ? THR.basic : THR.object);
    let t = this.threats.get(at);
    if (t === undefined) {
      const parsed = JSON.parse(ds.json(ds.threats, at)) as Threat;
      Object.freeze(parsed.blocklists);
      if (parsed.scores !== undefined) Object.freeze(parsed.scores);
      t = Object.freeze(parsed);
      if (this.threats.size >= THREAT_CACHE_SIZE) this.threats.clear();
      this.threats.set(at, t);
    }
    return t;
  }

  /** Chosen paths of the parsed address's record (`Engine.select`), compiled once. */
  selection(paths: string | readonly string[], options: AnswerOptions | undefined): (snap: Answerable, parsed: Parsed) => unknown {
    const build = compileSelection(paths);
    return (snap, parsed) => this.chosen(snap, parsed, build, options);
  }

  /** Chosen paths' CSV cells of the parsed address's record, each after a comma (`iprecord enrich`), compiled once. */
  cells(paths: readonly string[], options: AnswerOptions | undefined): (snap: Answerable, parsed: Parsed, out: ByteWriter) => void {
    const write = compileCells(paths);
    return (snap, parsed, out) => write(this.read(snap, parsed, options), out);
  }

  /** What a compiled selection reads for the parsed address. */
  private chosen(
    snap: Answerable,
    parsed: Parsed,
    build: (r: Reading) => Record<string, unknown>,
    options: AnswerOptions | undefined,
  ): Record<string, unknown> {
    return build(this.read(snap, parsed, options));
  }

  /** The reading of the parsed address, for chosen paths. */
  private read(snap: Answerable, parsed: Parsed, options: AnswerOptions | undefined): Reading {
    const r = this.reading;
    // The moment is read when a chosen path reads the clock (`momentOf`), not for every selection.
    r.now = -1;
    const basic = options !== undefined && options.basicThreat === true;
    this.render.basic = basic;
    r.ds = snap.dataset;
    r.countries = snap.objects.countries;
    r.clock = snap.clock;
    r.version = parsed.version;
    r.words = this.ip.words;
    r.ref = findRange(r.ds, parsed.version, this.ip.words);
    r.address = parsed;
    // The count's window is by the minute: the clock's milliseconds.
    r.count = countOf(this.counter.tick(Date.now()), options);
    r.basic = basic;
    return r;
  }

  /** Forgets the threat objects (another dataset has other rows). */
  forget(): void {
    this.threats.clear();
  }
}

function countOf(own: string, options: AnswerOptions | undefined): string {
  return options === undefined || options.count === undefined ? own : options.count;
}
