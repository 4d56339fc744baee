/**
 * `iprecord <ip> [ip...]`: prints records (pretty on a terminal, one
 * compact JSON line each otherwise). `--fields a,b`, `--field name`,
 * `--threat`, `-` reads addresses from standard input, `--data dir` (or
 * IPRECORD_DATA) uses a dataset directory.
 * `iprecord build`: compiles the threat feeds into a dataset directory.
 * `iprecord update`: downloads them first, validated, and swaps the build in.
 * `iprecord info`: what is loaded.
 * `iprecord export`: the dataset's ranges and records, for other engines (export.ts).
 * `iprecord enrich`: records for every row of a file (enrich.ts).
 * (`iprecord serve`, the HTTP API, is serve.ts.)
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { buildAndSwap } from '../compile/feeds/update.js';
import { availableParallelism } from 'node:os';
import { startPool, type PoolWorker } from '../threads.js';
import { commandOptions, dataDir, fieldList, options, ownVersion } from './args.js';
import { listAddress } from './rows.js';
import { runExport } from './export.js';
import { enrich, openInput, type BatchOutput, type BatchRunner, type Chunk, type EnrichFormat, type EnrichSummary, type RowConfig } from './enrich.js';
import { defaultThreatConfig, isIprecordError, openSync, readThreatConfig, updateDataset, type Engine, type ThreatConfig } from '../index.js';

const USAGE = `Usage: iprecord [options] <ip> [ip...]
       iprecord [options] -            (addresses from standard input, one per line)
       iprecord --version
       iprecord build [--config file] [--out dir]
       iprecord update [--config file] [--data dir]
       iprecord info [--data dir]
       iprecord export --format csv|mmdb|parquet --out file [--data dir]
       iprecord enrich [file|-] [options]   (iprecord enrich --help)
       iprecord serve [options]              (iprecord serve --help)

Prints the record of each address: pretty JSON on a terminal, one compact
JSON line per address otherwise.

Options:
  --fields a,b     only these fields, in this order
  --field name     one field, as a bare value (strings print as plain text)
  --threat         the threat object only
  --data dir       a dataset directory (iprecord build); default $IPRECORD_DATA
  -v, --version    the version of iprecord
  -h, --help       this help (iprecord build --help for build)
  --quiet          no warnings on standard error, with any command (also
                   IPRECORD_QUIET=1); errors are still written

With -, each line of standard input is an address; blank lines and lines
starting with # are skipped. --threat, --field and --fields exclude each other.

Exit codes: 0 every address answered, 1 some addresses were bad, 2 usage or data error.
`;

const BUILD_USAGE = `Usage: iprecord build [--config file] [--out dir]

Compiles the threat feeds of a feed configuration (JSON; default: the
built-in public lists) into a new build of a dataset directory
(builds/<time>/threat.bin), then the configuration's databases (default:
the default data) with those feeds into one dataset (dataset.iprd: the
feeds merged into the databases' own compiled dataset, about 3 s for the
default data; 30 s and 1.7 GB more when the databases changed), writes manifest.json and points the directory's current file at
the build with one rename. Local paths are read as they are; URL feeds are
read from the directory's feeds/ downloads (iprecord update). Each feed's
entries and bad lines (file and line) are reported on standard error.

Options:
  --config file    feed configuration (see docs/threat-feeds.md)
  --out dir        dataset directory; default $IPRECORD_DATA, else ./iprecord-data
  -h, --help       this help

Exit codes: 0 every feed compiled, 1 some feeds missing or unreadable, 2 usage or configuration error.
`;

/**
 * Arguments of `build` and `update`: the dataset directory (`dirOption`)
 * and the feed configuration, read. A number is the exit code to return.
 */
function feedCommand(command: string, usage: string, argv: string[], dirOption: 'out' | 'data'): { dir: string; config: ThreatConfig } | number {
  const parsed = commandOptions(command, usage, options(argv, ['config', dirOption]));
  if (typeof parsed === 'number') return parsed;
  const { o } = parsed;
  try {
    return { dir: resolve(dataDir(o[dirOption]) ?? 'iprecord-data'), config: o.config === undefined ? defaultThreatConfig() : readThreatConfig(o.config) };
  } catch (e) {
    process.stderr.write(`iprecord ${command}: ${(e as Error).message}\n`);
    return 2;
  }
}

