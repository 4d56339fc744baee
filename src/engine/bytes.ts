/**
 * An engine over a dataset's bytes already in memory: for runtimes with no
 * file system (Workers, browsers, edge functions), where the bytes come
 * from a fetch, a bundled asset or a key-value store. The lookup API is
 * the file engine's (`lookups.ts`); what it lacks is what needs files:
 * reloads, watching, `explain()`'s history, worker threads. Nothing it
 * imports reaches a Node built-in (test/unit/boundary.test.ts and the
 * built entry's check in test/integration/bytes-entry.test.ts).
 */

import { ClosedError, InvalidOptionsError } from '../contract/errors.js';
import { DEFAULT_FLAG_BASE_URL } from '../contract/template.js';
import { Dataset, type DatasetMeta, type SourceInfo } from '../dataset/format.js';
import { RecordObjects } from '../record/objects.js';
import { ZoneClock } from '../time/zone.js';
import { checkOptionNames } from './option-names.js';
import { type Answerable, Lookups } from './lookups.js';

export type { AnswerOptions, LookupOptions, Selector } from './lookups.js';

export interface BytesOptions {
  /**
   * Check the whole dataset before answering (its checksum, and every
   * range, row and value, as `open()` does for a file it has not sealed):
   * about 0.4 s for the default data's lite edition and 1.6 to 2 s for the
   * full one (Node, measured on 2 cores). A truncated or damaged download
   * is then refused at open rather than answered wrongly at some address;
   * bytes checked before (by their hash, say) can skip it.
   * @default true
   */
  verify?: boolean;
  /** The base of `country_flag` (`<base>/<code>.png`). @default 'https://flagcdn.com/w320' */
  flagBaseUrl?: string;
  /** Named in errors about the bytes (a URL, a file name). @default 'the dataset bytes' */
  name?: string;
}

/** What a bytes engine answers from. */
export interface BytesInfo {
  /** `full`: every member; `lite`: the members of `iprecord export --format lite` (no city, region, postal code, coordinates or time zone). */
  readonly edition: 'full' | 'lite';
  readonly bytes: number;
  readonly ranges: { readonly v4: number; readonly v6: number };
  readonly records: number;
  readonly builtAt: string;
  /** The databases the dataset was compiled from. */
  readonly sources: readonly SourceInfo[];
  /** The threat feeds compiled in, as the dataset states them (null: none). */
  readonly threat: DatasetMeta['threat'] | null;
  /** The tz database release of its zones' rules. */
  readonly tzdata: string;
}

const OPTION_NAMES = ['verify', 'flagBaseUrl', 'name'] satisfies readonly (keyof BytesOptions)[];

export class BytesEngine extends Lookups<Answerable> {
  private data: Answerable | null;

  /** @internal use `openBytes()` */
  constructor(data: Answerable, flagBaseUrl: string) {
    super(
      flagBaseUrl,
      () => this.data ?? closed(),
      () => {},
    );
    this.data = data;
  }

  /** What the engine answers from: the dataset's edition, size, sources and build time. */
  info(): BytesInfo {
    const ds = (this.data ?? closed()).dataset;
    return {
      edition: ds.meta.edition ?? 'full',
      bytes: ds.bytes,
      ranges: { v4: ds.refs4.length, v6: ds.refs6.length },
      records: ds.recordCount,
      builtAt: ds.meta.builtAt,
      sources: ds.meta.sources,
      threat: ds.meta.threat ?? null,
      tzdata: ds.meta.timeZones.tzdata,
    };
  }

  /**
   * Checks the whole dataset (what `verify: true` does at open).
   * @throws InvalidDatasetError naming the defect; ClosedError
   */
  verify(): void {
    (this.data ?? closed()).dataset.verify();
  }

  /** Lets go of the bytes. Later calls throw `ClosedError`. */
  close(): void {
    this.data = null;
    this.answers.forget();
  }

  get closed(): boolean {
    return this.data === null;
  }
}

function closed(): never {
  throw new ClosedError();
}

/** What `openBytes()` takes: a `Uint8Array` (a Node `Buffer` is one), any other view of an `ArrayBuffer`, or the `ArrayBuffer` itself. */
export type DatasetBytes = Uint8Array | ArrayBufferView | ArrayBufferLike;

/**
 * The bytes as a `Uint8Array` over the same memory (nothing copied), or
 * null for what holds none. An `ArrayBuffer` is what `Response.arrayBuffer()`
 * and a Worker's data module give; one from another realm (a frame, a `vm`
 * context) fails `instanceof`, so buffers are told by their tag.
 */
function bytesOf(b: unknown): Uint8Array | null {
  if (b instanceof Uint8Array) return b;
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const tag = Object.prototype.toString.call(b);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') return new Uint8Array(b as ArrayBufferLike);
  return null;
}

/**
 * An engine over the bytes of a compiled dataset (`iprecord export
 * --format lite`, or the `dataset.bin` of a build): the same answers as
 * `open()` on the same file. The bytes (`DatasetBytes`: a `Uint8Array`,
 * another view, or an `ArrayBuffer`) are used in place, not copied
 * (unless they do not start at a multiple of 8 within their buffer), and
 * must not change while the engine answers.
 * @throws InvalidDatasetError when the bytes are not a dataset (or, with `verify`, a damaged one); InvalidOptionsError
 */
export function openBytes(dataset: DatasetBytes, options: BytesOptions = {}): BytesEngine {
  const bytes = bytesOf(dataset);
  if (bytes === null)
    throw new InvalidOptionsError(
      `openBytes takes the dataset's bytes (a Uint8Array, another view of an ArrayBuffer, or an ArrayBuffer), not ${describe(dataset)}.`,
    );
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('Options must be an object.');
  checkOptionNames(options, OPTION_NAMES);
  const { verify = true, flagBaseUrl = DEFAULT_FLAG_BASE_URL, name = 'the dataset bytes' } = options;
  if (typeof verify !== 'boolean') throw new InvalidOptionsError('Option "verify" must be true or false.');
  if (typeof flagBaseUrl !== 'string') throw new InvalidOptionsError('Option "flagBaseUrl" must be a string.');
  if (typeof name !== 'string') throw new InvalidOptionsError('Option "name" must be a string.');
  const ds = new Dataset(bytes, name);
  if (verify) ds.verify();
  return new BytesEngine({ dataset: ds, objects: new RecordObjects(ds), clock: new ZoneClock(ds.meta.timeZones) }, flagBaseUrl);
}

/** What a value is, for an error: its type, or its class for an object (`an Array`, `a Blob`). */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`;
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}` : 'an object';
}
