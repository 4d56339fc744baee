/**
 * Exports of the default data with every shared feed, and what they are
 * for: the built CLI as a child process builds the dataset (`iprecord
 * build` with the feeds of ../shared/data/feeds), then exports it in each
 * format (wall time, peak resident size, file sizes). Then 10 million log
 * rows (`id,client_ip,path`, uniform addresses: 90 % IPv4, 10 % IPv6)
 * enriched two ways, each with full records on every core: `iprecord
 * enrich` to NDJSON, and DuckDB running the README's recipe against the
 * Parquet export (reading the log CSV, the ASOF joins, the result written
 * as a Parquet file).
 *
 *     npm run build && npm run bench:export
 *
 * About 40 minutes and 40 GB of disk under $TMPDIR (the full CSV).
 */

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { SHARED_DATA, residentBytes } from '../test/helpers/env.js';
import { SHARED_FEEDS } from '../test/helpers/feeds.js';
import { readmeRecipe, statements } from '../test/helpers/recipes.js';
import { runCli, uniformRow, writeCsv } from './cli.js';

const FEEDS = join(SHARED_DATA, 'feeds');
try {
  statSync(FEEDS);
} catch {
  console.error(`bench/export.ts needs the shared feeds at ${FEEDS}; they are not there.`);
  process.exit(1);
}

const LOG_ROWS = Number(process.env.LOG_ROWS ?? 10_000_000);
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
  writeFileSync(config, JSON.stringify({ feeds: SHARED_FEEDS.map((f) => ({ ...f, source: join(FEEDS, f.source) })) }));
  const data = join(dir, 'data');
  const build = await runCli(['build', '--config', config, '--out', data]);
  console.log(`build (default data + ${SHARED_FEEDS.length} shared feeds): ${secs(build.secs)}, peak ${mib(build.peak)}`);

  const exports: [label: string, args: string[], prefix: string][] = [
    ['mmdb', ['--format', 'mmdb', '--out', join(dir, 'records.mmdb')], 'records.mmdb'],
    ['parquet', ['--format', 'parquet', '--out', join(dir, 'records.parquet')], 'records.ipv'],
    ['csv, four columns', ['--format', 'csv', '--out', join(dir, 'four.csv'), '--fields', 'country_code,asn.asn,asn.type,threat.is_threat'], 'four.csv'],
    ['csv, every column and record, gzipped', ['--format', 'csv', '--out', join(dir, 'full.csv.gz')], 'full.csv.gz'],
  ];
  for (const [label, args, prefix] of exports) {
    const r = await runCli(['export', '--data', data, ...args]);
    console.log(`export ${label}: ${secs(r.secs)}, peak ${mib(r.peak)}; ${sizeOf(prefix)}; ${r.summary}`);
    // The full CSV (tens of GB unzipped) is only measured.
    if (prefix === 'full.csv.gz') rmSync(join(dir, prefix));
  }

  const log = join(dir, 'log.csv');
  writeCsv(log, LOG_ROWS, 2024, uniformRow);
  console.log(`log: ${LOG_ROWS.toLocaleString('en')} rows, ${mib(statSync(log).size)}`);
  const enrich = await runCli(['enrich', log, '--data', data, '--column', 'client_ip', '--output', 'ndjson']);
  console.log(`iprecord enrich, full records as NDJSON to /dev/null: ${secs(enrich.secs)}, ${rate(LOG_ROWS, enrich.secs)}, peak ${mib(enrich.peak)} (${enrich.summary})`);

  const db = await DuckDBInstance.create(':memory:', { temp_directory: join(dir, 'duckdb.tmp') });
  const c = await db.connect();
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, residentBytes(process.pid))), 100);
  const started = performance.now();
  await c.run(`CREATE TABLE logs AS SELECT * FROM read_csv('${log}', header = true, columns = {'id': 'BIGINT', 'client_ip': 'VARCHAR', 'path': 'VARCHAR'})`);
  const loaded = performance.now();
  const out = join(dir, 'enriched.parquet');
  for (const sql of statements(readmeRecipe('duckdb'))) {
    const local = sql.replaceAll("'records.ipv4.parquet'", `'${join(dir, 'records.ipv4.parquet')}'`).replaceAll("'records.ipv6.parquet'", `'${join(dir, 'records.ipv6.parquet')}'`);
    // The recipe's table, written as a file instead of held in memory.
    await c.run(local.startsWith('CREATE TABLE enriched AS') ? `COPY (${local.slice('CREATE TABLE enriched AS'.length)}) TO '${out}' (FORMAT parquet)` : local);
  }
  const joined = (performance.now() - started) / 1000;
  clearInterval(timer);
  const found = (await c.runAndReadAll(`SELECT count(*) AS rows, count(record) AS records FROM '${out}'`)).getRowObjectsJson()[0];
  console.log(
    `DuckDB, the README's recipe (read the CSV ${secs((loaded - started) / 1000)}, join and write Parquet): ${secs(joined)}, ${rate(LOG_ROWS, joined)}, peak ${mib(peak)}; ${String(found.rows)} rows, ${String(found.records)} with a record, ${mib(statSync(out).size)}`,
  );
  console.log(`DuckDB against iprecord enrich: ${(enrich.secs / joined).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
