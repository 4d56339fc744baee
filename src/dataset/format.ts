/**
 * The compiled dataset as typed arrays over its bytes, checked at open
 * (`layout.ts` says what the file holds and where, `docs/dataset-format.md`
 * why).
 */

import { InvalidDatasetError } from '../contract/errors.js';
import type { IpVersion } from '../ip/parse.js';
import type { ByteWriter } from '../text/writer.js';
import { wordsOver, type Words } from '../text/words.js';
import { DatasetText, jsonText } from './text.js';
import { verifyDataset } from './verify.js';
import {
  countWords,
  ESCAPED,
  DATASET_FORMAT_VERSION,
  DATASET_MAGIC,
  HEADER,
  MAGIC_PREFIX,
  MAX_INDEX_BITS,
  PACKED,
  TABLE_NAMES,
  type TableName,
  layout,
  NO_STRING,
  readCounts,
  readU32,
  TABLES,
  type Counts,
  type DatasetMeta,
} from './layout.js';
import { latin1Text, utf8Text } from '../platform/bytes.js';
import { renderParts, type Rows } from './part-render.js';

export * from './layout.js';

/** A dataset file's sections, as typed arrays over its bytes (checked once, at open). */
export class Dataset {
  /** How far an address is shifted to its index block (32 less the family's `indexBits`). */
  readonly shift4: number;
  readonly shift6: number;
  readonly index4: Uint32Array;
  readonly starts4: Uint32Array;
  readonly refs4: Uint32Array;
  readonly index6: Uint32Array;
  readonly starts6: Uint32Array;
  readonly refs6: Uint32Array;
  readonly records: Uint32Array;
  readonly locations: Uint32Array;
  /** The locations' rows as numbers: latitude and longitude of location `l` at `l * LOCATION / 2` and the next (NaN: null). */
  readonly locationNumbers: Float64Array;
  readonly places: Uint32Array;
  readonly countries: Uint32Array;
  readonly networks: Uint32Array;
  readonly threats: Uint32Array;
  /** The rendered parts of records (`parts.ts`), as bytes and as words (each part starts at a multiple of 8 bytes). */
  readonly partBytes: Uint8Array;
  readonly parts: Words;
  readonly meta: DatasetMeta;
  readonly bytes: number;

  /** Records in the file: a range's ref names one below this (checked per lookup, `findRange`). */
  readonly recordCount: number;
  readonly name: string;
  private readonly buf: Uint8Array;
  private readonly counts: Counts;
  private readonly text: DatasetText;

