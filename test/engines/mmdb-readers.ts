/**
 * The MMDB export read by MaxMind's Go reader and the Rust `maxminddb`
 * crate (the reader of Vector's `mmdb` enrichment table), each as Debian
 * packages it, built offline here: `node --import tsx
 * test/engines/mmdb-readers.ts`; CI runs it. A reader whose toolchain or
 * package is missing is skipped with the command that installs it (apt
 * install golang-go golang-github-oschwald-maxminddb-golang-dev; cargo and
 * librust-maxminddb-dev librust-serde-json-dev).
 *
 * Exports a dataset of the test fixtures, then asks each reader for the
 * first, last and a random address of every range, the IPv4-mapped form of
 * each IPv4 one, addresses with no record, and `fixtures/logs/address-forms.txt`
 * (text a reader's address parser refuses is no record); every decoded record must
 * deep-equal `lookup()`'s less `ip`, `count`, the clock of `time_zone` and
 * null members, and no record where it answers an error. Prints what it
 * checked; exits 1 on a difference.
 */

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { exportDataset } from '../../src/export/index.js';
import { staticRecord, withoutNulls } from '../../src/export/record.js';
import { open } from '../../src/index.js';
import { SMALL } from '../helpers/maxmind.js';
import { ADDRESS_FORMS } from '../helpers/recipes.js';
import { rangeAddresses } from '../helpers/range-addresses.js';

const HERE = import.meta.dirname;
const CARGO_REGISTRY = '/usr/share/cargo/registry';
const GO_PATH = '/usr/share/gocode';
/** The first of the paths that exists. */
const which = (...paths: string[]) => paths.find((p) => existsSync(p));
/** The name of the package under `root` whose name starts with `prefix`, or null. */
const packageDir = (root: string, prefix: string) =>
  existsSync(root) ? (readdirSync(root).find((n) => n.startsWith(prefix)) ?? null) : null;

const dir = mkdtempSync(join(tmpdir(), 'iprecord-mmdb-readers-'));
let failed = false;
try {
  const engine = await open({ geo: [...SMALL.geo], asn: [...SMALL.asn] });
  const mmdb = join(dir, 'records.mmdb');
  await exportDataset(engine, { format: 'mmdb', out: mmdb });

  // The addresses: each range's first, a random and its last, IPv4's mapped form, some with no record, and text as logs hold it.
  const ips: string[] = [
    '10.0.0.1',
    '192.168.1.1',
    '127.0.0.1',
    'fe80::1',
    '::1',
    'fc00::1',
    ...ADDRESS_FORMS,
    ...(await rangeAddresses(engine, dir)),
  ];
  const want = ips.map((ip) => {
    try {
      return withoutNulls(staticRecord(engine.lookup(ip)));
    } catch {
      return null;
    }
  });
  engine.close();

  /** Runs a reader on the addresses and counts the records that differ from lookup()'s. */
  const check = (name: string, binary: string) => {
    const lines = execFileSync(binary, [mmdb], { input: ips.join('\n') + '\n', maxBuffer: 1 << 28 })
      .toString()
      .trimEnd()
      .split('\n');
    const wrong = ips.filter((_ip, i) => !isDeepStrictEqual(JSON.parse(lines[i] ?? 'undefined') as unknown, want[i]));
    const records = want.filter((w) => w !== null).length;
    console.log(
      `mmdb readers: ${name}: ${ips.length} addresses (${records} records, ${ips.length - records} none), ${wrong.length} different`,
    );
    for (const ip of wrong.slice(0, 5))
      console.log(
        `  ${ip}: reader ${lines[ips.indexOf(ip)]?.slice(0, 200)}, lookup() ${JSON.stringify(want[ips.indexOf(ip)]).slice(0, 200)}`,
      );
    if (wrong.length > 0 || lines.length !== ips.length) failed = true;
  };

  const go = which('/usr/bin/go', '/usr/lib/go/bin/go');
  const goReader = packageDir(join(GO_PATH, 'src', 'github.com', 'oschwald'), 'maxminddb-golang');
  if (go === undefined || goReader === null)
    console.log('mmdb readers: Go skipped (apt install golang-go golang-github-oschwald-maxminddb-golang-dev)');
  else {
    const src = join(dir, 'go', 'src', 'iprecord-mmdb-read');
    mkdirSync(src, { recursive: true });
    cpSync(join(HERE, 'readers', 'go', 'main.go'), join(src, 'main.go'));
    const binary = join(dir, 'read-go');
    execFileSync(go, ['build', '-o', binary, '.'], {
      cwd: src,
      env: { ...process.env, GO111MODULE: 'off', GOPATH: `${join(dir, 'go')}:${GO_PATH}`, GOCACHE: join(dir, 'go-cache') },
      stdio: 'inherit',
    });
    check(`Go maxminddb-golang (Debian, ${execFileSync(go, ['version']).toString().trim()})`, binary);
  }

  const cargo = which(join(homedir(), '.cargo', 'bin', 'cargo'), '/usr/bin/cargo');
  const crate = packageDir(CARGO_REGISTRY, 'maxminddb-');
  if (cargo === undefined || crate === null || packageDir(CARGO_REGISTRY, 'serde_json-') === null)
    console.log('mmdb readers: Rust skipped (cargo, and apt install librust-maxminddb-dev librust-serde-json-dev)');
  else {
    const project = join(dir, 'rust');
    cpSync(join(HERE, 'readers', 'rust'), project, { recursive: true });
    mkdirSync(join(project, '.cargo'));
    // Debian's crates, offline.
    writeFileSync(
      join(project, '.cargo', 'config.toml'),
      `[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "${CARGO_REGISTRY}"\n[net]\noffline = true\n`,
    );
    execFileSync(cargo, ['build', '--release', '--quiet'], { cwd: project, stdio: 'inherit' });
    check(`Rust ${crate} (Debian, the crate of Vector's mmdb table)`, join(project, 'target', 'release', 'iprecord-mmdb-read'));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
