/**
 * `iprecord enrich`: its options, the input's format, worker threads, and
 * what it says when done (the rows themselves: enrich.ts).
 */

import { statSync } from 'node:fs';
import { unreadableReason } from '../../files/read.js';
import { availableParallelism } from 'node:os';
import { ownEntry, startPool, type PoolWorker } from '../../platform/threads.js';
import { atMostFourACore, commandOptions, dataDir, fieldList, options } from '../args.js';
import {
  enrich,
  openInput,
  type BatchOutput,
  type BatchRunner,
  type Chunk,
  type EnrichFormat,
  type EnrichOptions,
  type EnrichSummary,
  type RowConfig,
} from '../enrich.js';
import { openSync, type Engine } from '../../engine/engine.js';
import { warnMissingLists } from '../../engine/inside.js';

export const USAGE = `Usage: iprecord enrich [file|-] [options]

Adds the record of each row's address to a CSV, NDJSON, plain list or log
file (gzip-compressed or not; standard input when the file is - or absent),
streaming, and writes the result to standard output. A row whose address
is bad is kept, with the error in its error column (CSV) or as
{"error": ...} under the key (NDJSON); a malformed line is kept the same way,
with its line number. A progress line shows on standard error when it is a
terminal; a summary is printed there at the end.

Options:
  --format f       input: csv, ndjson, lines (one address a line) or log (any
                   text: web servers' common and combined formats, the address
                   first; kept whole in a line column or key); default from the
                   file name (.csv, .ndjson or .jsonl, .log, else lines; .gz
                   ignored), else lines
  --regex r        log: a regular expression whose group ip (else its first
                   group) is the address; default the line's first field
                   ([v6]:port and a.b.c.d:port are read without the port)
  --column c       CSV: the address column, by header name or 0-based index;
                   default a column named ip, ip_address, address, client_ip,
                   remote_addr, ipaddress or src_ip, else the first
  --path a.b       NDJSON: where the address is in each object; default the first
                   of ip, remote_addr, client_ip and other usual places (docs/cli.md)
  --output o       csv or ndjson; default csv for CSV input, else ndjson
  --fields a,b     only these fields; for CSV output dotted paths reach into
                   the record (asn.name, threat.is_tor); default the whole
                   record (CSV: one column per top-level field, objects as JSON)
  --key k          NDJSON output: the key the record goes under; default iprecord
  --data dir       a dataset directory; default $IPRECORD_DATA, else the user's when it holds a build
  --threads n      worker threads (sharing this process's copy of the data),
                   output in input order; default one per core for files
                   of 8 MiB or more, else 1 (this thread); at most 4 a core
  -h, --help       this help

Exit codes: 0 every row enriched, 1 some rows bad or malformed (kept in the output), 2 usage or data error.
`;

function formatOf(file: string | null): EnrichFormat {
  const name = (file ?? '').toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl')) return 'ndjson';
  if (name.endsWith('.log') || /access[._-]?log/.test(name)) return 'log';
  return 'lines';
}

/** What the arguments ask for, checked: the input file (null: standard input), the rows' layout, the threads asked for. */
interface EnrichArgs {
  readonly file: string | null;
  readonly config: EnrichOptions;
  readonly threads: number | undefined;
  readonly data: string | undefined;
}

/** The arguments, read; a number is the exit code of a usage error (or of the help, printed). */
function enrichArgs(argv: string[]): EnrichArgs | number {
  const positional = argv.filter(
    (a, i) => (!a.startsWith('--') || a === '-') && (i === 0 || !argv[i - 1].startsWith('--') || argv[i - 1].includes('=')),
  );
  const flags = argv.filter((a) => !positional.includes(a));
  // `-h` does not start with `--`, so it is among the positional arguments.
  const parsed = commandOptions(
    'enrich',
    USAGE,
    argv.includes('-h') ? 'help' : options(flags, ['format', 'column', 'path', 'output', 'fields', 'key', 'data', 'threads', 'regex']),
  );
  if (typeof parsed === 'number') return parsed;
  const { o, usage } = parsed;
  if (positional.length > 1) return usage(`one input file at most (got ${positional.join(', ')})`);
  const file = positional.length === 0 || positional[0] === '-' ? null : positional[0];
  const input = (o.format ?? formatOf(file)) as EnrichFormat;
  if (!['csv', 'ndjson', 'lines', 'log'].includes(input)) return usage(`--format must be csv, ndjson, lines or log, not ${o.format}`);
  const output = (o.output ?? (input === 'csv' ? 'csv' : 'ndjson')) as 'csv' | 'ndjson';
  if (output !== 'csv' && output !== 'ndjson') return usage(`--output must be csv or ndjson, not ${o.output}`);
  // Options that the formats chosen would leave unused are refused, not ignored.
  if (o.column !== undefined && input !== 'csv') return usage(`--column applies to CSV input (the input is ${input})`);
  if (o.path !== undefined && input !== 'ndjson') return usage(`--path applies to NDJSON input (the input is ${input})`);
  if (o.key !== undefined && output !== 'ndjson') return usage('--key applies to NDJSON output (the output is csv)');
  if (o.regex !== undefined && input !== 'log') return usage(`--regex applies to log input (the input is ${input})`);
  if (o.regex !== undefined) {
    try {
      new RegExp(o.regex);
    } catch (e) {
      return usage(`--regex is not a regular expression: ${(e as Error).message}`);
    }
  }
  if (o.threads !== undefined && !/^[1-9]\d*$/.test(o.threads))
    return usage(`--threads must be a whole number of at least 1, not ${o.threads}`);
  const column = o.column === undefined ? undefined : /^\d+$/.test(o.column) ? Number(o.column) : o.column;
  return {
    file,
    config: { input, output, column, path: o.path, fields: fieldList(o.fields), key: o.key, regex: o.regex },
    threads: o.threads === undefined ? undefined : Number(o.threads),
    data: dataDir(o.data),
  };
}

