/**
 * Exports of the default data with every shared feed, and what they are
 * for: the built CLI as a child process builds the dataset (`iprecord
 * build` with the feeds of ../shared/data/feeds), then exports it in each
 * format (wall time, peak resident size, file sizes). Then 10 million log
 * rows (`id,client_ip,path`, uniform addresses: 90 % IPv4, 10 % IPv6)
 * enriched on every core by `iprecord enrich` (full records as NDJSON;
 * three fields as CSV) and by DuckDB running the recipe of docs/exports.md against
 * the Parquet export in a process of its own (`bench/duckdb-join.ts`:
 * reading the log CSV, the ASOF joins, the result written as a Parquet
 * file; full records, full records under a 4 GB memory limit, three
 * fields).
 *
 *     npm run build && npm run bench:export
 *
 * About 40 minutes and 40 GB of disk under $TMPDIR (the full CSV);
 * `EXPORTS=parquet npm run bench:export` leaves the other exports out
 * (about 8 minutes: the build, the Parquet export, enrich against DuckDB).
 */

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { SHARED_DATA } from '../test/helpers/env.js';
import { SHARED_FEEDS, sharedFeeds } from '../test/helpers/feeds.js';
import { runCli, uniformRow, writeCsv } from './cli.js';

const FEEDS = join(SHARED_DATA, 'feeds');
try {
  statSync(FEEDS);
} catch {
  console.error(`bench/export.ts needs the shared feeds at ${FEEDS}; they are not there.`);
  process.exit(1);
}

const LOG_ROWS = Number(process.env.LOG_ROWS ?? 10_000_000);
/** EXPORTS=parquet (or mmdb, csv, a list): only those exports (the DuckDB part needs the Parquet one). */
const ONLY = process.env.EXPORTS === undefined ? null : process.env.EXPORTS.split(',');
if (ONLY !== null && !ONLY.includes('parquet')) throw new Error('EXPORTS must include parquet: DuckDB joins against it');
const dir = mkdtempSync(join(tmpdir(), 'iprecord-bench-export-'));
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const secs = (s: number) => `${s.toFixed(0)} s`;
const rate = (rows: number, s: number) => `${Math.round(rows / s).toLocaleString('en')} rows/s`;
/** The bytes of the files in the directory whose names start with `prefix` (the manifests left out). */
const sizeOf = (prefix: string) =>
  readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && !f.endsWith('.manifest.json'))
    .map((f) => `${f} ${mib(statSync(join(dir, f)).size)}`)
    .join(', ');

try {
  console.log(`machine: ${availableParallelism()} × ${cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`);
  const config = join(dir, 'feeds.json');
  writeFileSync(config, JSON.stringify({ feeds: sharedFeeds() }));
  const data = join(dir, 'data');
  const build = await runCli(['build', '--config', config, '--out', data]);
  console.log(`build (default data + ${SHARED_FEEDS.length} shared feeds): ${secs(build.secs)}, peak ${mib(build.peak)}`);

  const exports: [label: string, args: string[], prefix: string][] = (
    [
      ['mmdb', ['--format', 'mmdb', '--out', join(dir, 'records.mmdb')], 'records.mmdb'],
      ['parquet', ['--format', 'parquet', '--out', join(dir, 'records.parquet')], 'records.ipv'],
      [
        'csv, four columns',
        ['--format', 'csv', '--out', join(dir, 'four.csv'), '--fields', 'country_code,asn.asn,asn.type,threat.is_threat'],
        'four.csv',
      ],
      ['csv, every column and record, gzipped', ['--format', 'csv', '--out', join(dir, 'full.csv.gz')], 'full.csv.gz'],
    ] as [string, string[], string][]
  ).filter(([label]) => ONLY === null || ONLY.includes(label.split(/[ ,]/)[0]));
  for (const [label, args, prefix] of exports) {
    const r = await runCli(['export', '--data', data, ...args]);
    console.log(`export ${label}: ${secs(r.secs)}, peak ${mib(r.peak)}; ${sizeOf(prefix)}; ${r.summary}`);
    // The full CSV (tens of GB unzipped) is only measured.
    if (prefix === 'full.csv.gz') rmSync(join(dir, prefix));
  }

  const log = join(dir, 'log.csv');
  writeCsv(log, LOG_ROWS, 2024, uniformRow);
  console.log(`log: ${LOG_ROWS.toLocaleString('en')} rows, ${mib(statSync(log).size)}`);
  // Two ways each: full records, and three fields (as CSV from enrich, as columns from DuckDB).
  const fields = 'country_code,asn.name,threat.is_threat';
  const enrichFull = await runCli(['enrich', log, '--data', data, '--column', 'client_ip', '--output', 'ndjson']);
  console.log(
    `iprecord enrich, full records as NDJSON to /dev/null: ${secs(enrichFull.secs)}, ${rate(LOG_ROWS, enrichFull.secs)}, peak ${mib(enrichFull.peak)} (${enrichFull.summary})`,
  );
  const enrichFields = await runCli(['enrich', log, '--data', data, '--column', 'client_ip', '--fields', fields]);
  console.log(
    `iprecord enrich, ${fields} as CSV to /dev/null: ${secs(enrichFields.secs)}, ${rate(LOG_ROWS, enrichFields.secs)}, peak ${mib(enrichFields.peak)} (${enrichFields.summary})`,
  );
  for (const [variant, label, peer] of [
    ['record', 'full records (the recipe as written)', enrichFull],
    ['record-4gb', "full records, SET memory_limit = '4GB'", enrichFull],
    ['fields', `${fields} as columns`, enrichFields],
  ] as const) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'duckdb-join.ts'), dir, variant], {
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`bench/duckdb-join.ts ${variant}: ${run.stderr}`);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      secs: number;
      peak: number;
      rows: number;
      records: number;
      bytes: number;
    };
    console.log(
      `DuckDB, the recipe of docs/exports.md, ${label} (read the CSV, join, write Parquet): ${secs(r.secs)}, ${rate(LOG_ROWS, r.secs)} (${(peer.secs / r.secs).toFixed(2)}x enrich), peak ${mib(r.peak)}; ${r.rows} rows, ${r.records} with a record, ${mib(r.bytes)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
