/**
 * `iprecord <ip> [ip...]`: prints records (pretty on a terminal, one
 * compact JSON line each otherwise). `--fields a,b`, `--field name`,
 * `--threat`, `-` reads addresses from standard input, `--data dir` (or
 * IPRECORD_DATA) uses a dataset directory.
 * `iprecord info`: what is loaded.
 * The other commands have files of their own: `build` and `update`
 * (build.ts), `enrich` (enrich-command.ts, enrich.ts), `export`
 * (export.ts), `serve` (serve.ts).
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

import { createInterface } from 'node:readline';
import { isIP } from 'node:net';
import { commandOptions, dataDir, misspeltCommand, options, ownVersion, unknownOption } from './args.js';
import { listAddress } from './rows.js';
import { isIprecordError } from '../contract/errors.js';
import { openSync, type Engine } from '../engine/engine.js';

const USAGE = `Usage: iprecord [options] <ip> [ip...]
       iprecord [options] -            (addresses from standard input, one per line)
       iprecord --version
       iprecord build [--config file] [--out dir]
       iprecord update [--config file] [--data dir]
       iprecord info [--data dir]
       iprecord export --format csv|mmdb|parquet --out file [--data dir]
       iprecord diff <old> <new> | --previous [--data dir] [--json]
       iprecord explain <ip> [--data dir] [--compare file]
       iprecord enrich [file|-] [options]   (iprecord enrich --help)
       iprecord serve [options]              (iprecord serve --help)

Prints the record of each address: pretty JSON on a terminal, one compact
JSON line per address otherwise.

Options:
  --fields a,b     only these fields, in this order; a member's member too
                   (asn.asn, threat.is_tor: keyed by its path, as select() answers)
  --field name     one field (or asn.asn), as a bare value (strings print as plain text)
  --threat         the threat object only
  --data dir       a dataset directory (iprecord build); default $IPRECORD_DATA, else the user's when it holds a build
  -v, --version    the version of iprecord
  -h, --help       this help (iprecord build --help for build)
  --quiet          no warnings on standard error, with any command (also
                   IPRECORD_QUIET=1); errors are still written

With -, each line of standard input is an address; blank lines and lines
starting with # are skipped. --threat, --field and --fields exclude each other.

Exit codes: 0 every address answered, 1 some addresses were bad, 2 usage or data error.
`;

const INFO_USAGE = `Usage: iprecord info [--data dir]

Checks the dataset file whole (checksum, every reference), then prints
what is loaded, as JSON: the dataset, each database it was compiled from
(role, schema, build date, size, when read), the threat build, each feed (state, entries, addresses
covered, date of its data, source) and each threat category (loaded,
stale, failed or missing, with its sources). Missing, stale and failed lists are
also listed as warnings on standard error.

Options:
  --data dir       a dataset directory; default $IPRECORD_DATA, else the user's when it holds a build
  -h, --help       this help

Exit codes: 0 printed (warnings or not), 2 usage or data error.
`;

const EXPLAIN_USAGE = `Usage: iprecord explain <ip> [--data dir] [--compare file]

Prints, as JSON, the record of the address with the evidence behind it:
the databases and time zone rules it comes from, how asn.type was
decided (asn_type) and where the zone came from (time_zone), and each
threat list that holds the address or held it in the last 90 days, with
the list's range that holds it, the days the list first and last held it
and the day of its latest download (kept by iprecord build and update;
lists is null without them).

Options:
  --data dir       a dataset directory; default $IPRECORD_DATA, else the user's when it holds a build
  --compare file   a second location database (MMDB): its country beside the record's (agreement)
  -h, --help       this help

Exit codes: 0 explained, 1 the address has no record (private, reserved or not an address), 2 usage or data error.
`;

function runExplain(argv: string[]): number {
  const ips = argv.filter((a, i) => !a.startsWith('-') && argv[i - 1] !== '--data' && argv[i - 1] !== '--compare');
  const parsed = commandOptions(
    'explain',
    EXPLAIN_USAGE,
    options(
      argv.filter((a) => !ips.includes(a)),
      ['data', 'compare'],
    ),
  );
  if (typeof parsed === 'number') return parsed;
  const { o, usage } = parsed;
  if (ips.length !== 1) return usage('name one address');
  const data = dataDir(o.data);
  const engine = openSync({ ...(data === undefined ? {} : { data }), ...(o.compare === undefined ? {} : { compare: o.compare }) });
  try {
    process.stdout.write(JSON.stringify(engine.explain(ips[0]), null, 2) + '\n');
    return 0;
  } catch (e) {
    if (!isIprecordError(e)) throw e;
    process.stderr.write(`iprecord: ${ips[0]}: ${e.message}\n`);
    return 1;
  } finally {
    engine.close();
  }
}

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
    if (l.state !== 'loaded')
      process.stderr.write(
        `warning: ${l.name}: ${l.state}${l.reason ? ` (${l.reason})` : l.dataDate ? ` (newest data ${l.dataDate})` : ''}\n`,
      );
  }
  for (const f of info.feeds) {
    if (f.state !== 'loaded')
      process.stderr.write(
        `warning: feed ${f.name}: ${f.state}${f.reason ? ` (${f.reason})` : f.dataDate ? ` (data of ${f.dataDate})` : ''}\n`,
      );
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

/** The options of `iprecord <ip>` (`--quiet` is taken for every command before this). */
const LOOKUP_FLAGS = ['--fields', '--field', '--threat', '--data', '--version', '--help'];

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
      else if (a.startsWith('-') && a !== '-' && !a.includes(':') && !/^-?\d/.test(a)) return unknownOption(a, LOOKUP_FLAGS);
      else args.ips.push(a);
    } catch (e) {
      return (e as Error).message;
    }
  }
  // Each of these says what to print: two of them would leave one unheard.
  const shapes = ['--threat', '--field', '--fields'].filter((o) => given.has(o));
  if (shapes.length > 1) return `${shapes.join(' and ')} cannot be used together`;
  // `--field 8.8.8.8`: the name forgotten, the address taken for it.
  if (args.field !== undefined && !args.stdin && args.ips.length === 0 && isIP(args.field) !== 0)
    return `--field needs a field name before the address (--field country_code ${args.field})`;
  if (!args.stdin && args.ips.length === 0) return 'no address given';
  return args;
}

