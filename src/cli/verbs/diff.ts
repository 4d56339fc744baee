/** `iprecord diff`: what changed between two builds (`evidence/diff.ts`). */

import { openSync } from '../../engine/engine.js';
import {
  briefly,
  changesLine,
  diffEngines,
  diffSample,
  DIFF_MEMBERS,
  writeChanges,
  type DiffResult,
  type SampleChanges,
} from '../../evidence/diff.js';
import { regularLines } from '../../files/read.js';
import { ADDRESS_COLUMNS, logAddress } from '../row-address.js';
import { previousBuild, resolveDataset } from '../../dataset/store.js';
import { commandOptions, dataDir, options } from '../args.js';
import { diffSide } from '../../engine/inside.js';

export const USAGE = `Usage: iprecord diff <old> <new> [--sample file] [--json]
       iprecord diff <old.mmdb> <new.mmdb> [--asn file] [--sample file] [--json]
       iprecord diff --previous [--data dir] [--sample file] [--json]

What changed between two builds (each a dataset directory, or a build in
its builds/ folder), two location databases (MMDB files in any schema
open() takes as geo, each compiled with the same network data), or, with
--previous, between the build before current and current: per member
(country_code, region, city, asn.asn, asn.type, time_zone.name, each
threat flag) the IPv4 addresses and IPv6 /48s whose answer changed, the
20 networks whose answers changed most, and the threat lists added,
removed or changed.

Options:
  --previous   the build before current, against current
  --asn file   with two location databases: the network data both are
               compiled with (default: the installed ASN data)
  --data dir   with --previous: the dataset directory; default $IPRECORD_DATA, else the user's
  --sample f   also look up each address of f (a plain list, a web server's
               log: each line's first field; a CSV whose header names an
               address column: ${ADDRESS_COLUMNS.join(', ')}): how many change
               their answer, per member, with examples
  --json       the same as JSON
  -h, --help   this help

Exit codes: 0 compared, 2 usage or data error.
`;

export function run(argv: string[]): number {
  const json = argv.includes('--json');
  const previous = argv.includes('--previous');
  const rest = argv.filter((a) => a !== '--json' && a !== '--previous');
  const paths = rest.filter(
    (a, i) => !a.startsWith('-') && rest[i - 1] !== '--data' && rest[i - 1] !== '--sample' && rest[i - 1] !== '--asn',
  );
  const parsed = commandOptions(
    'diff',
    USAGE,
    options(
      rest.filter((a) => !paths.includes(a)),
      ['data', 'sample', 'asn'],
    ),
  );
  if (typeof parsed === 'number') return parsed;
  const { o, usage } = parsed;
  let builds: { before: string; after: string };
  const databases = paths.filter(isDatabase).length;
  if (o.asn !== undefined && (databases !== 2 || previous)) return usage('--asn is for two location databases (MMDB files)');
  if (previous) {
    if (paths.length > 0) return usage('--previous compares the builds of one dataset directory (--data), not the directories given');
    const dir = dataDir(o.data);
    if (dir === undefined) return usage('--previous needs a dataset directory (--data dir, or iprecord update first)');
    const current = resolveDataset(dir);
    const before = current === null ? null : previousBuild(dir, current);
    if (current === null || before === null) return usage(`${dir} holds no build before its current one`);
    builds = { before, after: current };
  } else {
    if (o.data !== undefined) return usage('--data is for --previous; name the two builds instead');
    if (paths.length !== 2) return usage('name two builds (old, new), or --previous');
    if (databases === 1) return usage('name two builds or two location databases, not one of each');
    builds =
      databases === 2
        ? { before: paths[0], after: paths[1] }
        : { before: resolveDataset(paths[0]) ?? paths[0], after: resolveDataset(paths[1]) ?? paths[1] };
  }
  // Streamed while it is looked up: memory stays within a few MiB whatever the file's size or its lines' length.
  let sampled: Iterable<string> | null = null;
  if (o.sample !== undefined) {
    try {
      sampled = sampleAddresses(regularLines(o.sample));
    } catch (e) {
      return usage(`--sample: ${(e as Error).message}`);
    }
  }
  // Two location databases: each compiled (once, as open() compiles them) with the same network data.
  const side = (path: string) =>
    databases === 2 ? openSync({ geo: path, ...(o.asn === undefined ? {} : { asn: o.asn }) }) : openSync({ data: path });
  const before = side(builds.before);
  let after: ReturnType<typeof openSync>;
  try {
    after = side(builds.after);
  } catch (e) {
    before.close();
    throw e;
  }
  try {
    const result = diffEngines(diffSide(before), diffSide(after), builds);
    const sample = sampled === null ? null : diffSample(diffSide(before), diffSide(after), sampled);
    process.stdout.write(
      json
        ? JSON.stringify({ before: builds.before, after: builds.after, ...result, ...(sample === null ? {} : { sample }) }, null, 2) + '\n'
        : table(builds, result) + (sample === null ? '' : sampleTable(o.sample!, sample)),
    );
  } finally {
    before.close();
    after.close();
  }
  return 0;
}

