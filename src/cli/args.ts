/** Arguments of the CLI's subcommands. */

import { readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { defaultDataDir } from '../dataset/store.js';
import { selectsNothing } from '../record/fields.js';
import { nearestName } from '../engine/options.js';

/** Options of a subcommand: `--name value` or `--name=value`. */
export function options(argv: string[], names: readonly string[]): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') return 'help';
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (!a.startsWith('--') || !names.includes(name))
      return unknownOption(
        a,
        names.map((n) => `--${n}`),
      );
    const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
    if (v === undefined) return `${a} needs a value`;
    if (name in out) return `--${name} is given twice`;
    out[name] = v;
  }
  return out;
}

/**
 * The dataset directory: the option, else $IPRECORD_DATA, else the user's
 * when it holds a build, or, `waiting`, once it is there (`defaultDataDir`).
 */
export function dataDir(given: string | undefined, waiting = false): string | undefined {
  return given ?? defaultDataDir(process.env, process.platform, homedir(), waiting);
}

/** An argument that is no option of the command: named, with the option it most likely misspells. */
export function unknownOption(arg: string, options: readonly string[]): string {
  const name = arg.split('=')[0];
  if (!name.startsWith('-')) return `unexpected argument ${arg}`;
  const near = nearestName(name, options);
  return `unknown option ${name}${near === undefined ? '' : ` (did you mean ${near}?)`}`;
}

/** A usage error: printed on one line with where the usage is; returns exit code 2. */
export type UsageError = (message: string) => number;

/**
 * The parsed options of a subcommand (from `options()`), or the exit code
 * once its help (0) or a usage error (2) is printed.
 */
export function commandOptions(
  command: string,
  usageText: string,
  parsed: Record<string, string> | string,
): { o: Record<string, string>; usage: UsageError } | number {
  const usage: UsageError = (message) => {
    process.stderr.write(`iprecord ${command}: ${message}; iprecord ${command} --help lists its options\n`);
    return 2;
  };
  if (parsed === 'help') {
    process.stdout.write(usageText);
    return 0;
  }
  if (typeof parsed === 'string') return usage(parsed);
  return { o: parsed, usage };
}

/**
 * The version in iprecord's package.json: beside `dist/` when built, two
 * folders up from `src/cli/` when run from source.
 */
export function ownVersion(): string {
  for (const up of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'iprecord' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not there: the other layout
    }
  }
  return 'unknown';
}

/** A `--fields` list (comma-separated, spaces trimmed); one that names no field (`--fields ''`) selects nothing: undefined, the whole record. */
export function fieldList(value: string | undefined): string[] | undefined {
  if (value === undefined || selectsNothing(value)) return undefined;
  return value
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** Worker threads or processes a core at most (`enrich --threads`, `serve --workers`). */
const MOST_A_CORE = 4;

/**
 * `asked` workers (of option `flag`: threads, processes), at most four a
 * core of this machine: past the cores they cannot run but wait, each
 * holding an engine of its own (200 threads held 1.3 GB for a two-line
 * file); more asked for is said as a warning (`IPRECORD_WORKERS`) where
 * `say` (a cluster's workers read the same options: the primary says it).
 */
export function atMostFourACore(asked: number, flag: string, what: string, say = true): number {
  const cores = availableParallelism();
  const most = MOST_A_CORE * cores;
  if (asked <= most) return asked;
  if (say)
    process.emitWarning(`${flag} ${asked} is more than ${MOST_A_CORE} a core of this machine's ${cores}: ${most} ${what}`, {
      code: 'IPRECORD_WORKERS',
    });
  return most;
}
