/**
 * One run of the DuckDB recipe (docs/exports.md) for `bench/export.ts`, in a process
 * of its own (so that its peak resident size is its own):
 *
 *     node --import tsx bench/duckdb-join.ts <dir> <variant>
 *
 * `<dir>` holds `log.csv` and the Parquet export `records.ipv4.parquet`,
 * `records.ipv6.parquet`. Variants: `record` (the recipe as written),
 * `record-4gb` (the same with its memory limit at 4 GB instead of 600 MB), `fields` (three
 * nested columns instead of the record, as docs/exports.md suggests). The result
 * is written as a Parquet file. Prints one line of JSON: seconds, peak
 * resident bytes, rows, rows with a record, bytes written.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { residentBytes } from '../test/helpers/env.js';
import { docRecipe, statements } from '../test/helpers/recipes.js';

const [dir, variant] = process.argv.slice(2);
/** The `fields` variant: three nested columns in place of the record, read from the export and answered. */
const fields = (sql: string) =>
  sql
    .replaceAll('SELECT start, network_bucket, record FROM', 'SELECT start, network_bucket, country_code, asn, threat FROM')
    .replaceAll('r.record FROM hit', 'r.country_code, r.asn.name AS asn_name, r.threat.is_threat AS is_threat FROM hit');
const db = await DuckDBInstance.create(':memory:', { temp_directory: join(dir, 'duckdb.tmp') });
const c = await db.connect();
let peak = 0;
const timer = setInterval(() => (peak = Math.max(peak, residentBytes(process.pid))), 100);
const started = performance.now();
await c.run(
  `CREATE TABLE logs AS SELECT * FROM read_csv('${join(dir, 'log.csv')}', header = true, columns = {'id': 'BIGINT', 'client_ip': 'VARCHAR', 'path': 'VARCHAR'})`,
);
const out = join(dir, `enriched-${variant}.parquet`);
for (const sql of statements(docRecipe('duckdb'))) {
  let local = sql
    .replaceAll("'records.ipv4.parquet'", `'${join(dir, 'records.ipv4.parquet')}'`)
    .replaceAll("'records.ipv6.parquet'", `'${join(dir, 'records.ipv6.parquet')}'`);
  if (variant === 'fields') local = fields(local);
  if (variant === 'record-4gb') local = local.replace("SET memory_limit = '600MB'", "SET memory_limit = '4GB'");
  // The recipe's table, written as a file instead of held in memory.
  await c.run(
    local.startsWith('CREATE TABLE enriched AS')
      ? `COPY (${local.slice('CREATE TABLE enriched AS'.length)}) TO '${out}' (FORMAT parquet)`
      : local,
  );
}
const secs = (performance.now() - started) / 1000;
clearInterval(timer);
const column = variant === 'fields' ? 'country_code' : 'record';
const found = (await c.runAndReadAll(`SELECT count(*) AS rows, count(${column}) AS records FROM '${out}'`)).getRowObjectsJson()[0];
console.log(JSON.stringify({ secs, peak, rows: Number(found.rows), records: Number(found.records), bytes: statSync(out).size }));