  /**
   * Checks the header, the sections' sizes, the metadata and both indexes,
   * in a few milliseconds; not the
   * checksum, the ranges' refs nor the tables' rows (reads of the whole
   * file: `verify()`), so that opening costs nothing per range or record.
   * A range whose ref names no record is a typed error when a lookup meets
   * it.
   * @throws InvalidDatasetError for a bad magic, version, size, metadata, or an index out of range
   */
  constructor(buf: Uint8Array, name: string) {
    this.name = name;
    const bad: (what: string) => never = (what) => {
      throw new InvalidDatasetError(`${name} is not a valid iprecord dataset: ${what}.`);
    };
    if (buf.length < HEADER || latin1Text(buf, 0, MAGIC_PREFIX.length) !== MAGIC_PREFIX) bad('bad magic');
    const version = readU32(buf, 8);
    if (version !== DATASET_FORMAT_VERSION)
      bad(`format version ${version}, this iprecord reads ${DATASET_FORMAT_VERSION} (compile it again)`);
    if (latin1Text(buf, 0, 8) !== DATASET_MAGIC) bad('bad magic');
    const c = readCounts(buf);
    if (countWords(c).some((n) => n >= 0x80000000)) bad('a count of its header is past 2^31');
    if ((c.packed & ~(PACKED.v6 | PACKED.parts)) !== 0) bad(`unknown packing flags ${c.packed}`);
    for (const bits of [c.bits4, c.bits6]) if (bits < 1 || bits > MAX_INDEX_BITS) bad(`index bits ${bits}, not 1 to ${MAX_INDEX_BITS}`);
    if (c.fine6 > c.v6 || (c.fine6 > 0 && !(c.packed & PACKED.v6))) bad(`${c.fine6} fine IPv6 starts`);
    if (c.packed & PACKED.parts && c.partsBytes !== 0) bad('a parts section where its parts are rendered at open');
    const at = layout(c);
    if (at.size !== buf.length) bad(`its sections add up to ${at.size} bytes but the file has ${buf.length}`);
    // Typed arrays need their alignment: a mapped file is page-aligned; a read one is copied when it is not.
    const b = buf.byteOffset % 8 === 0 ? buf : buf.slice();
    this.buf = b;
    const words = (section: number, count: number) => new Uint32Array(b.buffer, b.byteOffset + section, count);
    this.shift4 = 32 - c.bits4;
    this.shift6 = 32 - c.bits6;
    this.index4 = words(at.index4, (1 << c.bits4) + 1);
    this.starts4 = words(at.starts4, c.v4);
    this.refs4 = words(at.refs4, c.v4);
    this.index6 = words(at.index6, (1 << c.bits6) + 1);
    this.starts6 =
      c.packed & PACKED.v6 ? unpackStarts6(words(at.starts6, c.v6 * 2), words(at.fine6, c.fine6 * 3), bad) : words(at.starts6, c.v6 * 4);
    this.refs6 = words(at.refs6, c.v6);
    this.text = new DatasetText(
      b.subarray(at.ascii, at.ascii + c.asciiBytes),
      b.subarray(at.other, at.other + c.otherBytes),
      c.otherUnits,
      name,
    );
    const tables = Object.fromEntries(
      TABLE_NAMES.map((t) => [t, { rows: words(at[t], c.rows[t] * TABLES[t].length), count: c.rows[t] }]),
    ) as Record<TableName, Rows>;
    // Parts rendered at open: by the compiler's own renderer, into copies of the tables that hold parts.
    const rendered =
      c.packed & PACKED.parts ? renderedAtOpen(tables, this.text, bad) : { tables, parts: b.subarray(at.parts, at.parts + c.partsBytes) };
    this.records = rendered.tables.records.rows;
    this.locations = rendered.tables.locations.rows;
    this.locationNumbers = new Float64Array(this.locations.buffer, this.locations.byteOffset, this.locations.length / 2);
    this.places = rendered.tables.places.rows;
    this.countries = rendered.tables.countries.rows;
    this.networks = rendered.tables.networks.rows;
    this.threats = rendered.tables.threats.rows;
    this.partBytes = rendered.parts;
    this.parts = wordsOver(this.partBytes);
    let meta: DatasetMeta | null = null;
    try {
      meta = JSON.parse(utf8Text(b, at.meta, at.meta + c.metaBytes)) as DatasetMeta;
    } catch {
      // reported below
    }
    if (
      meta === null ||
      typeof meta !== 'object' ||
      !Array.isArray(meta.zones) ||
      !Array.isArray(meta.sources) ||
      !isZoneTable(meta.timeZones)
    )
      bad('unreadable metadata');
    this.meta = meta as DatasetMeta;
    this.bytes = buf.length;
    this.recordCount = c.rows.records;
    this.counts = c;
    // The index spans its ranges. That it never decreases (every block's ranges inside the family) is checked with
    // the rest by verify(), which every open runs before answering unless the file's seal says it passed unchanged; a
    // pass here too read the 4 MiB IPv6 index at every open (15-17 ms of a CLI lookup's 200).
    for (const [label, index, count] of [
      ['IPv4', this.index4, c.v4],
      ['IPv6', this.index6, c.v6],
    ] as const) {
      if (count === 0 || index[0] !== 0 || index[index.length - 1] !== count) bad(`the ${label} index does not span its ranges`);
    }
    if (this.starts4[0] !== 0 || this.starts6[0] !== 0 || this.starts6[1] !== 0 || this.starts6[2] !== 0 || this.starts6[3] !== 0)
      bad('a family does not start at its first address');
  }

  /**
   * What the constructor leaves out: the checksum, and that every range,
   * row and value is what a well-formed record needs
   * (`verify.ts`). Opening a file runs it unless told not to.
   * @throws InvalidDatasetError naming the defect
   */
  verify(): void {
    verifyDataset(this, { buf: this.buf, counts: this.counts, text: this.text });
  }

  /**
   * The string a table row holds at `at` and `at + 1` (start NO_STRING:
   * null), from its JSON text (`text.ts`).
   * @throws InvalidDatasetError when the text's second part decodes to another length than the header's
   */
  string(row: Uint32Array, at: number): string | null {
    const start = row[at];
    if (start === NO_STRING) return null;
    const end = row[at + 1];
    return end < ESCAPED ? this.text.slice(start + 1, end - 1) : (JSON.parse(this.text.slice(start, end - ESCAPED)) as string);
  }