/** The worker threads' runners, started once the rows' layout is known (none for one thread); `workers` holds them to close. */
function threadRunners(engine: Engine, openOptions: { data?: string }, threads: number, workers: PoolWorker[]) {
  return (config: RowConfig): BatchRunner[] => {
    if (threads === 1) return [];
    workers.push(
      ...startPool(
        threads,
        ownEntry(import.meta.url, '../enrich-worker.ts', 'enrich-worker'),
        // The workers' engines use this one's files: read ones from shared memory, not copies.
        { options: { ...openOptions, shared: engine.share() }, config },
      ),
    );
    if (workers.length < threads)
      process.stderr.write(
        `iprecord enrich: ${workers.length} of ${threads} worker threads started; the rest of the work is done on this thread\n`,
      );
    return workers.map(
      (w) => (chunk: Chunk, spare: ArrayBuffer | null) => w.run<BatchOutput>({ chunk, spare }, spare === null ? [] : [spare]),
    );
  };
}

/** The progress line on a terminal, rewritten at most five times a second, with the time left when the input's size is known. */
function progressLine(started: number, bytesRead: () => number, size: number): (s: EnrichSummary) => void {
  let shown = 0;
  return (s) => {
    const now = Date.now();
    if (now - shown < 200) return;
    shown = now;
    const secs = (now - started) / 1000;
    const rate = s.rows / Math.max(secs, 0.001);
    const read = bytesRead();
    const eta = size > 0 && read > 0 ? ` eta ${Math.max(0, Math.round((secs * (size - read)) / read))} s` : '';
    process.stderr.write(
      `\r\x1b[K${s.rows.toLocaleString('en')} rows, ${Math.round(rate).toLocaleString('en')} rows/s, ${s.bad} bad${eta}`,
    );
  };
}

/** What is said at the end, on standard error: what went otherwise, then the rows and the rate. */
function sayDone(summary: EnrichSummary, started: number, threads: number): void {
  const secs = (Date.now() - started) / 1000;
  if (summary.redone > 0)
    process.stderr.write(`iprecord enrich: a worker thread failed; ${summary.redone} chunks of rows were done on this thread\n`);
  if (summary.replaced > 0) {
    process.stderr.write(
      `iprecord enrich: ${summary.replaced} rows held bytes that are not UTF-8, written with U+FFFD in their place (a CSV row of as many cells as the header is copied as read; other output is text)\n`,
    );
  }
  const on = threads === 0 ? 'on 1 thread' : `on ${threads} worker threads`;
  process.stderr.write(
    `enriched ${summary.rows.toLocaleString('en')} rows (${summary.bad} bad${summary.malformed ? `, ${summary.malformed} malformed` : ''}) in ${secs.toFixed(1)} s (${Math.round(summary.rows / Math.max(secs, 0.001)).toLocaleString('en')} rows/s, ${on})\n`,
  );
}

export async function run(argv: string[]): Promise<number> {
  const args = enrichArgs(argv);
  if (typeof args === 'number') return args;
  const { file, data } = args;
  const openOptions = data === undefined ? {} : { data };
  let opened: Awaited<ReturnType<typeof openInput>>;
  let size: number;
  try {
    opened = await openInput(file);
    size = file === null ? 0 : statSync(file).size;
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${file === null ? (e as Error).message : `cannot read ${file}: ${unreadableReason(e)}`}\n`);
    return 2;
  }
  let engine: Engine;
  try {
    engine = openSync(openOptions);
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${(e as Error).message}\n`);
    return 2;
  }
  // Worker threads' engines do not tell it: said here, once.
  warnMissingLists(engine);
  // Worker threads pay off for large files.
  const threads =
    args.threads === undefined
      ? size >= 8 << 20
        ? availableParallelism()
        : 1
      : atMostFourACore(args.threads, '--threads', 'worker threads');
  const workers: PoolWorker[] = [];
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  try {
    const summary = await enrich(
      engine,
      opened.stream,
      process.stdout,
      args.config,
      tty ? progressLine(started, opened.bytesRead, size) : () => {},
      threadRunners(engine, openOptions, threads, workers),
    );
    if (tty) process.stderr.write('\r\x1b[K');
    sayDone(summary, started, workers.length);
    return summary.bad > 0 ? 1 : 0;
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${(e as Error).message}\n`);
    return 2;
  } finally {
    for (const w of workers) w.close();
  }
}