async function runBuild(argv: string[]): Promise<number> {
  const args = feedCommand('build', BUILD_USAGE, argv, 'out');
  if (typeof args === 'number') return args;
  const { dir: out, config } = args;
  const started = Date.now();
  const { build: result, buildDir } = await buildAndSwap(config, out);
  let failed = 0;
  for (const f of result.feeds) {
    if (f.state !== 'ok') failed++;
    const bad = f.badLines.length;
    process.stderr.write(
      `${f.state === 'ok' ? 'ok     ' : f.state.padEnd(7)} ${f.name}: ${f.entries} entries${f.skipped ? `, ${f.skipped} below minHits` : ''}${bad ? `, ${bad} bad lines` : ''}${f.error ? ` (${f.error})` : ''}\n`,
    );
    for (const b of f.badLines.slice(0, 5)) process.stderr.write(`        ${b.file}:${b.line}: ${b.reason}: ${b.text}\n`);
    if (bad > 5) process.stderr.write(`        ... and ${bad - 5} more\n`);
  }
  const { ranges, labels } = result.stats;
  process.stderr.write(
    `wrote ${join(buildDir, 'threat.bin')} (${result.buffer.length} bytes: ${ranges.v4} IPv4 and ${ranges.v6} IPv6 merged ranges, ${labels} labels) from ${result.feeds.length - failed} of ${result.feeds.length} feeds in ${Date.now() - started} ms\n`,
  );
  return failed > 0 ? 1 : 0;
}

const UPDATE_USAGE = `Usage: iprecord update [--config file] [--data dir] [--allow-shrink]

Downloads the databases and feeds of a feed configuration given as URLs
(default: DB-IP Lite City and ASN data from the ip-location-db releases,
and the built-in public lists) into the dataset directory, validates each
download, compiles a new build (as iprecord build) and swaps it in with
one rename. A database must open as one of its role's schemas, end at a
line's end (CSV), hold at least sources.minNetworks networks and at most
half fewer than its last good download, cover per family at least 90 % of
the addresses its last good download covered, and still place the check
addresses (8.8.8.8 in the US and AS15169, ...); a feed at least one entry,
at most half fewer than its last good download, at most 10 % bad lines.
One database refused refuses them all: every database keeps its last good
download (a build never mixes providers' releases), and the failure is
reported; until a database's first download, the installed default data
stands in.

Options:
  --config file    feed configuration
  --data dir       dataset directory; default $IPRECORD_DATA, else ./iprecord-data
  --allow-shrink   take downloads smaller than the last good ones knowingly
  -h, --help       this help

Exit codes: 0 every source updated or unchanged, 1 some failed (their last good data kept), 2 usage or configuration error.
`;

async function runUpdate(argv: string[]): Promise<number> {
  const allowShrink = argv.includes('--allow-shrink');
  const args = feedCommand(
    'update',
    UPDATE_USAGE,
    argv.filter((a) => a !== '--allow-shrink'),
    'data',
  );
  if (typeof args === 'number') return args;
  const { dir, config } = args;
  const result = await updateDataset(config, dir, { allowShrink });
  for (const s of result.sources) {
    process.stderr.write(`${s.state.padEnd(9)} ${s.role} ${s.url}${s.networks !== undefined ? `: ${s.networks} networks` : ''}${s.error ? ` (${s.error})` : ''}\n`);
  }
  for (const f of result.feeds) {
    process.stderr.write(`${f.state.padEnd(9)} ${f.name}${f.entries !== undefined ? `: ${f.entries} entries` : ''}${f.error ? ` (${f.error})` : ''}\n`);
  }
  process.stderr.write(`current build: ${result.buildDir}\n`);
  return result.ok ? 0 : 1;
}

