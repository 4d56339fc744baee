/**
 * `iprecord update`: downloads the configuration's databases and feeds,
 * validated, then builds (as `iprecord build`) and swaps the build in.
 */

import { updateDataset } from '../../compile/feeds/update.js';
import { stopOnSignals } from '../../files/stop.js';
import { feedCommand } from '../feed-command.js';

export const USAGE = `Usage: iprecord update [--config file] [--data dir] [--allow-shrink] [--allow-growth]

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

export async function run(argv: string[]): Promise<number> {
  // A signal removes the downloads and the build being written and the lock: nothing is left behind.
  stopOnSignals();
  const allowShrink = argv.includes('--allow-shrink');
  const allowGrowth = argv.includes('--allow-growth');
  const args = feedCommand(
    'update',
    USAGE,
    argv.filter((a) => a !== '--allow-shrink' && a !== '--allow-growth'),
    'data',
  );
  if (typeof args === 'number') return args;
  const { dir, config } = args;
  // On a terminal, a line of the downloads done, rewritten in place (the compile then shows its own).
  const { terminalProgress } = await import('../../compile/progress.js');
  const { progress, clear } = terminalProgress();
  const result = await updateDataset(config, dir, { allowShrink, allowGrowth, progress });
  clear();
  // A host whose name does not resolve is one line, not one a feed of it.
  const unresolved = new Map<string, number>();
  const said = (error: string | undefined) => {
    const host = error === undefined ? null : /^(\S+ does not resolve [^;]*)/.exec(error)?.[1];
    if (host == null) return false;
    unresolved.set(host, (unresolved.get(host) ?? 0) + 1);
    return true;
  };
  for (const s of result.sources) {
    if (s.state === 'failed' && said(s.error)) continue;
    process.stderr.write(
      `${s.state.padEnd(9)} ${s.role} ${s.url}${s.networks !== undefined ? `: ${s.networks} networks` : ''}${s.error ? ` (${s.error})` : ''}\n`,
    );
  }
  for (const f of result.feeds) {
    if (f.state === 'failed' && said(f.error)) continue;
    process.stderr.write(
      `${f.state.padEnd(9)} ${f.name}${f.entries !== undefined ? `: ${f.entries} entries` : ''}${f.error ? ` (${f.error})` : ''}\n`,
    );
  }
  for (const [host, n] of unresolved)
    process.stderr.write(`${'failed'.padEnd(9)} ${host}: ${n} ${n === 1 ? 'download' : 'downloads'}, each keeping its last good data\n`);
  if (result.build === null) {
    process.stderr.write(`nothing was downloaded: the current build is kept (${result.buildDir})\n`);
    return 1;
  }
  process.stderr.write(`current build: ${result.buildDir}\n`);
  (await import('./diff.js')).recordChanges(dir, result.buildDir);
  return result.ok ? 0 : 1;
}
