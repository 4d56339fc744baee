/**
 * The DuckDB macros a Parquet export writes beside its two files
 * (`<out>.duckdb.sql`), so that a user joins a log to the export in one
 * line (`FROM iprecord_join('logs', 'client_ip')`) instead of pasting the
 * address parsing. DuckDB parses address text only with its `inet`
 * extension, which is downloaded on first use; these macros use only
 * functions DuckDB ships, so the join runs offline.
 *
 * The keys are iprecord's reading of address text: a dotted quad, or IPv6
 * in any written form; IPv6 that carries IPv4 (`::ffff:a.b.c.d`,
 * `::a.b.c.d`, `64:ff9b::a.b.c.d`, dotted or in hex) is keyed as the IPv4
 * address; text that is no address gets no key, no record, and its row is
 * kept. The join reads only `start`, `end` and `network_bucket` for the
 * ASOF joins, then the records of the ranges found, so it never holds the
 * export's records in memory (docs/exports.md: 50 000 rows in under 1 GB).
 */

/** The macros file of a Parquet export named `out`: `records.parquet` gives `records.duckdb.sql`. */
export function duckdbMacrosFile(out: string): string {
  return `${parquetPrefix(out)}.duckdb.sql`;
}

/** `records.parquet` and `records` give `records`: the name both families' files start with. */
export const parquetPrefix = (out: string): string => /^(.*?)(\.parquet)?$/i.exec(out)![1];

const QUAD = String.raw`((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`;
const GROUP = '[0-9a-f]{1,4}';

/** The text of the macros file for the Parquet files starting with `prefix` (the default of the join's `files`). */
export function duckdbMacros(prefix: string): string {
  const files = `'${prefix.replaceAll("'", "''")}'`;
  return `-- iprecord export: DuckDB macros for ${prefix}.ipv4.parquet and ${prefix}.ipv6.parquet.
-- In the DuckDB CLI: .read ${prefix}.duckdb.sql; from a client library, run this file's text.
-- Then: CREATE TABLE enriched AS FROM iprecord_join('logs', 'client_ip');
-- (every row of the table logs, with record: the record's JSON, or NULL where the text is no address or has no record;
-- files := '<name>' reads other files than the ones this was written with).
CREATE OR REPLACE MACRO iprecord_ipv4_key(ip) AS CASE WHEN regexp_full_match(ip, '${QUAD}')
  THEN list_reduce(list_transform(string_split(ip, '.'), o -> o::UBIGINT), (a, b) -> a * 256 + b) END;
CREATE OR REPLACE MACRO iprecord_ipv6_plain(ip) AS CASE WHEN NOT contains(ip, '.') THEN ip
  WHEN iprecord_ipv4_key(regexp_extract(ip, '[^:]*$')) IS NOT NULL THEN regexp_extract(ip, '^.*:')
    || printf('%x:%x', iprecord_ipv4_key(regexp_extract(ip, '[^:]*$')) // 65536, iprecord_ipv4_key(regexp_extract(ip, '[^:]*$')) % 65536) END;
CREATE OR REPLACE MACRO iprecord_ipv6_groups(ip) AS list_filter(string_split(ip, ':'), g -> g <> '');
CREATE OR REPLACE MACRO iprecord_ipv6_hex(ip) AS CASE WHEN regexp_full_match(ip, '(?i)(${GROUP}:){7}${GROUP}')
  OR (regexp_full_match(ip, '(?i)((${GROUP}:)*${GROUP})?::((${GROUP}:)*${GROUP})?') AND len(iprecord_ipv6_groups(ip)) < 8)
  THEN lower(array_to_string(list_transform(list_concat(iprecord_ipv6_groups(split_part(ip, '::', 1)),
    list_transform(range(8 - len(iprecord_ipv6_groups(ip))), x -> '0'), iprecord_ipv6_groups(split_part(ip, '::', 2))), g -> lpad(g, 4, '0')), '')) END;
CREATE OR REPLACE MACRO iprecord_ip4_of_hex(h) AS CASE WHEN h[1:24] IN ('00000000000000000000ffff', '0064ff9b0000000000000000')
  OR (h[1:24] = '000000000000000000000000' AND h[25:32] NOT IN ('00000000', '00000001')) THEN ('0x' || h[25:32])::UBIGINT END;
-- The IPv4 key of address text (UBIGINT), or NULL.
CREATE OR REPLACE MACRO iprecord_ip4(ip) AS coalesce(iprecord_ipv4_key(ip), iprecord_ip4_of_hex(iprecord_ipv6_hex(iprecord_ipv6_plain(ip))));
-- The IPv6 key of address text (BLOB of 16 bytes) where it is IPv6 that carries no IPv4, or NULL.
CREATE OR REPLACE MACRO iprecord_ip6(ip) AS CASE WHEN iprecord_ip4(ip) IS NULL THEN unhex(iprecord_ipv6_hex(iprecord_ipv6_plain(ip))) END;
CREATE OR REPLACE MACRO iprecord_join(logs, address, files := ${files}) AS TABLE
WITH a AS (SELECT *, COLUMNS(c -> c = address)::VARCHAR AS iprecord_address FROM query_table(logs)),
  k AS (SELECT *, iprecord_ip4(iprecord_address) AS iprecord_key4 FROM a),
  k4 AS (SELECT * EXCLUDE (iprecord_key4), iprecord_key4 AS iprecord_key FROM k WHERE iprecord_key4 IS NOT NULL),
  k6 AS (SELECT * EXCLUDE (iprecord_key4), unhex(iprecord_ipv6_hex(iprecord_ipv6_plain(iprecord_address))) AS iprecord_key FROM k WHERE iprecord_key4 IS NULL),
  hit4 AS (SELECT l.*, if(l.iprecord_key <= r."end", r.start, NULL) AS iprecord_start, r.network_bucket AS iprecord_bucket FROM k4 l
    ASOF LEFT JOIN (SELECT start, "end", network_bucket FROM read_parquet(files || '.ipv4.parquet')) r ON l.iprecord_key >= r.start),
  hit6 AS (SELECT l.*, if(l.iprecord_key <= r."end", r.start, NULL) AS iprecord_start, r.network_bucket AS iprecord_bucket FROM k6 l
    ASOF LEFT JOIN (SELECT start, "end", network_bucket FROM read_parquet(files || '.ipv6.parquet')) r ON l.iprecord_key >= r.start),
  rec4 AS (SELECT start, network_bucket, record FROM read_parquet(files || '.ipv4.parquet') WHERE start IN (SELECT iprecord_start FROM hit4)),
  rec6 AS (SELECT start, network_bucket, record FROM read_parquet(files || '.ipv6.parquet') WHERE start IN (SELECT iprecord_start FROM hit6))
SELECT h.* EXCLUDE (iprecord_address, iprecord_key, iprecord_start, iprecord_bucket), r.record FROM hit4 h
  LEFT JOIN rec4 r ON r.start = h.iprecord_start AND r.network_bucket = h.iprecord_bucket
UNION ALL BY NAME
SELECT h.* EXCLUDE (iprecord_address, iprecord_key, iprecord_start, iprecord_bucket), r.record FROM hit6 h
  LEFT JOIN rec6 r ON r.start = h.iprecord_start AND r.network_bucket = h.iprecord_bucket;
`;
}
