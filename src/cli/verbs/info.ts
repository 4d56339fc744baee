/** `iprecord info`: the dataset file checked whole, then what is loaded, as JSON. */

import { commandOptions, dataDir, options } from '../args.js';
import { openSync } from '../../engine/engine.js';

export const USAGE = `Usage: iprecord info [--data dir]

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

export function run(argv: string[]): number {
  const parsed = commandOptions('info', USAGE, options(argv, ['data']));
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