  /** The JSON text of the value a table row holds at `at` and `at + 1` (`null` for none). */
  json(row: Uint32Array, at: number): string {
    return jsonText(this.text, row, at);
  }

  /** Writes the CSV cell (`csvField`) of the value a table row holds at `at` and `at + 1` (empty for none). */
  writeCsv(row: Uint32Array, at: number, out: ByteWriter): void {
    const start = row[at];
    if (start !== NO_STRING) this.text.writeCsv(start, (row[at + 1] & ~ESCAPED) >>> 0, out);
  }

  /** The error of a range whose ref names no record. */
  badRef(ref: number): InvalidDatasetError {
    return new InvalidDatasetError(
      `${this.name} is not a valid iprecord dataset: a range refers to record ${ref >>> 8} of ${this.recordCount}.`,
    );
  }

  /** The range of an IPv4 address (a uint32): its ref (record << 8 | route prefix). */
  find4(ip: number): number {
    const block = ip >>> this.shift4;
    const starts = this.starts4;
    let lo = this.index4[block];
    let hi = this.index4[block + 1];
    // The last range that starts at or before the address: in the block, else the one before it. A block holds a
    // few ranges (a scan of a cache line); some hold hundreds (a binary search).
    if (hi - lo <= 16) {
      while (lo < hi && starts[lo] <= ip) lo++;
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (starts[mid] <= ip) lo = mid + 1;
        else hi = mid;
      }
    }
    return this.refs4[lo - 1];
  }

  /** The range of an IPv6 address (four words, most significant first): its ref. */
  find6(w: ArrayLike<number>): number {
    const s = this.starts6;
    const w0 = w[0];
    const w1 = w[1];
    const w2 = w[2];
    const w3 = w[3];
    const block = w0 >>> this.shift6;
    let lo = this.index6[block];
    let hi = this.index6[block + 1];
    // Binary search for the first range starting after the address.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * 4;
      const atMost = s[at] !== w0 ? s[at] < w0 : s[at + 1] !== w1 ? s[at + 1] < w1 : s[at + 2] !== w2 ? s[at + 2] < w2 : s[at + 3] <= w3;
      if (atMost) lo = mid + 1;
      else hi = mid;
    }
    return this.refs6[lo - 1];
  }
}

/**
 * A packed file's parts, rendered before its checksum is read (`verify()`):
 * rows a damaged file names past its text are its defect, named as such,
 * not a RangeError.
 */
function renderedAtOpen(tables: Record<TableName, Rows>, text: DatasetText, bad: (what: string) => never) {
  try {
    return renderParts(tables, text, undefined, false);
  } catch (e) {
    if (e instanceof InvalidDatasetError) throw e;
    return bad(`its parts cannot be rendered from its rows (${(e as Error).message})`);
  }
}

/**
 * A packed file's IPv6 starts as four words each: the first two of each
 * from `high`, the last two zero but where the fine section (range, third
 * word, fourth word; ranges ascending) says.
 */
function unpackStarts6(high: Uint32Array, fine: Uint32Array, bad: (what: string) => never): Uint32Array {
  const n = high.length / 2;
  const s = new Uint32Array(n * 4);
  for (let i = 0; i < n; i++) {
    s[i * 4] = high[i * 2];
    s[i * 4 + 1] = high[i * 2 + 1];
  }
  for (let f = 0, last = -1; f < fine.length; f += 3) {
    const r = fine[f];
    if (r <= last || r >= n || (fine[f + 1] | fine[f + 2]) === 0) bad(`fine IPv6 start ${f / 3} names range ${r}`);
    s[r * 4 + 2] = fine[f + 1];
    s[r * 4 + 3] = fine[f + 2];
    last = r;
  }
  return s;
}

/** Whether a value has the members of a zone table (its rules are checked by `verify()`). */
function isZoneTable(t: unknown): boolean {
  const z = t as Record<string, unknown> | null;
  return (
    typeof z === 'object' &&
    z !== null &&
    typeof z.tzdata === 'string' &&
    typeof z.zones === 'object' &&
    z.zones !== null &&
    Array.isArray(z.rules)
  );
}

/**
 * The range of an address: its ref (record << 8 | route prefix).
 * @throws InvalidDatasetError when the ref names no record (a damaged file: `Dataset.verify()`)
 */
export function findRange(ds: Dataset, version: IpVersion, words: ArrayLike<number>): number {
  const ref = version === 4 ? ds.find4(words[3]) : ds.find6(words);
  if (ref >>> 8 >= ds.recordCount) throw ds.badRef(ref);
  return ref;
}
