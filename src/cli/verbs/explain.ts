/** `iprecord explain`: an address's record with the evidence behind it, as JSON (`evidence/explain.ts`). */

import { commandOptions, dataDir, options } from '../args.js';
import { InvalidDatasetError, isIprecordError } from '../../contract/errors.js';
import { openSync } from '../../engine/engine.js';

export const USAGE = `Usage: iprecord explain <ip> [--data dir] [--compare file]

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

Exit codes: 0 explained, 1 the address has no record (private, reserved or not an address), 2 usage or data error
(a damaged history of the lists among them).
`;

export function run(argv: string[]): number {
  const ips = argv.filter((a, i) => !a.startsWith('-') && argv[i - 1] !== '--data' && argv[i - 1] !== '--compare');
  const parsed = commandOptions(
    'explain',
    USAGE,
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
    process.stdout.write(JSON.stringify(engine.explain(ips[0], { damagedHistory: 'throw' }), null, 2) + '\n');
    return 0;
  } catch (e) {
    if (!isIprecordError(e)) throw e;
    process.stderr.write(`iprecord: ${ips[0]}: ${e.message}\n`);
    return e instanceof InvalidDatasetError ? 2 : 1;
  } finally {
    engine.close();
  }
}
