/**
 * The dataset's text: the JSON text of every string and number of its
 * tables, each once. Values of ASCII only (nearly all) lie in the first
 * part, read in chunks of CHUNK bytes each decoded when first read (a
 * lookup on a cold engine decodes 64 KiB, not the 10 MB of the default
 * data); the others in a second part, decoded from UTF-8 as a whole when
 * first read. A value is its start and end: in the first part, byte
 * offsets (one byte, one code unit); from OTHER on, code units of the
 * second part.
 */

import { InvalidDatasetError } from '../contract/errors.js';
import { ESCAPED, NO_STRING } from './layout.js';
import type { ByteWriter } from '../text/writer.js';
import { csvField } from '../text/csv.js';
import { latin1Text, utf8Text } from '../platform/bytes.js';

/** Where values of the second part start. */
export const OTHER = 0x40000000;
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;

export class DatasetText {
  private readonly chunks: (string | undefined)[];
  private other: string | null = null;

  constructor(
    readonly ascii: Uint8Array,
    private readonly otherBytes: Uint8Array,
    private readonly otherUnits: number,
    private readonly name: string,
  ) {
    this.chunks = new Array<string | undefined>(Math.ceil(ascii.length / CHUNK));
  }

  /**
   * The text from `start` to `end`.
   * @throws InvalidDatasetError when the second part decodes to another length than the header's
   */
  slice(start: number, end: number): string {
    if (start >= OTHER) return (this.other ?? this.decodeOther()).slice(start - OTHER, end - OTHER);
    const k = start >>> CHUNK_BITS;
    // A value across two chunks: read from the bytes.
    if ((end - 1) >>> CHUNK_BITS !== k) return latin1Text(this.ascii, start, end);
    const base = k << CHUNK_BITS;
    return (this.chunks[k] ?? this.chunk(k)).slice(start - base, end - base);
  }

  /**
   * Writes the CSV cell (`csvField`) of the value whose JSON text is from
   * `start` to `end`: from the bytes of the first part.
   * @throws InvalidDatasetError as `slice`
   */
  writeCsv(start: number, end: number, out: ByteWriter): void {
    if (start < OTHER) out.csvJson(this.ascii, start, end);
    else out.text(csvField(JSON.parse((this.other ?? this.decodeOther()).slice(start - OTHER, end - OTHER))));
  }

  /** Whether `start` to `end` is a slice of one part (the second part decoded to check it). */
  spans(start: number, end: number): boolean {
    if (start >= OTHER) return start < end && end - OTHER <= (this.other ?? this.decodeOther()).length;
    return start < end && end <= this.ascii.length;
  }

  /**
   * Decodes the second part, which checks its length.
   * @throws InvalidDatasetError when it decodes to another length than the header's
   */
  verify(): void {
    this.other ?? this.decodeOther();
  }

  private chunk(k: number): string {
    return (this.chunks[k] = latin1Text(this.ascii, k << CHUNK_BITS, Math.min((k + 1) << CHUNK_BITS, this.ascii.length)));
  }

  private decodeOther(): string {
    const text = utf8Text(this.otherBytes, 0, this.otherBytes.length);
    if (text.length !== this.otherUnits)
      throw new InvalidDatasetError(
        `${this.name} is not a valid iprecord dataset: its text is ${text.length} code units long, its header says ${this.otherUnits}.`,
      );
    return (this.other = text);
  }
}

/** The JSON text of the value a table row holds at `at` and `at + 1` (`null` for none). */
export function jsonText(text: DatasetText, row: Uint32Array, at: number): string {
  const start = row[at];
  if (start === NO_STRING) return 'null';
  return text.slice(start, (row[at + 1] & ~ESCAPED) >>> 0);
}
