/** `iprecord export`: the compiled dataset's ranges with their records, for other engines (`export/index.ts`). */

import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { openSync } from '../../engine/engine.js';
import {
  checkTarget,
  EXPORT_FORMATS,
  EXPORT_SCHEMAS,
  exportDataset,
  exportTempFiles,
  type ExportFormat,
  type ExportSchema,
} from '../../export/index.js';
import { checkCsvFields } from '../../export/record.js';
import { stopOnSignals, untilDone } from '../../files/stop.js';
import { commandOptions, dataDir, fieldList, options } from '../args.js';
import { terminalProgress } from '../../compile/progress.js';
import { writeLiteDataset } from '../../compile/lite.js';

/** The formats of the command: an export's, and the lite dataset (made by the compiler's code: `compile/lite.ts`). */
const FORMATS = [...EXPORT_FORMATS, 'lite'];

export const USAGE = `Usage: iprecord export --format csv|mmdb|parquet|lite --out file [--fields list] [--schema s] [--data dir]

Writes every range of the dataset that has a record, with the record less
ip, count and the clock of time_zone (its name kept), and a manifest
(sources, dates, feed states, licences) beside it as <file>.manifest.json.

Formats:
  csv      one row per CIDR block: network, start_ip, end_ip, the record's
           fields as dotted columns (asn.name), and record (its JSON);
           a name ending in .gz is gzipped; --fields chooses the columns
           after network,start_ip,end_ip (the default data's full CSV is
           tens of GB: a ClickHouse dictionary rarely needs every one)
  mmdb     a MaxMind DB (database_type iprecord-Record): IPv4 at ::/96 and
           ::ffff:0:0/96; null members left out (the format has no null);
           --schema city, asn, anonymous-ip or enterprise writes it in
           MaxMind's schema of that name instead (Elasticsearch, Logstash,
           nginx and MaxMind's readers read it: docs/exports.md)
  parquet  two files, <file> with .ipv4 and .ipv6 before .parquet: start and
           end (UINT64, or 16 bytes big-endian), start_ip, end_ip, network,
           network_bucket (the /16, a range repeated per /16), the record's
           fields as nested columns, and record (JSON); and <file> with
           .duckdb.sql for .parquet: DuckDB macros joining a log to both
           (.read it, then FROM iprecord_join('logs', 'client_ip'))
  lite     a dataset for the edge (openBytes of iprecord/bytes, or
           open({ dataset })): country and its facts, asn with its route,
           carrier and threat of every address; city, region, postal,
           coordinates and time_zone null (docs/runtimes.md)

Options:
  --format f       ${FORMATS.join(', ')}
  --out file       the file to write (replaced when complete; a directory, a
                   device or a symbolic link is refused); - : standard
                   output (csv only, no manifest)
  --fields list    csv only: comma-separated dotted columns (asn.name), top-level
                   keys (asn: its JSON) or record (the whole record's JSON);
                   default every column, then record
  --schema s       mmdb only: ${EXPORT_SCHEMAS.join(', ')} (default iprecord, the record's own keys)
  --data dir       a dataset directory (iprecord build); default $IPRECORD_DATA, else the user's when it holds a build, else the default data
  -h, --help       this help

Exit codes: 0 written, 2 usage, data or write error (nothing left behind).
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = commandOptions('export', USAGE, options(argv, ['format', 'out', 'fields', 'schema', 'data']));
  if (typeof parsed === 'number') return parsed;
  const { o, usage } = parsed;
  if (o.format === undefined) return usage('--format is required');
  if (!FORMATS.includes(o.format)) return usage(`--format must be one of ${FORMATS.join(', ')}`);
  if (o.out === undefined) return usage('--out is required');
  if (o.format === 'lite') {
    if (o.fields !== undefined || o.schema !== undefined) return usage('a lite dataset holds its own members: no --fields or --schema');
    if (o.out === '-') return usage('a lite dataset is written to a file, not to standard output (-)');
    return lite(dataDir(o.data), resolve(o.out), o.out);
  }
  const fields = fieldList(o.fields);
  if (fields !== undefined) {
    if (o.format !== 'csv') return usage(`--fields chooses the columns of a csv export; a ${o.format} export holds every field`);
    try {
      checkCsvFields(fields);
    } catch (e) {
      return usage(`--fields: ${(e as Error).message}`);
    }
  }
  const schema = o.schema as ExportSchema | undefined;
  if (schema !== undefined) {
    if (!EXPORT_SCHEMAS.includes(schema)) return usage(`--schema must be one of ${EXPORT_SCHEMAS.join(', ')}`);
    if (o.format !== 'mmdb') return usage(`--schema ${schema} is for an mmdb export; a ${o.format} export holds the record's own keys`);
  }
  const data = dataDir(o.data);
  const out = o.out === '-' ? '-' : resolve(o.out);
  const format = o.format as ExportFormat;
  // Stopped by a signal: its temporary files go with it (every export lets the event loop turn at least every 50 ms).
  stopOnSignals();
  const done = untilDone(() => {
    for (const t of out === '-' ? [] : exportTempFiles({ format, out })) rmSync(t, { force: true });
  });
  const engine = openSync(data === undefined ? {} : { data });
  try {
    const started = Date.now();
    const { progress, clear } = terminalProgress(started);
    const chosen = { ...(fields === undefined ? {} : { fields }), ...(schema === undefined ? {} : { schema }) };
    const r = await exportDataset(engine, { format, out, progress, ...chosen });
    clear();
    process.stderr.write(
      `wrote ${o.out === '-' ? 'standard output' : o.out}: ${r.rows} rows from ${r.ranges.v4} IPv4 and ${r.ranges.v6} IPv6 ranges (${r.bytes} bytes${r.uncompressed === undefined ? '' : `, ${r.uncompressed} of text before compression`}) in ${((Date.now() - started) / 1000).toFixed(1)} s${r.manifest === null ? '' : `; manifest ${r.manifest}`}\n`,
    );
    return 0;
  } finally {
    engine.close();
    done();
  }
}

/** `--format lite`: the lite edition of the dataset the engine answers from. */
function lite(data: string | undefined, out: string, named: string): number {
  const engine = openSync(data === undefined ? {} : { data });
  try {
    checkTarget(out);
    const started = Date.now();
    const r = writeLiteDataset(engine.info().dataset.path, out);
    process.stderr.write(
      `wrote ${named}: a lite dataset of ${r.ranges.v4} IPv4 and ${r.ranges.v6} IPv6 ranges, ${r.records} records (${r.bytes} bytes) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    engine.close();
  }
}
