/**
 * `iprecord <ip> [ip...]`, the command without a verb: prints records
 * (pretty on a terminal, one compact JSON line each otherwise).
 * `--fields a,b`, `--field name`, `--threat`, `-` reads addresses from
 * standard input, `--data dir` (or IPRECORD_DATA) uses a dataset directory.
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { isIP } from 'node:net';
import { dataDir, ownVersion, unknownOption } from '../args.js';
import { VERBS } from '../verbs.js';
import { listAddress } from '../rows.js';
import { isIprecordError } from '../../contract/errors.js';
import { openSync, type Engine } from '../../engine/engine.js';

export const USAGE = `Usage: iprecord [options] <ip> [ip...]
       iprecord [options] -            (addresses from standard input, one per line)
       iprecord --version
${Object.values(VERBS)
  .map((v) => `       iprecord ${v.synopsis}\n`)
  .join('')}
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

export async function run(argv: string[]): Promise<number> {
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
      // A function, not a string: `$&` in an input would be a replacement pattern.
      process.stderr.write(`iprecord: ${e.message.replace(ip, () => shown(ip))}\n`);
    }
  };
  try {
    answer = answerer(engine, parsed);
    for (const ip of parsed.ips) print(ip);
    if (parsed.stdin) {
      for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
        const ip = listAddress(line);
        if (ip !== null) print(ip);
        // A reader slower than the list (a pipe): wait for it rather than hold every answer in memory.
        if (process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
      }
    }
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  return bad > 0 ? 1 : 0;
}

/** Characters of an input an error line shows at most. */
const SHOWN = 200;

/**
 * An input as an error line on standard error shows it: its control
 * characters escaped (`\u001b`: a line of a list must not move a
 * terminal's cursor or colour it), and cut past SHOWN characters, its
 * length said (a list's stray binary line is not echoed whole).
 */
function shown(text: string): string {
  const escaped = text
    .slice(0, SHOWN)
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text.length > SHOWN ? `${escaped}... (${text.length} characters)` : escaped;
}