/** Whether a path names a location database (an MMDB file) rather than a build. */
const isDatabase = (path: string) => /\.mmdb$/i.test(path);

const n = (x: number) => x.toLocaleString('en');
const share = (x: number, of: number) => {
  const p = of === 0 ? 0 : (100 * x) / of;
  return of === 0 ? '' : ` (${p > 0 && p < 0.01 ? p.toPrecision(2) : p.toFixed(2)} %)`;
};

function table(builds: { before: string; after: string }, r: DiffResult): string {
  const lines = [
    `${builds.before} -> ${builds.after}`,
    '',
    `${'member'.padEnd(26)}${'IPv4 addresses'.padStart(28)}${'IPv6 /48s'.padStart(24)}`,
  ];
  for (const m of DIFF_MEMBERS) {
    const s = r.members[m];
    lines.push(
      `${m.padEnd(26)}${(n(s.ipv4) + share(s.ipv4, r.answered.ipv4)).padStart(28)}${(n(s.ipv6_48s) + share(s.ipv6_48s, r.answered.ipv6_48s)).padStart(24)}`,
    );
  }
  lines.push(
    `${'any of them'.padEnd(26)}${(n(r.changed.ipv4) + share(r.changed.ipv4, r.answered.ipv4)).padStart(28)}${(n(r.changed.ipv6_48s) + share(r.changed.ipv6_48s, r.answered.ipv6_48s)).padStart(24)}`,
  );
  if (r.networks.length > 0) {
    lines.push('', 'networks whose answers changed most:');
    for (const x of r.networks)
      lines.push(
        `  ${(x.asn ?? '(no AS)').padEnd(10)} ${(x.name ?? '').slice(0, 40).padEnd(40)} ${n(x.ipv4).padStart(14)} IPv4 ${n(x.ipv6_48s).padStart(10)} /48s`,
      );
  }
  const { added, removed, changed } = r.lists;
  lines.push(
    '',
    `lists: ${added.length} added${added.length ? ` (${added.join(', ')})` : ''}, ${removed.length} removed${removed.length ? ` (${removed.join(', ')})` : ''}, ${changed.length} changed`,
  );
  for (const c of changed) lines.push(`  ${c.name}: ${c.before} -> ${c.after}`);
  return lines.join('\n') + '\n';
}

/**
 * After `iprecord build` or `update`: what changed against the build
 * before, written into the new build (`changes.json`, which `info()`
 * answers) and said in one line. A directory's first build has none; a
 * failure to compare is said, and the build stands.
 */
export function recordChanges(dir: string, buildDir: string): void {
  const before = previousBuild(dir, buildDir);
  if (before === null) return;
  try {
    const a = openSync({ data: before });
    const b = openSync({ data: buildDir });
    try {
      const changes = briefly(diffEngines(diffSide(a), diffSide(b), { before, after: buildDir }), { before, after: buildDir });
      writeChanges(changes);
      process.stderr.write(changesLine(changes) + '\n');
    } finally {
      a.close();
      b.close();
    }
  } catch (e) {
    process.stderr.write(`iprecord: the build was not compared with the one before: ${(e as Error).message}\n`);
  }
}

/** The addresses of a sample file's lines: a CSV's address column when its header names one, else each line's first field (a list, a log). */
export function* sampleAddresses(lines: Iterable<string>): Generator<string> {
  // Undecided until the first line that is neither blank nor a comment: -1, no address column.
  let column: number | null = null;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (column === null) {
      const header = line.split(',').map((h) => h.trim().replace(/^"|"$/g, '').toLowerCase());
      column = line.includes(',') ? header.findIndex((h) => ADDRESS_COLUMNS.includes(h)) : -1;
      if (column >= 0) continue;
    }
    if (column >= 0) yield (line.split(',')[column] ?? '').trim().replace(/^"|"$/g, '');
    else {
      const ip = logAddress(line, null);
      if (ip !== null) yield ip;
    }
  }
}

function sampleTable(file: string, s: SampleChanges): string {
  const lines = [
    '',
    `${file}: ${n(s.addresses)} addresses, ${n(s.answered)} with a record on both sides, ${n(s.changed)} answered otherwise${share(s.changed, s.answered)}`,
  ];
  for (const m of DIFF_MEMBERS) {
    const c = s.members[m];
    if (c.changed === 0) continue;
    const examples = c.examples.map((e) => `${e.ip}: ${JSON.stringify(e.before)} -> ${JSON.stringify(e.after)}`).join('; ');
    lines.push(`  ${m.padEnd(24)} ${n(c.changed).padStart(10)}  e.g. ${examples}`);
  }
  return lines.join('\n') + '\n';
}