const INFO_USAGE = `Usage: iprecord info [--data dir]

Checks the dataset file whole (checksum, every reference), then prints
what is loaded, as JSON: the dataset, each database it was compiled from
(role, schema, build date, size, when read), the threat build, each feed (state, entries, addresses
covered, date of its data, source) and each threat category (loaded,
stale, failed or missing, with its sources). Missing, stale and failed lists are
also listed as warnings on standard error.

Options:
  --data dir       a dataset directory; default $IPRECORD_DATA
  -h, --help       this help

Exit codes: 0 printed (warnings or not), 2 usage or data error.
`;

function runInfo(argv: string[]): number {
  const parsed = commandOptions('info', INFO_USAGE, options(argv, ['data']));
  if (typeof parsed === 'number') return parsed;
  const { o } = parsed;
  const data = dataDir(o.data);
  const engine = openSync(data === undefined ? {} : { data });
  engine.verify();
  const info = engine.info();
  process.stdout.write(JSON.stringify(info, null, 2) + '\n');
  for (const l of info.lists) {
    if (l.state !== 'loaded') process.stderr.write(`warning: ${l.name}: ${l.state}${l.reason ? ` (${l.reason})` : l.dataDate ? ` (newest data ${l.dataDate})` : ''}\n`);
  }
  for (const f of info.feeds) {
    if (f.state !== 'loaded') process.stderr.write(`warning: feed ${f.name}: ${f.state}${f.reason ? ` (${f.reason})` : f.dataDate ? ` (data of ${f.dataDate})` : ''}\n`);
  }
  for (const w of info.warnings) process.stderr.write(`warning: ${w}\n`);
  return 0;
}

interface Args {
  ips: string[];
  data?: string;
  fields?: string;
  field?: string;
  threat: boolean;
  stdin: boolean;
}

function parseArgs(argv: string[]): Args | 'help' | 'version' | string {
  const args: Args = { ips: [], threat: false, stdin: false };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const eq = a.indexOf('=');
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const option = (name: string) => {
      if (given.has(name)) throw new Error(`${name} is given twice`);
      given.add(name);
      return true;
    };
    try {
      if (a === '-h' || a === '--help') return 'help';
      else if (a === '-v' || a === '--version') return 'version';
      else if (a === '-') args.stdin = true;
      else if (a === '--threat' && option('--threat')) args.threat = true;
      else if ((a === '--fields' || a.startsWith('--fields=')) && option('--fields')) args.fields = value();
      else if ((a === '--field' || a.startsWith('--field=')) && option('--field')) args.field = value();
      else if ((a === '--data' || a.startsWith('--data=')) && option('--data')) args.data = value();
      else if (a.startsWith('-') && a !== '-' && !a.includes(':') && !/^-?\d/.test(a)) return `unknown option ${a}`;
      else args.ips.push(a);
    } catch (e) {
      return (e as Error).message;
    }
  }
  // Each of these says what to print: two of them would leave one unheard.
  const shapes = ['--threat', '--field', '--fields'].filter((o) => given.has(o));
  if (shapes.length > 1) return `${shapes.join(' and ')} cannot be used together`;
  if (!args.stdin && args.ips.length === 0) return 'no address given';
  return args;
}

function answer(engine: Engine, args: Args, ip: string): unknown {
  if (args.threat) return engine.threat(ip);
  if (args.field !== undefined) return engine.field(ip, args.field as never);
  return engine.lookup(ip, args.fields === undefined ? undefined : { fields: args.fields });
}

