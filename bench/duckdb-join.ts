/**
 * One run of the DuckDB recipe (docs/exports.md) for `bench/export.ts`, in a process
 * of its own (so that its peak resident size is its own):
 *
 *     node --import tsx bench/duckdb-join.ts <dir> <variant>
 *
 * `<dir>` holds `log.csv` and the Parquet export `records.ipv4.parquet`,
 * `records.ipv6.parquet` with the macros written beside them
 * (`records.duckdb.sql`). Variants: `record` (the recipe as written),
 * `record-4gb` (the same with its memory limit at 4 GB instead of 600 MB), `fields` (three
 * fields of the record instead of the record, as docs/exports.md suggests). The result
 * is written as a Parquet file. Prints one line of JSON: seconds, peak
 * resident bytes, rows, rows with a record, bytes written.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { residentBytes } from '../test/helpers/env.js';
import { docRecipe, runDuckdbRecipe } from '../test/helpers/recipes.js';

const [dir, variant] = process.argv.slice(2);
/** The `fields` variant: three fields of the record in its place. */
const fields = (sql: string) =>
  sql.replace(
    /^CREATE TABLE enriched AS (FROM .*)$/,
    "CREATE TABLE enriched AS SELECT * EXCLUDE (record), record->>'country_code' AS country_code, record->>'$.asn.name' AS asn_name, (record->>'$.threat.is_threat')::BOOLEAN AS is_threat $1",
  );
const db = await DuckDBInstance.create(':memory:', { temp_directory: join(dir, 'duckdb.tmp') });
const c = await db.connect();
let peak = 0;
const timer = setInterval(() => (peak = Math.max(peak, residentBytes(process.pid))), 100);
const started = performance.now();
await c.run(
  `CREATE TABLE logs AS SELECT * FROM read_csv('${join(dir, 'log.csv')}', header = true, columns = {'id': 'BIGINT', 'client_ip': 'VARCHAR', 'path': 'VARCHAR'})`,
);
const out = join(dir, `enriched-${variant}.parquet`);
await runDuckdbRecipe(
  docRecipe('duckdb'),
  dir,
  async (sql) => c.run(sql),
  (sql) => {
    let local = sql;
    if (variant === 'fields') local = fields(local);
    if (variant === 'record-4gb') local = local.replace("SET memory_limit = '600MB'", "SET memory_limit = '4GB'");
    // The recipe's table, written as a file instead of held in memory.
    return local.startsWith('CREATE TABLE enriched AS')
      ? `COPY (${local.slice('CREATE TABLE enriched AS'.length)}) TO '${out}' (FORMAT parquet)`
      : local;
  },
);
const secs = (performance.now() - started) / 1000;
clearInterval(timer);
const column = variant === 'fields' ? 'country_code' : 'record';
const found = (await c.runAndReadAll(`SELECT count(*) AS rows, count(${column}) AS records FROM '${out}'`)).getRowObjectsJson()[0];
console.log(JSON.stringify({ secs, peak, rows: Number(found.rows), records: Number(found.records), bytes: statSync(out).size }));