/**
 * What each address prints, made once: a member's member (`asn.asn`) read
 * through `Engine.select`, compiled here, as enrich and select() take it;
 * else the engine's own call.
 * @throws InvalidFieldError for a path the record has not
 */
function answerer(engine: Engine, args: Args): (ip: string) => unknown {
  const { field, fields } = args;
  if (args.threat) return (ip) => engine.threat(ip);
  if (field?.includes('.')) {
    const pick = engine.select(field);
    return (ip) => pick(ip)[field.trim()];
  }
  if (field !== undefined) return (ip) => engine.field(ip, field as never);
  if (fields?.includes('.')) return engine.select(fields);
  return (ip) => engine.lookup(ip, fields === undefined ? undefined : { fields });
}

export async function main(argv: string[]): Promise<number> {
  try {
    if (argv[0] === 'enrich') return await (await import('./enrich-command.js')).runEnrich(argv.slice(1));
    if (argv[0] === 'build') return await (await import('./build.js')).runBuild(argv.slice(1));
    if (argv[0] === 'info') return runInfo(argv.slice(1));
    if (argv[0] === 'update') return await (await import('./build.js')).runUpdate(argv.slice(1));
    if (argv[0] === 'export') return await (await import('./export.js')).runExport(argv.slice(1));
    if (argv[0] === 'diff') return (await import('./diff.js')).runDiff(argv.slice(1));
    if (argv[0] === 'explain') return runExplain(argv.slice(1));
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  const command = misspeltCommand(argv[0]);
  if (command !== undefined) {
    process.stderr.write(`iprecord: unknown command ${argv[0]} (did you mean ${command}?); iprecord --help lists the commands\n`);
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
    process.stderr.write(`iprecord: ${parsed}; iprecord --help lists the options\n`);
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
  let answer: (ip: string) => unknown;
  const print = (ip: string) => {
    try {
      const v = answer(ip);
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
    answer = answerer(engine, parsed);
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
