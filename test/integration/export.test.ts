/**
 * `exportDataset()`: every exported row says what `lookup()` says at its
 * first, last and a random address (less `ip`, `count` and the clock of
 * `time_zone`), the rows cover exactly the addresses that have a record,
 * and a manifest is written beside.
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { Reader } from 'mmdb-lib';
import { describe, expect, it } from 'vitest';
import { exportDataset } from '../../src/export/index.js';
import { ExportError, InvalidIpError, isIprecordError, type IprecordError } from '../../src/contract/errors.js';
import { EXPORT_COLUMNS, flatten, staticRecord, withoutNulls, type StaticRecord } from '../../src/export/record.js';
import { parseIp } from '../../src/ip/address.js';
import { carriesIpv4 } from '../../src/ip/embedded.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { run as runExport } from '../../src/cli/verbs/export.js';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { buildAndSwap } from '../../src/compile/feeds/update.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { SMALL_SOURCES, smallEngineFor } from '../helpers/maxmind.js';
import { docRecipe } from '../helpers/recipes.js';

/** A plain CSV export's lines, the header first, split into cells. */
const csvRows = (file: string): string[][] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => splitCsvLine(l)!);

describe('exportDataset: csv', () => {
  const t = smallEngineFor('iprecord-export-');
  const dir = t.dir;

  /** What lookup() says at an address, as an export holds it; null where it answers an error. */
  const want = (ip: string): StaticRecord | null => {
    try {
      return staticRecord(t.engine.lookup(ip));
    } catch (e) {
      expect((e as { code: string }).code).toMatch(/^(PRIVATE_IP|RESERVED_IP)$/);
      return null;
    }
  };

  it('rows that say what lookup() says, over exactly the addresses that have a record', async () => {
    const out = join(dir, 'export.csv.gz');
    const told: [string, number][] = [];
    const result = await exportDataset(t.engine, { format: 'csv', out, progress: (step, done) => told.push([step, done]) });
    // Progress: from the start to the end, never back, a few hundred times at most.
    expect(told[0][1]).toBeLessThan(0.1);
    expect(told.at(-1)).toEqual(['reading the ranges', 1]);
    expect(told.every(([, d], i) => i === 0 || d >= told[i - 1][1])).toBe(true);
    expect(told.length).toBeLessThanOrEqual(502);
    const text = gunzipSync(readFileSync(out));
    // The size on disk, and the text's before compression.
    expect(result.bytes).toBe(statSync(out).size);
    expect(result.uncompressed).toBe(text.length);
    const lines = text.toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    const header = splitCsvLine(lines[0])!;
    expect(header).toEqual(['network', 'start_ip', 'end_ip', ...EXPORT_COLUMNS, 'record']);
    const rows = lines.slice(1).map((l) => splitCsvLine(l)!);
    expect(rows.length).toBe(result.rows);
    expect(result.ranges.v4).toBeGreaterThan(10);
    expect(result.ranges.v6).toBeGreaterThan(10);
    const next = xorshift32(seed());
    const blocks = { 4: [] as [bigint, bigint][], 6: [] as [bigint, bigint][] };
    for (const row of rows) {
      const [network, startIp, endIp] = row;
      const first = parseIp(startIp)!;
      const last = parseIp(endIp)!;
      const record = JSON.parse(row[row.length - 1]) as StaticRecord;
      // The columns are the record's, flattened.
      const flat = flatten(record);
      // Every value has its column (a null object is its members' nulls).
      for (const k of flat.keys()) expect(EXPORT_COLUMNS.includes(k) || flat.get(k) === null, k).toBe(true);
      EXPORT_COLUMNS.forEach((c, i) =>
        expect(row[3 + i], `${network} ${c}`).toBe(flat.get(c) === null || flat.get(c) === undefined ? '' : String(flat.get(c))),
      );
      const lo = toBigInt(first);
      const hi = toBigInt(last);
      expect(network).toBe(`${startIp}/${(first.version === 4 ? 32 : 128) - (hi - lo + 1n).toString(2).length + 1}`);
      const random = lo + ((BigInt(next()) * (hi - lo + 1n)) >> 32n);
      for (const n of [lo, random, hi])
        expect(want(formatIp(first.version, fromBigInt(first.version, n))), `${network} at ${n}`).toEqual(record);
      blocks[first.version].push([lo, hi]);
    }
    // Between the rows, in address order, only addresses that answer an error (or, in IPv6, those answered as IPv4: ::/96, ::ffff:0:0/96, 64:ff9b::/96).
    for (const version of [4, 6] as const) {
      const list = blocks[version].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      const end = version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
      const gaps: [bigint, bigint][] = [];
      let at = 0n;
      for (const [lo, hi] of list) {
        expect(lo >= at, `rows overlap at ${lo}`).toBe(true);
        if (lo > at) gaps.push([at, lo - 1n]);
        at = hi + 1n;
      }
      if (at <= end) gaps.push([at, end]);
      const v4Mirror = (n: bigint) => version === 6 && (n >> 32n === 0xffffn || carriesIpv4(fromBigInt(6, n)));
      for (const [lo, hi] of gaps) {
        for (const n of [lo, hi])
          if (!v4Mirror(n))
            expect(want(formatIp(version, fromBigInt(version, n))), `gap ${formatIp(version, fromBigInt(version, n))}`).toBeNull();
      }
      expect(gaps.length).toBeGreaterThan(3);
    }
    const manifest = JSON.parse(readFileSync(result.manifest as string, 'utf8')) as {
      format: string;
      rows: number;
      sources: { role: string }[];
      licences: string[];
    };
    expect([manifest.format, manifest.rows]).toEqual(['csv', result.rows]);
    expect(manifest.sources.map((s) => s.role)).toEqual(['geo', 'asn']);
    expect(manifest.licences.join(' ')).toMatch(/IP Geolocation by DB-IP/);
  });

  it('iprecord export writes the file of a dataset directory; usage errors exit 2', async () => {
    const data = join(dir, 'data');
    await buildAndSwap(parseThreatConfig({ feeds: [], sources: SMALL_SOURCES }, dir), data, { dataset: true });
    const out = join(dir, 'cli.csv');
    expect(await runExport(['--format', 'csv', '--out', out, '--data', data])).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines[0].startsWith('network,start_ip,end_ip,is_eu,')).toBe(true);
    expect(lines.length).toBeGreaterThan(50);
    expect(await runExport(['--out', out])).toBe(2);
    expect(await runExport(['--format', 'xml', '--out', out])).toBe(2);
    expect(await runExport(['--format', 'csv'])).toBe(2);
  });

  it('refuses bad options and unwritable targets with typed errors, before writing anything', async () => {
    const refused = async (options: Parameters<typeof exportDataset>[1]) => {
      const e = await exportDataset(t.engine, options).then(
        () => null,
        (x: unknown) => x,
      );
      expect(isIprecordError(e), JSON.stringify(options)).toBe(true);
      return e as IprecordError;
    };
    const out = join(dir, 'typed.csv');
    for (const options of [
      { format: 'xml', out },
      { format: 'mmdb', out, fields: ['asn.asn'] },
      { format: 'parquet', out: '-' },
      { format: 'csv', out, fields: [] },
      { format: 'csv', out, fields: ['ip'] },
      { format: 'csv', out, fields: ['nope'] },
    ] as Parameters<typeof exportDataset>[1][]) {
      expect((await refused(options)).code).toBe('INVALID_OPTIONS');
    }
    for (const target of [join(dir, 'no-such-folder', 'x.csv'), dir]) {
      const e = await refused({ format: 'csv', out: target });
      expect(e).toBeInstanceOf(ExportError);
      expect([e.code, e.status]).toEqual(['EXPORT_FAILED', 500]);
      expect(e.message).toContain(`cannot write ${target}`);
    }
    expect(existsSync(out)).toBe(false);
  });

  it('csv --fields: the chosen columns, each as the full export has it; unknown and dynamic fields are usage errors', async () => {
    const full = join(dir, 'full.csv');
    await exportDataset(t.engine, { format: 'csv', out: full });
    const fullRows = csvRows(full);
    const fields = ['asn.asn', 'country_code', 'threat', 'languages', 'time_zone.name', 'carrier.name', 'record'];
    const out = join(dir, 'fields.csv');
    const data = join(dir, 'data-fields');
    await buildAndSwap(parseThreatConfig({ feeds: [], sources: SMALL_SOURCES }, dir), data, { dataset: true });
    expect(await runExport(['--format', 'csv', '--out', out, '--data', data, '--fields', fields.join(', ')])).toBe(0);
    const rows = csvRows(out);
    expect(rows[0]).toEqual(['network', 'start_ip', 'end_ip', ...fields]);
    expect(rows.length).toBe(fullRows.length);
    const at = (name: string) => fullRows[0].indexOf(name);
    for (let i = 1; i < rows.length; i++) {
      const want = fullRows[i];
      const record = JSON.parse(want[at('record')]) as Record<string, unknown>;
      const json = (v: unknown) => (v === null ? '' : JSON.stringify(v));
      expect(rows[i], rows[i][0]).toEqual([
        ...want.slice(0, 3),
        want[at('asn.asn')],
        want[at('country_code')],
        json(record.threat),
        want[at('languages')],
        want[at('time_zone.name')],
        want[at('carrier.name')],
        want[at('record')],
      ]);
    }
    const manifest = JSON.parse(readFileSync(`${out}.manifest.json`, 'utf8')) as { columns: string[] };
    expect(manifest.columns).toEqual(rows[0]);
    for (const bad of ['ip', 'time_zone.current_time', 'asn.nope', 'nope'])
      expect(await runExport(['--format', 'csv', '--out', out, '--data', data, '--fields', bad]), bad).toBe(2);
    expect(await runExport(['--format', 'mmdb', '--out', join(dir, 'x.mmdb'), '--data', data, '--fields', 'asn'])).toBe(2);
    await expect(exportDataset(t.engine, { format: 'csv', out, fields: ['count'] })).rejects.toThrow(/depends on the address/);
    await expect(exportDataset(t.engine, { format: 'parquet', out, fields: ['asn'] })).rejects.toThrow(/holds every field/);
  });

  it('mmdb: mmdb-lib, libmaxminddb and Python maxminddb read the record of every range (null members left out)', async () => {
    const csv = join(dir, 'for-mmdb.csv');
    await exportDataset(t.engine, { format: 'csv', out: csv });
    const rows = csvRows(csv).slice(1);
    const out = join(dir, 'export.mmdb');
    const result = await exportDataset(t.engine, { format: 'mmdb', out });
    // Blocks next to each other with the same record are one network in the tree.
    expect(result.rows).toBeGreaterThan(0);
    expect(result.rows).toBeLessThanOrEqual(rows.length);
    expect(existsSync(`${out}.${process.pid}.tmp.data`)).toBe(false);
    const reader = new Reader(readFileSync(out));
    expect(reader.metadata.databaseType).toBe('iprecord-Record');
    const probes: { ip: string; want: unknown }[] = [];
    const next = xorshift32(seed());
    for (const row of rows) {
      const first = parseIp(row[1])!;
      const lo = toBigInt(first);
      const hi = toBigInt(parseIp(row[2])!);
      const want = withoutNulls(JSON.parse(row[row.length - 1]));
      const random = lo + ((BigInt(next()) * (hi - lo + 1n)) >> 32n);
      for (const n of [lo, random, hi]) {
        const ip = formatIp(first.version, fromBigInt(first.version, n));
        expect(reader.get(ip), ip).toEqual(want);
        probes.push({ ip, want });
      }
      // IPv4-mapped, IPv4-compatible and NAT64 addresses find the IPv4 record, as iprecord answers them.
      if (first.version === 4)
        for (const form of ['::ffff:', '::', '64:ff9b::']) expect(reader.get(`${form}${row[1]}`), `${form}${row[1]}`).toEqual(want);
    }
    expect(reader.get('10.0.0.1')).toBeNull();
    expect(reader.get('fe80::1')).toBeNull();

    const python = '/usr/bin/python3';
    const hasPython =
      existsSync(python) &&
      execFileSync(python, ['-c', 'import importlib.util; print(importlib.util.find_spec("maxminddb") is not None)']).toString().trim() ===
        'True';
    if (!hasPython) console.log('mmdb export: Python maxminddb check skipped (apt install python3-maxminddb)');
    else {
      const script =
        'import json, sys, maxminddb\nr = maxminddb.open_database(sys.argv[1])\nprint(json.dumps([r.get(ip) for ip in json.load(sys.stdin)]))';
      const got = JSON.parse(
        execFileSync(python, ['-c', script, out], { input: JSON.stringify(probes.map((p) => p.ip)), maxBuffer: 1 << 28 }).toString(),
      ) as unknown[];
      probes.forEach((p, i) => expect(got[i], `python ${p.ip}`).toEqual(p.want));
    }
    const mmdblookup = '/usr/bin/mmdblookup';
    if (!existsSync(mmdblookup)) console.log('mmdb export: libmaxminddb check skipped (apt install mmdb-bin)');
    else {
      // The Fluent Bit recipe (docs/exports.md): its geoip2 filter asks libmaxminddb (MMDB_aget_value, as mmdblookup does) for each
      // Record's dotted path and gives scalars; a missing member is null.
      const paths = [...docRecipe('fluent-bit').matchAll(/^\s*Record\s+\S+\s+\S+\s+%\{([^}]+)\}\s*$/gm)].map((m) => m[1]);
      expect(paths.length).toBeGreaterThan(5);
      const scalar = (text: string): unknown => {
        if (/No data was found at the lookup path/.test(text)) return null;
        const m = /^([\s\S]*) <(\w+)>$/.exec(text);
        if (m === null) throw new Error(`mmdblookup said ${text}`);
        if (m[2] === 'utf8_string') return m[1].slice(1, -1);
        if (m[2] === 'boolean') return m[1] === 'true';
        if (m[2] === 'double') return Number(m[1]);
        if (/^u?int(16|32|64)$/.test(m[2])) return Number(m[1]);
        throw new Error(`Fluent Bit gives null for a ${m[2]}: ${text}`);
      };
      /**
       * mmdblookup's answers, a process each, started by one shell (a fork of this process for each costs more than the
       * lookup); a path the record does not have is an error, which the filter answers with null.
       */
      const askAll = (queries: readonly (readonly [ip: string, path: string])[]): string[] => {
        const script = queries
          .map(([ip, path]) => `${mmdblookup} --file '${out}' --ip '${ip}' ${path.split('.').join(' ')} 2>&1; printf '\\n@@%s@@\\n' $?`)
          .join('\n');
        const said = execFileSync('sh', ['-c', script], { maxBuffer: 1 << 28 })
          .toString()
          .split(/\n@@(\d+)@@\n/);
        expect(said.length).toBe(queries.length * 2 + 1);
        return queries.map((q, i) => {
          const text = said[i * 2].trim();
          if (said[i * 2 + 1] === '0') return text;
          if (/lookup path does not match the data/.test(text)) return 'No data was found at the lookup path';
          throw new Error(`mmdblookup ${q.join(' ')}: ${text}`);
        });
      };
      const ask = (ip: string, path: string): string => askAll([[ip, path]])[0];
      const at = (v: unknown, path: string): unknown =>
        path
          .split('.')
          .reduce<unknown>((o, k) => (o === null || typeof o !== 'object' ? undefined : (o as Record<string, unknown>)[k]), v) ?? null;
      // Every path on a quarter of a seventh of the probes.
      const queries = probes.filter((_, i) => i % 28 === 0).flatMap((p) => paths.map((path) => [p.ip, path, p.want] as const));
      const answers = askAll(queries.map(([ip, path]) => [ip, path]));
      queries.forEach(([ip, path, want], i) => {
        const value = at(want, path);
        // mmdblookup prints a double with six decimals.
        expect(scalar(answers[i]), `${ip} ${path}`).toEqual(
          typeof value === 'number' && !Number.isInteger(value) ? Number(value.toFixed(6)) : value,
        );
      });
      const asked = queries.length;
      console.log(`mmdb export: mmdblookup answered ${asked} Fluent Bit recipe paths as lookup() does`);
      // What docs/exports.md says of it: libmaxminddb reads an address as getaddrinfo() does, so octal parts, a short form and
      // hex find a record where lookup() refuses the text as no address.
      const p = probes.find((x) => parseIp(x.ip)?.version === 4 && at(x.want, 'country_code') !== null)!;
      const [a, b, c, d] = p.ip.split('.').map(Number);
      const hex = (a * 2 ** 24 + b * 2 ** 16 + c * 256 + d).toString(16);
      for (const lenient of [[a, b, c, d].map((o) => `0${o.toString(8)}`).join('.'), `${a}.${b}.${c * 256 + d}`, `0x${hex}`]) {
        expect(() => t.engine.lookup(lenient), lenient).toThrow(InvalidIpError);
        expect(scalar(ask(lenient, 'country_code')), lenient).toBe(at(p.want, 'country_code'));
      }
    }
  }, 120_000);
});
