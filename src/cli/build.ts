/**
 * `iprecord build`: compiles the threat feeds into a dataset directory;
 * `iprecord update`: downloads them (and the configured sources) first,
 * validated, and swaps the build in.
 */

import { join, resolve } from 'node:path';
import { buildAndSwap } from '../compile/feeds/update.js';
import { commandOptions, options } from './args.js';
import { THREAT_FILE, userDataDir } from '../dataset/store.js';
import { stopOnSignals } from '../files/stop.js';
import { defaultThreatConfig, readThreatConfig, type ThreatConfig } from '../compile/feeds/config.js';
import { updateDataset } from '../compile/feeds/update.js';

const BUILD_USAGE = `Usage: iprecord build [--config file] [--out dir]

Compiles the threat feeds of a feed configuration (JSON; default: the
built-in public lists) into a new build of a dataset directory
(builds/<time>/threat.bin), then the configuration's databases (default:
the default data) with those feeds into one dataset (dataset.iprd: the
feeds merged into the databases' own compiled dataset, about 3 s for the
default data; 13 s and 1.2 GB more when the databases changed), writes manifest.json and points the directory's current file at
the build with one rename. Local paths are read as they are; URL feeds are
read from the directory's feeds/ downloads (iprecord update). Each feed's
entries and bad lines (file and line) are reported on standard error.

Options:
  --config file    feed configuration (see docs/threat-feeds.md)
  --out dir        dataset directory; default $IPRECORD_DATA, else the user's
                   (~/.local/share/iprecord, macOS ~/Library/Application Support/iprecord,
                   Windows %LOCALAPPDATA%\\iprecord), which open() and every command read
  -h, --help       this help

Exit codes: 0 every feed compiled, 1 some feeds missing or unreadable, 2 usage or configuration error;
SIGTERM, SIGINT or SIGHUP stops it at once, the build being written and the lock removed (143, 130, 129).
`;

/**
 * Arguments of `build` and `update`: the dataset directory (`dirOption`)
 * and the feed configuration, read. A number is the exit code to return.
 */
function feedCommand(
  command: string,
  usage: string,
  argv: string[],
  dirOption: 'out' | 'data',
): { dir: string; config: ThreatConfig } | number {
  const parsed = commandOptions(command, usage, options(argv, ['config', dirOption]));
  if (typeof parsed === 'number') return parsed;
  const { o } = parsed;
  try {
    return {
      dir: resolve(o[dirOption] ?? userDataDir()),
      config: o.config === undefined ? defaultThreatConfig() : readThreatConfig(o.config),
    };
  } catch (e) {
    process.stderr.write(`iprecord ${command}: ${(e as Error).message}\n`);
    return 2;
  }
}

export async function runBuild(argv: string[]): Promise<number> {
  // A signal removes the build being written and the lock: nothing is left behind.
  stopOnSignals();
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
    `wrote ${join(buildDir, THREAT_FILE)} (${result.buffer.length} bytes: ${ranges.v4} IPv4 and ${ranges.v6} IPv6 merged ranges, ${labels} labels) from ${result.feeds.length - failed} of ${result.feeds.length} feeds in ${Date.now() - started} ms\n`,
  );
  (await import('./diff.js')).recordChanges(out, buildDir);
  return failed > 0 ? 1 : 0;
}

const UPDATE_USAGE = `Usage: iprecord update [--config file] [--data dir] [--allow-shrink] [--allow-growth]

Downloads the databases and feeds of a feed configuration given as URLs
(default: DB-IP Lite City and ASN data from the ip-location-db releases,
and the built-in public lists) into the dataset directory, validates each
download, compiles a new build (as iprecord build) and swaps it in with
one rename. A database must open as one of its role's schemas, end at a
line's end (CSV), hold at least sources.minNetworks networks and at most
half fewer than its last good download, cover per family at least 90 % of
the addresses its last good download covered, and still place the check
addresses (8.8.8.8 in the US and AS15169, ...); a feed at least one entry,
at most half fewer than its last good download, no entry wider than it
takes (default /8 of IPv4, /16 of IPv6), per family at most ten times the
addresses its last good download covered (beyond a /16 of IPv4, a /32 of
IPv6), at most 10 % bad lines.
One database refused refuses them all: every database keeps its last good
download (a build never mixes providers' releases), and the failure is
reported; until a database's first download, the installed default data
stands in.

Options:
  --config file    feed configuration
  --data dir       dataset directory; default $IPRECORD_DATA, else the user's
                   (~/.local/share/iprecord, macOS ~/Library/Application Support/iprecord,
                   Windows %LOCALAPPDATA%\\iprecord), which open() and every command read
  --allow-shrink   take downloads smaller than the last good ones knowingly
  --allow-growth   take feeds covering over ten times the last good ones knowingly
  -h, --help       this help

Exit codes: 0 every source updated or unchanged, 1 some failed (their last good data kept), 2 usage or configuration error;
SIGTERM, SIGINT or SIGHUP stops it at once, downloads, the build being written and the lock removed (143, 130, 129).
`;

export async function runUpdate(argv: string[]): Promise<number> {
  // A signal removes the downloads and the build being written and the lock: nothing is left behind.
  stopOnSignals();
  const allowShrink = argv.includes('--allow-shrink');
  const allowGrowth = argv.includes('--allow-growth');
  const args = feedCommand(
    'update',
    UPDATE_USAGE,
    argv.filter((a) => a !== '--allow-shrink' && a !== '--allow-growth'),
    'data',
  );
  if (typeof args === 'number') return args;
  const { dir, config } = args;
  const result = await updateDataset(config, dir, { allowShrink, allowGrowth });
  for (const s of result.sources) {
    process.stderr.write(
      `${s.state.padEnd(9)} ${s.role} ${s.url}${s.networks !== undefined ? `: ${s.networks} networks` : ''}${s.error ? ` (${s.error})` : ''}\n`,
    );
  }
  for (const f of result.feeds) {
    process.stderr.write(
      `${f.state.padEnd(9)} ${f.name}${f.entries !== undefined ? `: ${f.entries} entries` : ''}${f.error ? ` (${f.error})` : ''}\n`,
    );
  }
  process.stderr.write(`current build: ${result.buildDir}\n`);
  (await import('./diff.js')).recordChanges(dir, result.buildDir);
  return result.ok ? 0 : 1;
}
