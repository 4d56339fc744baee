/**
 * The CSV export in ClickHouse (run when `clickhouse-server` is installed:
 * `node --import tsx test/engines/clickhouse.ts`; CI runs it then). Exports
 * a dataset of the test fixtures, loads each family's rows into an
 * `ip_trie` dictionary (one per family: ClickHouse 18, Debian's, mixes up
 * IPv4 keys with IPv6 ones in one trie), and checks that `dictGetString`
 * gives, for the first, last and a random address of every row and for
 * addresses between rows, the record JSON `lookup()` gives (none where it
 * answers an error), and runs the query of docs/exports.md as written over a log of
 * `fixtures/logs/address-forms.txt`, those addresses and the IPv4 ones in
 * IPv6 forms that carry IPv4. Prints what it checked; exits 1 on a
 * difference.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportDataset } from '../../src/export/index.js';
import { csvText } from '../../src/export/csv.js';
import { staticRecord } from '../../src/export/record.js';
import { open } from '../../src/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { SMALL } from '../helpers/maxmind.js';
import { ADDRESS_FORMS, docRecipe } from '../helpers/recipes.js';

const SERVER = ['/usr/bin/clickhouse-server', '/usr/sbin/clickhouse-server'].find((p) => existsSync(p));
if (SERVER === undefined) {
  console.log('clickhouse: skipped, clickhouse-server is not installed (apt install clickhouse-server)');
  process.exit(0);
}

const freePort = () =>
  new Promise<number>((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });

const dir = mkdtempSync(join(tmpdir(), 'iprecord-clickhouse-'));
const engine = await open({ geo: [...SMALL.geo], asn: [...SMALL.asn] });
const csv = join(dir, 'records.csv');
await exportDataset(engine, { format: 'csv', out: csv });
const [header, ...lines] = readFileSync(csv, 'utf8').trimEnd().split('\n');
const columns = splitCsvLine(header)!;
const files = { 4: join(dir, 'v4.csv'), 6: join(dir, 'v6.csv') };
writeFileSync(files[4], [header, ...lines.filter((l) => !l.split(',')[0].includes(':'))].join('\n') + '\n');
writeFileSync(files[6], [header, ...lines.filter((l) => l.split(',')[0].includes(':'))].join('\n') + '\n');

// Cells as the export writes them that ClickHouse's CSV reader treats specially: a leading apostrophe (the city
// 's-Gravendeel, which it would read as a single-quoted string), quotes, a comma.
const awkward = ["'s-Gravendeel", "O'Fallon", 'say "hi"', 'a,b', "'"];
const awkwardFile = join(dir, 'awkward.csv');
writeFileSync(awkwardFile, ['network,city', ...awkward.map((c, i) => `10.0.${i}.0/24,${csvText(c)}`)].join('\n') + '\n');

mkdirSync(join(dir, 'dicts'));
writeFileSync(
  join(dir, 'dicts', 'awkward.xml'),
  `<?xml version="1.0"?><yandex><dictionary><name>awkward</name><source><file><path>${awkwardFile}</path><format>CSVWithNames</format></file></source>` +
    `<layout><ip_trie/></layout><structure><key><attribute><name>network</name><type>String</type></attribute></key>` +
    `<attribute><name>city</name><type>String</type><null_value></null_value></attribute></structure><lifetime>0</lifetime></dictionary></yandex>\n`,
);
const attribute = (name: string) =>
  `<attribute><name>${name.replace(/\./g, '_')}</name><type>String</type><null_value></null_value></attribute>`;
for (const v of [4, 6] as const) {
  writeFileSync(
    join(dir, 'dicts', `records${v}.xml`),
    `<?xml version="1.0"?><yandex><dictionary><name>records${v}</name>` +
      `<source><file><path>${files[v]}</path><format>CSVWithNames</format></file></source><layout><ip_trie/></layout>` +
      `<structure><key><attribute><name>network</name><type>String</type></attribute></key>${columns.slice(1).map(attribute).join('')}</structure>` +
      `<lifetime>0</lifetime></dictionary></yandex>\n`,
  );
}
const http = await freePort();
const tcp = await freePort();
writeFileSync(
  join(dir, 'config.xml'),
  `<?xml version="1.0"?><yandex><logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/err.log</errorlog></logger>` +
    `<tcp_port>${tcp}</tcp_port><http_port>${http}</http_port><listen_host>127.0.0.1</listen_host><path>${dir}/data/</path><tmp_path>${dir}/tmp/</tmp_path>` +
    `<users_config>/etc/clickhouse-server/users.xml</users_config><default_profile>default</default_profile><default_database>default</default_database>` +
    `<mark_cache_size>5368709</mark_cache_size><dictionaries_config>${dir}/dicts/*.xml</dictionaries_config></yandex>\n`,
);
const server = spawn(SERVER, [`--config-file=${join(dir, 'config.xml')}`], { stdio: 'ignore' });
const query = async (sql: string): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${http}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse: ${text.slice(0, 300)}`);
  return text;
};

let failed = false;
try {
  for (let i = 0; ; i++) {
    try {
      await query('SELECT 1');
      break;
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const version = (await query('SELECT version()')).trim();
  // Probes: each row's first, last and a random address, and the address after it (between rows when there is a gap).
  const probes: { 4: string[]; 6: string[] } = { 4: [], 6: [] };
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
  for (const line of lines) {
    const f = splitCsvLine(line)!;
    const first = parseIp(f[1])!;
    const lo = toBigInt(first);
    const hi = toBigInt(parseIp(f[2])!);
    const end = first.version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    for (const n of [lo, hi, lo + ((BigInt(next()) * (hi - lo + 1n)) >> 32n), hi < end ? hi + 1n : hi])
      probes[first.version].push(formatIp(first.version, fromBigInt(first.version, n)));
  }
  let checked = 0;
  let none = 0;
  const wrong: string[] = [];
  for (const v of [4, 6] as const) {
    const list = [...new Set(probes[v])];
    const fn = v === 4 ? 'IPv4StringToNum' : 'IPv6StringToNum';
    const rows = (
      await query(
        `SELECT ip, dictGetString('records${v}', 'record', tuple(${fn}(ip))) FROM (SELECT arrayJoin([${list.map((ip) => `'${ip}'`).join(',')}]) AS ip) FORMAT JSONCompact`,
      )
    ).trim();
    const got = new Map((JSON.parse(rows) as { data: [string, string][] }).data);
    for (const ip of list) {
      let want = '';
      try {
        want = JSON.stringify(staticRecord(engine.lookup(ip)));
      } catch {
        none++;
      }
      // IPv6 addresses that iprecord answers as IPv4 (::/96, ::ffff:0:0/96) are in the IPv4 dictionary.
      const n = toBigInt(parseIp(ip)!);
      if (v === 6 && (n < 1n << 32n || n >> 32n === 0xffffn)) continue;
      checked++;
      if (got.get(ip) !== want) wrong.push(`${ip}: ClickHouse ${got.get(ip)?.slice(0, 80)}, lookup() ${want.slice(0, 80)}`);
    }
  }
  // The query of docs/exports.md, as written, over a log of the corpus, the probes, and the IPv4 probes in the IPv6 forms that carry IPv4.
  const carried = probes[4]
    .filter((_, i) => i % 7 === 0)
    .flatMap((ip) => {
      const n = toBigInt(parseIp(ip)!);
      const hex = `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
      return [`::ffff:${ip}`, `::${ip}`, `64:ff9b::${ip}`, `::FFFF:${hex}`, `0:0:0:0:0:ffff:${ip}`, `64:ff9b::${hex}`];
    });
  const log = [...new Set([...ADDRESS_FORMS, '', ...probes[4], ...probes[6], ...carried])];
  await query('CREATE TABLE logs (client_ip String) ENGINE = Memory');
  await query(`INSERT INTO logs FORMAT JSONEachRow\n${log.map((ip) => JSON.stringify({ client_ip: ip })).join('\n')}`);
  const recipe = docRecipe('clickhouse').trim().replace(/;$/, '');
  const answered = new Map((JSON.parse(await query(`${recipe} FORMAT JSONCompact`)) as { data: [string, string | null][] }).data);
  const recipeWrong: string[] = [];
  let recipeNone = 0;
  for (const ip of log) {
    let want: string | null = null;
    try {
      want = JSON.stringify(staticRecord(engine.lookup(ip)));
    } catch {
      recipeNone++;
    }
    if (answered.get(ip) !== want)
      recipeWrong.push(`${JSON.stringify(ip)}: recipe ${answered.get(ip)?.slice(0, 80)}, lookup() ${want?.slice(0, 80)}`);
  }
  console.log(
    `clickhouse: the recipe's query over ${log.length} log addresses (${ADDRESS_FORMS.length} of fixtures/logs/address-forms.txt, ${carried.length} IPv4 in IPv6 forms; ${recipeNone} where lookup() answers an error): ${recipeWrong.length} different`,
  );
  if (answered.size !== log.length || recipeWrong.length > 0) {
    console.log(`${answered.size} rows answered for ${log.length}\n${recipeWrong.slice(0, 20).join('\n')}`);
    failed = true;
  }
  const cities = (
    await query(
      `SELECT dictGetString('awkward', 'city', tuple(IPv4StringToNum(concat('10.0.', toString(number), '.1')))) FROM system.numbers LIMIT ${awkward.length} FORMAT JSONCompact`,
    )
  ).trim();
  const read = (JSON.parse(cities) as { data: [string][] }).data.map((r) => r[0]);
  console.log(
    `clickhouse: ${awkward.length} cells as the export quotes them read back ${read.filter((c, i) => c === awkward[i]).length} the same`,
  );
  if (JSON.stringify(read) !== JSON.stringify(awkward)) {
    console.log(`read back ${JSON.stringify(read)}, written ${JSON.stringify(awkward)}`);
    failed = true;
  }
  console.log(
    `clickhouse ${version}: ${lines.length} CSV rows in two ip_trie dictionaries; ${checked} addresses checked (${none} where lookup() answers an error), ${wrong.length} different`,
  );
  if (wrong.length > 0) {
    console.log(wrong.slice(0, 20).join('\n'));
    failed = true;
  }
} finally {
  server.kill('SIGTERM');
  engine.close();
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