const ENRICH_USAGE = `Usage: iprecord enrich [file|-] [options]

Adds the record of each row's address to a CSV, NDJSON or plain list file
(gzip-compressed or not; standard input when the file is - or absent),
streaming, and writes the result to standard output. A row whose address
is bad is kept, with the error in its error column (CSV) or as
{"error": ...} under the key (NDJSON); a malformed line is kept the same way,
with its line number. A progress line shows on standard error when it is a
terminal; a summary is printed there at the end.

Options:
  --format f       input: csv, ndjson or lines; default from the file name
                   (.csv, .ndjson or .jsonl, else lines; .gz ignored), else lines
  --column c       CSV: the address column, by header name or 0-based index;
                   default a column named ip, ip_address, address, client_ip,
                   remote_addr, ipaddress or src_ip, else the first
  --path a.b       NDJSON: where the address is in each object; default ip
  --output o       csv or ndjson; default csv for CSV input, else ndjson
  --fields a,b     only these fields; for CSV output dotted paths reach into
                   the record (asn.name, threat.is_tor); default the whole
                   record (CSV: one column per top-level field, objects as JSON)
  --key k          NDJSON output: the key the record goes under; default iprecord
  --data dir       a dataset directory; default $IPRECORD_DATA
  --threads n      worker threads (sharing this process's copy of the data),
                   output in input order; default one per core for files
                   of 8 MiB or more, else 1 (this thread)
  -h, --help       this help

Exit codes: 0 every row enriched, 1 some rows bad or malformed (kept in the output), 2 usage or data error.
`;

function formatOf(file: string | null): EnrichFormat {
  const name = (file ?? '').toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl')) return 'ndjson';
  return 'lines';
}

async function runEnrich(argv: string[]): Promise<number> {
  const positional = argv.filter((a, i) => (!a.startsWith('--') || a === '-') && (i === 0 || !argv[i - 1].startsWith('--') || argv[i - 1].includes('=')));
  const flags = argv.filter((a) => !positional.includes(a));
  // `-h` does not start with `--`, so it is among the positional arguments.
  const parsed = commandOptions('enrich', ENRICH_USAGE, argv.includes('-h') ? 'help' : options(flags, ['format', 'column', 'path', 'output', 'fields', 'key', 'data', 'threads']));
  if (typeof parsed === 'number') return parsed;
  const { o, usage } = parsed;
  if (positional.length > 1) return usage(`one input file at most (got ${positional.join(', ')})`);
  const file = positional.length === 0 || positional[0] === '-' ? null : positional[0];
  const input = (o.format ?? formatOf(file)) as EnrichFormat;
  if (!['csv', 'ndjson', 'lines'].includes(input)) return usage(`--format must be csv, ndjson or lines, not ${o.format}`);
  const output = (o.output ?? (input === 'csv' ? 'csv' : 'ndjson')) as 'csv' | 'ndjson';
  if (output !== 'csv' && output !== 'ndjson') return usage(`--output must be csv or ndjson, not ${o.output}`);
  // Options that the formats chosen would leave unused are refused, not ignored.
  if (o.column !== undefined && input !== 'csv') return usage(`--column applies to CSV input (the input is ${input})`);
  if (o.path !== undefined && input !== 'ndjson') return usage(`--path applies to NDJSON input (the input is ${input})`);
  if (o.key !== undefined && output !== 'ndjson') return usage('--key applies to NDJSON output (the output is csv)');
  const column = o.column === undefined ? undefined : /^\d+$/.test(o.column) ? Number(o.column) : o.column;
  const fields = fieldList(o.fields);
  if (o.threads !== undefined && !/^[1-9]\d*$/.test(o.threads)) return usage(`--threads must be a whole number of at least 1, not ${o.threads}`);
  const data = dataDir(o.data);
  const openOptions = data === undefined ? {} : { data };
  let opened: Awaited<ReturnType<typeof openInput>>;
  let size: number;
  try {
    opened = await openInput(file);
    size = file === null ? 0 : statSync(file).size;
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${(e as Error).message}\n`);
    return 2;
  }
  // Worker threads pay off for large files.
  const threads = o.threads !== undefined ? Number(o.threads) : size >= 8 << 20 ? availableParallelism() : 1;
  let engine: Engine;
  try {
    engine = openSync(openOptions);
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${(e as Error).message}\n`);
    return 2;
  }
  // Worker threads' engines do not tell it: said here, once.
  engine.warnMissingLists();
  let workers: PoolWorker[] = [];
  const startThreads = (config: RowConfig): BatchRunner[] => {
    if (threads === 1) return [];
    workers = startPool(
      threads,
      {
        source: new URL('./enrich-worker.ts', import.meta.url),
        built: new URL('./enrich-worker.js', import.meta.url),
        fromSource: import.meta.url.endsWith('.ts'),
      },
      // The workers' engines use this one's files: read ones from shared memory, not copies.
      { options: { ...openOptions, shared: engine.share() }, config },
    );
    if (workers.length < threads) process.stderr.write(`iprecord enrich: ${workers.length} of ${threads} worker threads started; the rest of the work is done on this thread\n`);
    return workers.map((w) => (chunk: Chunk, spare: ArrayBuffer | null) => w.run<BatchOutput>({ chunk, spare }, spare === null ? [] : [spare]));
  };
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  let shown = 0;
  const progress = (s: EnrichSummary) => {
    const now = Date.now();
    if (!tty || now - shown < 200) return;
    shown = now;
    const secs = (now - started) / 1000;
    const rate = s.rows / Math.max(secs, 0.001);
    const read = opened.bytesRead();
    const eta = size > 0 && read > 0 ? ` eta ${Math.max(0, Math.round((secs * (size - read)) / read))} s` : '';
    process.stderr.write(`\r${s.rows.toLocaleString('en')} rows, ${Math.round(rate).toLocaleString('en')} rows/s, ${s.bad} bad${eta}   `);
  };
  try {
    const summary = await enrich(engine, opened.stream, process.stdout, { input, output, column, path: o.path, fields, key: o.key }, progress, startThreads);
    const secs = (Date.now() - started) / 1000;
    if (tty) process.stderr.write('\r');
    if (summary.redone > 0) process.stderr.write(`iprecord enrich: a worker thread failed; ${summary.redone} chunks of rows were done on this thread\n`);
    if (summary.replaced > 0) {
      process.stderr.write(
        `iprecord enrich: ${summary.replaced} rows held bytes that are not UTF-8, written with U+FFFD in their place (a CSV row of as many cells as the header is copied as read; other output is text)\n`,
      );
    }
    const on = workers.length === 0 ? 'on 1 thread' : `on ${workers.length} worker threads`;
    process.stderr.write(
      `enriched ${summary.rows.toLocaleString('en')} rows (${summary.bad} bad${summary.malformed ? `, ${summary.malformed} malformed` : ''}) in ${secs.toFixed(1)} s (${Math.round(summary.rows / Math.max(secs, 0.001)).toLocaleString('en')} rows/s, ${on})\n`,
    );
    return summary.bad > 0 ? 1 : 0;
  } catch (e) {
    process.stderr.write(`iprecord enrich: ${(e as Error).message}\n`);
    return 2;
  } finally {
    for (const w of workers) w.close();
  }
}

