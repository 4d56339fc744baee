/**
 * `iprecord build`: compiles the threat feeds into a dataset directory,
 * with the configuration's databases, and swaps the build in.
 */

import { join } from 'node:path';
import { buildAndSwap } from '../../compile/feeds/update.js';
import { THREAT_FILE } from '../../dataset/store.js';
import { stopOnSignals } from '../../files/stop.js';
import { feedCommand } from '../feed-command.js';

export const USAGE = `Usage: iprecord build [--config file] [--out dir]

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

export async function run(argv: string[]): Promise<number> {
  // A signal removes the build being written and the lock: nothing is left behind.
  stopOnSignals();
  const args = feedCommand('build', USAGE, argv, 'out');
  if (typeof args === 'number') return args;
  const { dir: out, config } = args;
  const started = Date.now();
  const { build: result, buildDir } = await buildAndSwap(config, out);
  let failed = 0;
  for (const f of result.feeds) {
    if (f.state !== 'ok') failed++;
    const bad = f.badLines.length;
    process.stderr.write(
      `${f.state === 'ok' ? 'ok     ' : f.state.padEnd(7)} ${f.name}: ${f.entries} entries${f.skipped ? `, ${f.skipped} below the feed's minimum (minHits, minConfidence)` : ''}${bad ? `, ${bad} bad lines` : ''}${f.error ? ` (${f.error})` : ''}\n`,
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
