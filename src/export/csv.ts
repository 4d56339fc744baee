/**
 * The CSV export: one row per CIDR block of each range,
 * `network,start_ip,end_ip`, then the chosen columns of its record,
 * written as it is walked (gzipped when asked).
 */

import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { formatIp } from '../ip/format.js';
import { fromBigInt, rangeToCidrs } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import type { Engine } from '../engine/engine.js';
import { fieldValues, flatten, recordAt } from './record.js';
import type { ExportRange } from './ranges.js';
import { PerRoute } from './routes.js';
import type { ExportResult } from './index.js';

/**
 * A CSV cell: quoted where it holds a quote, comma or line break, and where
 * it starts with an apostrophe (the city 's-Gravendeel): ClickHouse reads a
 * cell that starts with one as a single-quoted string unless told
 * `format_csv_allow_single_quotes=0`.
 */
export const csvText = (v: string | number | boolean | null | undefined): string => {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) || s.charCodeAt(0) === 0x27 ? `"${s.replace(/"/g, '""')}"` : s;
};

/** Writes chunks, waiting when the stream asks to; the first error of the file or the compressor fails the next call. */
class Out {
  bytes = 0;
  private readonly head: Writable;
  /** Rejects with the first error of either stream. */
  private readonly broken: Promise<never>;
  private pending: string[] = [];
  private size = 0;
  constructor(
    private readonly file: Writable,
    gzip: boolean,
  ) {
    if (gzip) {
      const z = createGzip();
      z.pipe(this.file);
      this.head = z;
    } else this.head = this.file;
    this.broken = new Promise<never>((_, reject) => {
      this.file.once('error', reject);
      this.head.once('error', reject);
    });
    // Seen by whichever call comes next.
    this.broken.catch(() => undefined);
  }
  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 1 << 20) await this.flush();
  }
  private async flush(): Promise<void> {
    const chunk = this.pending.join('');
    this.pending = [];
    this.size = 0;
    this.bytes += Buffer.byteLength(chunk);
    if (!this.head.write(chunk)) await Promise.race([once(this.head, 'drain'), this.broken]);
  }
  async end(): Promise<void> {
    await this.flush();
    if (this.file === process.stdout) {
      // Standard output is not ended (the process goes on writing to it): what was written is out once an empty write is.
      await Promise.race([new Promise<void>((resolve, reject) => this.file.write('', (e) => (e ? reject(e) : resolve()))), this.broken]);
      return;
    }
    this.head.end();
    await Promise.race([once(this.file, 'finish'), this.broken]);
  }
}

/** The CSV export (see the module comment). */
export async function writeCsv(
  engine: Engine,
  walked: Iterable<ExportRange>,
  file: Writable,
  gzip: boolean,
  fields: readonly string[],
): Promise<{ ranges: ExportResult['ranges']; rows: number; bytes: number }> {
  const out = new Out(file, gzip);
  const ranges = { v4: 0, v6: 0 };
  let rows = 0;
  await out.write(['network', 'start_ip', 'end_ip', ...fields].join(',') + '\n');
  const tails = new PerRoute((version, first) => {
    const record = recordAt(engine, version, first);
    return fieldValues(record, flatten(record), fields).map(csvText).join(',') + '\n';
  });
  for (const { version, first, last, ref } of walked) {
    if (version === 4) ranges.v4++;
    else ranges.v6++;
    const tail = tails.get(version, first, ref);
    for (const c of cidrsOf(version, first, last)) {
      const a = formatIp(version, c.words);
      const z = formatIp(version, fromBigInt(version, lastOf(version, c.words, c.prefix)));
      await out.write(`${a}/${c.prefix},${a},${z},${tail}`);
      rows++;
    }
  }
  await out.end();
  return { ranges, rows, bytes: out.bytes };
}

/** The CIDR blocks of a range. */
function cidrsOf(version: IpVersion, first: bigint, last: bigint) {
  return rangeToCidrs({ version, words: fromBigInt(version, first) }, { version, words: fromBigInt(version, last) });
}

/** The last address of a CIDR block, as a number of its family. */
function lastOf(version: IpVersion, words: ArrayLike<number>, prefix: number): bigint {
  const bits = version === 4 ? 32 : 128;
  const first =
    version === 4 ? BigInt(words[3]) : (BigInt(words[0]) << 96n) | (BigInt(words[1]) << 64n) | (BigInt(words[2]) << 32n) | BigInt(words[3]);
  return first + (1n << BigInt(bits - prefix)) - 1n;
}
