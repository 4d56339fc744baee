/**
 * The Parquet export in DuckDB (its bundled Parquet reader, no extension
 * download): an ASOF LEFT JOIN of 30 000 log addresses (range starts
 * and ends, one before and one after each, random IPv4 and IPv6) against
 * the export gives, for every address, the record `lookup()` gives less
 * its dynamic members, and no record exactly where it answers an error.
 */

import { linkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { exportDataset, parquetFiles } from '../../src/export/index.js';
import { staticRecord } from '../../src/export/record.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { smallEngineFor } from '../helpers/maxmind.js';
import { ADDRESS_FORMS, docRecipe, runDuckdbRecipe } from '../helpers/recipes.js';

describe('exportDataset: parquet in DuckDB', () => {
  const t = smallEngineFor('iprecord-duckdb-');
  const dir = t.dir;

  it('an ASOF join of 30 000 log addresses (every range edge) gives what lookup() gives', async () => {
    const out = join(dir, 'records.parquet');
    const result = await exportDataset(t.engine, { format: 'parquet', out });
    const files = parquetFiles(out);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    // One thread: beside the other suites, DuckDB's second thread cost more CPU than it saved time (12.1 s of CPU against 14.7 s, alone).
    await c.run('SET threads = 1');
    const rows = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJson();

    // The files' types, as the issue of engines that read 128-bit integers as DOUBLE asks.
    const types = async (file: string) =>
      Object.fromEntries((await rows(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).map((r) => [r.column_name, r.column_type]));
    const t4 = await types(files[4]);
    const t6 = await types(files[6]);
    expect([t4.start, t4.end, t6.start, t6.end]).toEqual(['UBIGINT', 'UBIGINT', 'BLOB', 'BLOB']);
    expect(t4.asn).toMatch(/^STRUCT\(asn VARCHAR, "name" VARCHAR, "?domain"? VARCHAR, "?route"? VARCHAR, "type" VARCHAR\)$/);
    expect(t4.threat).toMatch(/blocklists STRUCT\("name" VARCHAR, site VARCHAR, "type" VARCHAR\)\[\]/);
    const counted = (
      await rows(`SELECT (SELECT count(*) FROM read_parquet('${files[4]}')) + (SELECT count(*) FROM read_parquet('${files[6]}')) AS n`)
    )[0].n;
    expect(Number(counted)).toBe(result.rows);
    // The nested columns hold what the record's JSON holds.
    for (const file of [files[4], files[6]]) {
      const differ = await rows(
        `SELECT count(*) AS n FROM read_parquet('${file}') WHERE asn.route IS DISTINCT FROM json_extract_string(record, '$.asn.route') OR city IS DISTINCT FROM json_extract_string(record, '$.city')
           OR CAST(threat.scores.trust_score AS VARCHAR) IS DISTINCT FROM json_extract_string(record, '$.threat.scores.trust_score') OR coalesce(to_json(languages), 'null'::JSON) IS DISTINCT FROM json_extract(record, '$.languages')
           OR to_json(threat.blocklists) IS DISTINCT FROM json_extract(record, '$.threat.blocklists')`,
      );
      expect(Number(differ[0].n), file).toBe(0);
    }

    // The log: every range's start and end, one before and one after each (each address once: the address after a range
    // is most often the next one's start), then random addresses, 30 000 in all.
    const starts = (await rows(`SELECT DISTINCT start_ip, end_ip FROM read_parquet(['${files[4]}', '${files[6]}'])`)) as {
      start_ip: string;
      end_ip: string;
    }[];
    const next = xorshift32(seed());
    const log: string[] = [];
    const seen = new Set<string>();
    const add = (version: 4 | 6, n: bigint) => {
      const end = version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
      if (n < 0n || n > end) return;
      const ip = formatIp(version, fromBigInt(version, n));
      if (seen.has(ip)) return;
      seen.add(ip);
      log.push(ip);
    };
    for (const s of starts) {
      const a = parseIp(s.start_ip)!;
      const z = toBigInt(parseIp(s.end_ip)!);
      for (const n of [toBigInt(a) - 1n, toBigInt(a), z, z + 1n]) add(a.version, n);
    }
    const edges = log.length;
    while (log.length < 30_000) {
      if (next() & 1) add(4, BigInt(next()));
      else add(6, (BigInt((next() & 0x3fffffff) | 0x20000000) << 96n) | (BigInt(next()) << 64n) | BigInt(next()));
    }
    // Some as a dual-stack server logs IPv4 clients, and IPv4 addresses in the other forms iprecord answers as IPv4, dotted and in hex.
    const prefixes = ['::ffff:', '::FFFF:', '::', '64:ff9b::', '0:0:0:0:0:ffff:'];
    for (let i = 0; i < 3000; i++) {
      const v4 = fromBigInt(4, BigInt(next()));
      const hex = `${(v4[3] >>> 16).toString(16)}:${(v4[3] & 0xffff).toString(16)}`;
      log[Math.floor((i * log.length) / 3000)] = `${prefixes[i % 5]}${i % 2 === 0 ? formatIp(4, v4) : hex}`;
    }
    // Then text as logs hold it: forms iprecord answers, forms it refuses, text that is no address, an empty cell and NULL.
    const forms: (string | null)[] = [...ADDRESS_FORMS, '', null];
    const csv = join(dir, 'log.csv');
    writeFileSync(csv, 'id,client_ip\n' + log.map((ip, i) => `${i},${ip}`).join('\n') + '\n');
    await c.run(
      `CREATE TABLE logs AS SELECT * FROM read_csv('${csv}', header = true, columns = {'id': 'INTEGER', 'client_ip': 'VARCHAR'})`,
    );
    await c.run(
      `INSERT INTO logs VALUES ${forms.map((f, i) => `(${log.length + i}, ${f === null ? 'NULL' : `'${f.replaceAll("'", "''")}'`})`).join(', ')}`,
    );
    log.push(...(forms as string[]));
    // The recipe of docs/exports.md, as a user copies it.
    await runDuckdbRecipe(docRecipe('duckdb'), dir, (sql) => c.run(sql));
    const joined = (await rows(`SELECT id, CAST(record AS VARCHAR) AS record FROM enriched ORDER BY id`)) as {
      id: number;
      record: string | null;
    }[];
    expect(joined.length).toBe(log.length);
    // The macros join other files when named (`files :=`, a quote in the name), and a column whose name another holds
    // as a part (`client_ip` beside `client_ip_2`) is the one named.
    const other = join(dir, "other'copy");
    for (const v of [4, 6] as const) linkSync(files[v], `${other}.ipv${v}.parquet`);
    await c.run(`CREATE TABLE logs2 AS SELECT id, client_ip AS client_ip_2, client_ip FROM logs`);
    const again = await rows(
      `SELECT count(*) AS n FROM iprecord_join('logs2', 'client_ip', files := '${other.replaceAll("'", "''")}') j JOIN enriched e USING (id)
         WHERE j.record IS NOT DISTINCT FROM e.record AND j.client_ip_2 IS NOT DISTINCT FROM e.client_ip`,
    );
    expect(Number(again[0].n)).toBe(log.length);
    let records = 0;
    let errors = 0;
    const wrong: string[] = [];
    for (const j of joined) {
      const ip = log[j.id];
      let want: string | null = null;
      try {
        want = JSON.stringify(staticRecord(t.engine.lookup(ip)));
        records++;
      } catch {
        errors++;
      }
      if (j.record !== want && wrong.length < 10)
        wrong.push(`${ip}: DuckDB ${String(j.record).slice(0, 80)}, lookup() ${String(want).slice(0, 80)}`);
    }
    console.log(
      `duckdb: ${log.length} log addresses (${edges} range edges) ASOF-joined to ${result.rows} Parquet rows: ${records} records, ${errors} errors, ${wrong.length} different`,
    );
    expect(wrong).toEqual([]);
    expect(errors).toBeGreaterThan(0);

    // The join of the BigQuery, Snowflake and Spark recipes (equal /16 buckets, then the range, over the columns as
    // exported; the log's bucket as text, as network_bucket writes it) gives the ASOF join's answer for every address.
    const bucketed = (await rows(
      `SELECT l.id, CAST(r.record AS VARCHAR) AS record
       FROM (SELECT id, iprecord_ip4(client_ip) AS k, concat_ws('.', iprecord_ip4(client_ip) // 16777216, iprecord_ip4(client_ip) // 65536 % 256, '0.0/16') AS bucket
             FROM logs WHERE iprecord_ip4(client_ip) IS NOT NULL) l
       LEFT JOIN read_parquet('${files[4]}') r ON r.network_bucket = l.bucket AND l.k BETWEEN r.start AND r."end"
       UNION ALL
       SELECT l.id, CAST(r.record AS VARCHAR)
       FROM (SELECT id, iprecord_ip6(client_ip) AS k FROM logs WHERE iprecord_ip4(client_ip) IS NULL) l
       LEFT JOIN read_parquet('${files[6]}') r ON r.network_bucket = ltrim(lower(hex(l.k)[1:4]), '0') || '::/16' AND l.k BETWEEN r.start AND r."end"
       ORDER BY 1`,
    )) as { id: number; record: string | null }[];
    expect(bucketed.length).toBe(joined.length);
    const differ = bucketed.filter((b, i) => b.id !== joined[i].id || b.record !== joined[i].record);
    console.log(
      `duckdb: the bucket join of the BigQuery, Snowflake and Spark recipes: ${bucketed.length} addresses, ${differ.length} different from the ASOF join`,
    );
    expect(differ.slice(0, 5)).toEqual([]);
  }, 180_000);
});