/** Every command but `serve`; the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    if (argv[0] === 'enrich') return await runEnrich(argv.slice(1));
    if (argv[0] === 'build') return await runBuild(argv.slice(1));
    if (argv[0] === 'info') return runInfo(argv.slice(1));
    if (argv[0] === 'update') return await runUpdate(argv.slice(1));
    if (argv[0] === 'export') return await runExport(argv.slice(1));
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  const parsed = parseArgs(argv);
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed === 'version') {
    process.stdout.write(`iprecord ${ownVersion()}\n`);
    return 0;
  }
  if (typeof parsed === 'string') {
    process.stderr.write(`iprecord: ${parsed}\n\n${USAGE}`);
    return 2;
  }
  let engine: Engine;
  try {
    const data = dataDir(parsed.data);
    engine = openSync(data === undefined ? {} : { data });
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  const pretty = process.stdout.isTTY === true;
  let bad = 0;
  const print = (ip: string) => {
    try {
      const v = answer(engine, parsed, ip);
      if (parsed.field !== undefined && typeof v === 'string') process.stdout.write(v + '\n');
      else process.stdout.write((pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v)) + '\n');
    } catch (e) {
      if (!isIprecordError(e)) throw e;
      if (e.code === 'INVALID_FIELD') throw e;
      bad++;
      process.stderr.write(`iprecord: ${e.message}\n`);
    }
  };
  try {
    for (const ip of parsed.ips) print(ip);
    if (parsed.stdin) {
      for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
        const ip = listAddress(line);
        if (ip !== null) print(ip);
      }
    }
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  return bad > 0 ? 1 : 0;
}
