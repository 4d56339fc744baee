/**
 * `iprecord enrich` end to end: the built CLI as a real process on files
 * generated here, every output row checked against the library's answer.
 */

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync as openFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitCsvLine } from '../../src/text/csv.js';
import { openSync, isIprecordError, type Engine } from '../../src/index.js';
import { residentBytes, ROOT, unicastV4, xorshift32 } from '../helpers/env.js';

const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm ci builds it).');

const dir = mkdtempSync(join(tmpdir(), 'iprecord-enrich-'));
let engine: Engine;
beforeAll(() => {
  engine = openSync();
});
afterAll(() => {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI (under Node's options `node`); its output, error output and exit code. */
function run(args: string[], input?: Buffer | string, node: string[] = []): { out: string; err: string; code: number } {
  const r = spawnSync(process.execPath, [...node, CLI, ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: { ...process.env, IPRECORD_DATA: '' },
  });
  return { out: r.stdout, err: r.stderr, code: r.status ?? -1 };
}

/** Addresses: public ones of both families, and bad, private and reserved ones, in a fixed order. */
function addresses(n: number): string[] {
  const next = xorshift32(99);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = next();
    const kind = i % 23;
    if (kind === 5) out.push('not-an-ip');
    else if (kind === 7) out.push(`10.${a & 255}.0.1`);
    else if (kind === 9) out.push(`2001:4860:${(a & 0xffff).toString(16)}::1`);
    else out.push(unicastV4(a));
  }
  return out;
}

/** What the library answers for an address: the record or its error message. */
function expected(ip: string, fields?: readonly string[]): { record: unknown } | { error: string } {
  try {
    return { record: engine.lookup(ip, fields === undefined ? undefined : { fields }) };
  } catch (e) {
    if (!isIprecordError(e)) throw e;
    return { error: e.message };
  }
}

/** Removes the parts of a record that change from one call to the next. */
function timeless(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x) => (k === 'current_time' || k === 'count' ? undefined : x));
}

const at = (v: unknown, path: string) =>
  path.split('.').reduce<unknown>((o, k) => (o === null || typeof o !== 'object' ? undefined : (o as Record<string, unknown>)[k]), v);

describe('iprecord enrich', () => {
  it('CSV in, CSV out: the columns kept, chosen fields by dotted path, errors in their column, quoted and multi-line fields', () => {
    const ips = addresses(3000);
    const rows = ips.map((ip, i) => `${i},"note, ${i}",${ip},${i % 100 === 0 ? '"two\nlines"' : 'x'}`);
    const file = join(dir, 'in.csv');
    writeFileSync(file, ['id,note,client_ip,extra', ...rows].join('\n') + '\n');
    const fields = ['country_code', 'asn.name', 'threat.is_tor', 'threat.scores.trust_score', 'city'];
    const r = run(['enrich', file, '--fields', fields.join(',')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/enriched 3,000 rows \(\d+ bad\)/);
    // Records of the output, joined where a quoted field spans lines.
    const lines = r.out.split('\n');
    const records: string[][] = [];
    for (let i = 0; i < lines.length; i++) {
      let text = lines[i];
      while (splitCsvLine(text) === null) text += '\n' + lines[++i];
      if (text !== '') records.push(splitCsvLine(text) as string[]);
    }
    expect(records[0]).toEqual(['id', 'note', 'client_ip', 'extra', ...fields, 'error']);
    expect(records).toHaveLength(ips.length + 1);
    let bad = 0;
    ips.forEach((ip, i) => {
      const row = records[i + 1];
      expect(row.slice(0, 4)).toEqual([String(i), `note, ${i}`, ip, i % 100 === 0 ? 'two\nlines' : 'x']);
      const want = expected(ip);
      if ('error' in want) {
        bad++;
        expect(row.slice(4)).toEqual(['', '', '', '', '', want.error]);
      } else {
        const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));
        expect(row.slice(4)).toEqual([...fields.map((f) => cell(at(want.record, f))), '']);
      }
    });
    expect(r.err).toContain(`(${bad} bad)`);
  });

  it('NDJSON in (address at a path), NDJSON out: each object with the record under the key', () => {
    const ips = addresses(1500);
    const file = join(dir, 'in.ndjson');
    // Lines in ASCII whose values are not (escapes): the output is UTF-8 of the same values.
    const note = (i: number) => (i % 3 === 0 ? `caf\\u00e9 \\u4e2d\\u6587 ${i}` : `plain ${i}`);
    writeFileSync(file, ips.map((ip, i) => `{"n":${i},"note":"${note(i)}","req":{"client":{"addr":"${ip}"}}}`).join('\n') + '\n');
    const r = run(['enrich', file, '--path', 'req.client.addr', '--key', 'geo']);
    const out = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { n: number; note: string; req: unknown; geo: unknown });
    expect(out).toHaveLength(ips.length);
    out.forEach((row, i) => {
      expect(row.n).toBe(i);
      expect(row.note).toBe(JSON.parse(`"${note(i)}"`));
      const want = expected(ips[i]);
      expect(timeless(row.geo)).toEqual('error' in want ? { error: want.error } : timeless(want.record));
    });
  });

  it('a gzip-compressed list on standard input, chosen fields; malformed NDJSON lines kept with their line number', () => {
    const ips = addresses(500);
    const r = run(['enrich', '-', '--fields', 'ip,country_code,is_eu'], gzipSync(ips.join('\n') + '\n'));
    const out = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ip: string; iprecord: unknown });
    expect(out.map((o) => o.ip)).toEqual(ips);
    out.forEach((o, i) => {
      const want = expected(ips[i], ['ip', 'country_code', 'is_eu']);
      expect(o.iprecord).toEqual('error' in want ? { error: want.error } : want.record);
    });

    const file = join(dir, 'broken.ndjson');
    writeFileSync(file, '{"ip":"8.8.8.8"}\n{"ip": \n[1,2]\n{"ip":"1.1.1.1"}\n');
    const b = run(['enrich', file, '--fields', 'country_code']);
    expect(b.code).toBe(1);
    expect(
      b.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { ip: '8.8.8.8', iprecord: { country_code: 'US' } },
      { line: 2, text: '{"ip": ', iprecord: { error: 'line 2: not a JSON object' } },
      { line: 3, value: [1, 2], iprecord: { error: 'line 3: not a JSON object' } },
      { ip: '1.1.1.1', iprecord: { country_code: 'AU' } },
    ]);
    expect(b.err).toMatch(/enriched 4 rows \(2 bad, 2 malformed\)/);
  });

  it('a malformed CSV line is kept as an error row with its line number', () => {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, 'ip,n\n8.8.8.8,1\n"1.1.1.1"x,2\n9.9.9.9,3\n"unclosed,4\n');
    const r = run(['enrich', file, '--fields', 'country_code']);
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      'ip,n,country_code,error\n8.8.8.8,1,US,\n,,,line 3: malformed CSV\n9.9.9.9,3,US,\n,,,line 5: a quoted field is not closed\n',
    );
  });

  it('a stray quote costs its own line: every other row kept, each malformed line reported with its number', () => {
    // 100 000 rows (1.6 MB) with unbalanced quotes at rows 10 and 50 000: no closing quote within the 1 MiB a row may
    // span, then one whose closing quote is followed by more text (a second stray quote).
    const rows = Array.from(
      { length: 100_000 },
      (_, i) => `8.${i >> 16}.${(i >> 8) & 255}.${i & 255},${i === 10 || i === 50_000 ? '"x' : i === 50_010 ? 'y"z' : 'ok'}`,
    );
    const file = join(dir, 'stray.csv');
    writeFileSync(file, ['ip,c', ...rows].join('\n') + '\n');
    const r = run(['enrich', file, '--fields', 'ip']);
    const out = r.out.trim().split('\n');
    expect(out).toHaveLength(rows.length + 1);
    const errors = out.filter((l) => l.startsWith(',,,'));
    expect(errors).toEqual([',,,line 12: a quoted field is not closed', ',,,line 50002: a quoted field is not closed']);
    expect(r.err).toMatch(/enriched 100,000 rows \(\d+ bad, 2 malformed\)/);
    // Every other row is answered, in its place.
    rows.forEach((row, i) => {
      if (i !== 10 && i !== 50_000) expect(out[i + 1].split(',')[0], row).toBe(row.split(',')[0]);
    });
  });

  it.each([1, 2])('a row that cannot be written (nested 20 000 deep) is one bad row on %i thread(s); the rest go on', (threads) => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const lines = ['{"ip":"8.8.8.8"}', `{"ip":"1.1.1.1","deep":${deep}}`, ...Array.from({ length: 3000 }, () => '{"ip":"9.9.9.9"}')];
    const file = join(dir, `deep-${threads}.ndjson`);
    writeFileSync(file, lines.join('\n') + '\n');
    const r = run(['enrich', file, '--fields', 'ip', '--threads', String(threads)]);
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/ at |Unhandled/);
    const out = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ip?: string; line?: number; iprecord: { ip?: string; error?: string } });
    expect(out).toHaveLength(lines.length);
    expect(out[1]).toMatchObject({ line: 2, iprecord: { error: expect.stringMatching(/^line 2: cannot be written/) } });
    expect(JSON.stringify(out[1]).length).toBeLessThan(1000);
    expect(out.filter((o) => o.iprecord.ip !== undefined)).toHaveLength(lines.length - 1);
  });

  it('a line longer than 1 MiB is one bad row with a short excerpt; the lines after it are read (20 MB line, flat memory)', () => {
    const file = join(dir, 'long.txt');
    writeFileSync(file, `8.8.8.8\n${'x'.repeat(20 << 20)}\n1.1.1.1\n${'9'.repeat((1 << 20) - 1)}\n9.9.9.9`);
    const r = run(['enrich', file, '--fields', 'ip'], undefined, ['--max-old-space-size=256']);
    expect(r.code).toBe(1);
    const out = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ip: string; iprecord: { ip?: string; error?: string } });
    expect(out.map((o) => o.iprecord.ip ?? o.iprecord.error)).toEqual([
      '8.8.8.8',
      'line 2: longer than 1048576 bytes',
      '1.1.1.1',
      `${'9'.repeat(64)}… does not appear to be an IPv4 or IPv6 address`,
      '9.9.9.9',
    ]);
    expect(r.out.length).toBeLessThan(1.1 * (1 << 20));
  });

  it('a gzip file with bytes after its data: every whole row decoded is written, then exit 2 with the reason', () => {
    const ips = addresses(8_000);
    const body = gzipSync(ips.join('\n') + '\n');
    for (const [tail, reason] of [
      [Buffer.from('trailing garbage'), 'bytes that are not gzip data after the compressed data'],
      [Buffer.alloc(0), null],
      [Buffer.alloc(512), null],
      [gzipSync('8.8.4.4\n'), null],
    ] as const) {
      const file = join(dir, 'tail.txt.gz');
      writeFileSync(file, Buffer.concat([body, tail]));
      const r = run(['enrich', file, '--fields', 'ip']);
      const got = r.out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { ip: string }).ip);
      expect(got).toEqual(tail.length > 0 && tail[0] === 0x1f ? [...ips, '8.8.4.4'] : ips);
      if (reason === null) expect(r.code).toBe(1);
      else {
        expect(r.code).toBe(2);
        expect(r.err).toContain(reason);
      }
    }
    // Cut short: the whole rows before the cut, not the partial last line.
    const file = join(dir, 'cut.txt.gz');
    writeFileSync(file, body.subarray(0, body.length >> 1));
    const cut = run(['enrich', file, '--fields', 'ip']);
    expect(cut.code).toBe(2);
    expect(cut.err).toContain('the gzip data is cut short');
    const got = cut.out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { ip: string }).ip);
    expect(got.length).toBeGreaterThan(500);
    expect(got).toEqual(ips.slice(0, got.length));
  });

  it('empty input: nothing out, exit 0; usage errors exit 2 with a message', () => {
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    const r = run(['enrich', empty]);
    expect({ out: r.out, code: r.code }).toEqual({ out: '', code: 0 });
    expect(run(['enrich', '-'], '').out).toBe('');
    const noColumn = run(['enrich', join(dir, 'in.csv'), '--column', 'nope']);
    expect(noColumn.code).toBe(2);
    expect(noColumn.err).toMatch(/no column named "nope"/);
    const badField = run(['enrich', '-', '--fields', 'asn.name'], '8.8.8.8\n');
    expect(badField.code).toBe(2);
    expect(badField.err).toMatch(/not a field name/);
    expect(run(['enrich', '--format', 'xml']).code).toBe(2);
    // An input that cannot be read: what the path is, in one line.
    for (const [path, why] of [
      [join(dir, 'missing.csv'), 'it does not exist'],
      [dir, 'it is a directory'],
    ]) {
      const unread = run(['enrich', path]);
      expect({ code: unread.code, err: unread.err }).toEqual({ code: 2, err: `iprecord enrich: cannot read ${path}: ${why}\n` });
    }
    expect(run(['enrich', '--help']).out).toMatch(/^Usage: iprecord enrich/);
  });

  it('starts at most four worker threads a core, however many are asked for, and says so', () => {
    const file = join(dir, 'few-threads.csv');
    writeFileSync(file, 'ip\n8.8.8.8\n1.1.1.1\n');
    const most = 4 * availableParallelism();
    const r = run(['enrich', file, '--fields', 'country_code', '--threads', '1000']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('ip,country_code,error\n8.8.8.8,US,\n1.1.1.1,AU,\n');
    expect(r.err).toContain(
      `iprecord: --threads 1000 is more than 4 a core of this machine's ${availableParallelism()}: ${most} worker threads\n`,
    );
    expect(r.err).toMatch(new RegExp(`on ${most} worker threads\\)\n$`));
  });

  it('on worker threads: the same output, in input order, as on one thread', () => {
    const ips = addresses(20_000);
    const file = join(dir, 'threads.csv');
    writeFileSync(file, ['n,ip', ...ips.map((ip, i) => `${i},${ip}`)].join('\n') + '\n');
    for (const output of ['csv', 'ndjson']) {
      const args = [
        'enrich',
        file,
        '--output',
        output,
        '--fields',
        output === 'csv' ? 'country_code,asn.asn,threat.is_datacenter' : 'country_code,asn,threat',
      ];
      const one = run([...args, '--threads', '1']);
      // V8's options and the process's are not a worker's to take: the threads start all the same.
      const three = run([...args, '--threads', '3'], undefined, ['--max-old-space-size=2048', '--title=iprecord-test']);
      expect(three.code).toBe(one.code);
      expect(three.out).toBe(one.out);
      expect(one.out.split('\n').length).toBe(ips.length + (output === 'csv' ? 2 : 1));
      expect(one.err).toMatch(/rows\/s, on 1 thread\)\n$/);
      // Once, on the main thread: no threat category has a source here (the workers' engines do not say it again).
      expect(three.err).toMatch(/^iprecord: no loaded source answers for [^\n]*\nenriched 20,000 rows .* on 3 worker threads\)\n$/);
    }
  });

  it('enriches 3 million rows with flat memory (anonymous resident size sampled while it runs)', async () => {
    const ROWS = 3_000_000;
    const file = join(dir, 'rows.txt');
    const next = xorshift32(5);
    const chunk: string[] = [];
    const { openSync: open, writeSync, closeSync } = await import('node:fs');
    const fd = open(file, 'w');
    for (let i = 0; i < ROWS; i++) {
      chunk.push(unicastV4(next()));
      if (chunk.length === 100_000) writeSync(fd, chunk.splice(0).join('\n') + '\n');
    }
    closeSync(fd);
    const child = spawn(process.execPath, [CLI, 'enrich', file, '--output', 'csv', '--fields', 'country_code,asn.asn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let lines = 0;
    child.stdout.on('data', (d: Buffer) => {
      for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lines++;
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const samples: { lines: number; rss: number }[] = [];
    const timer = setInterval(() => {
      const rss = residentBytes(child.pid as number, 'RssAnon');
      if (rss > 0) samples.push({ lines, rss });
    }, 50);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(timer);
    expect(err).toMatch(new RegExp(`enriched ${ROWS.toLocaleString('en')} rows`));
    expect([0, 1]).toContain(code);
    expect(lines).toBe(ROWS + 1);
    // Anonymous memory (the engine's file is mapped, its pages counted apart): the heaps, the chunks in flight. It grows
    // while the threads' heaps warm up (80 to 118 MiB over the first third on a busy machine) and then stays: the
    // second half's peak was 1-6 MiB above the first's in three runs with two busy loops beside. A leak of 50 bytes a
    // row puts 72 MiB more in the second half's peak than in the first's; the bound is half that.
    const LEAK_BYTES_A_ROW = 50;
    const half = ROWS / 2;
    const early = Math.max(...samples.filter((s) => s.lines <= half).map((s) => s.rss));
    const late = Math.max(...samples.filter((s) => s.lines > half).map((s) => s.rss));
    console.log(
      `${ROWS / 1e6}M rows: anonymous resident at most ${(early / 2 ** 20).toFixed(0)} MiB for the first half, ${(late / 2 ** 20).toFixed(0)} MiB after (${samples.length} samples)`,
    );
    expect(samples.filter((s) => s.lines > half).length).toBeGreaterThan(5);
    expect(late - early).toBeLessThan(((ROWS / 2) * LEAK_BYTES_A_ROW) / 2);
  }, 300_000);

  // util-linux's script(1) gives the command a terminal: what a person watching it sees.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)('on a terminal: progress rewritten in place, and the warning and the summary each on a line of their own', () => {
    const file = join(dir, 'terminal.txt');
    writeFileSync(file, Array.from({ length: 200_000 }, (_, i) => `8.${i >> 16}.${(i >> 8) & 255}.${i & 255}`).join('\n') + '\n');
    const shell = `'${process.execPath}' '${CLI}' enrich '${file}' --fields ip --output csv > /dev/null`;
    const r = spawnSync('script', ['-qfec', shell, '/dev/null'], { encoding: 'utf8', env: { ...process.env, IPRECORD_QUIET: '' } });
    expect(r.status, r.stderr).toBe(0);
    // The screen: each line as written, a carriage return going back to its start, ESC [ K clearing the rest of it.
    const screen = r.stdout.split('\n').map((raw) => {
      let line = '';
      let at = 0;
      for (const part of raw.replace(/\r$/, '').split(/(\r|\x1b\[K)/)) {
        if (part === '\r') at = 0;
        else if (part === '\x1b[K') line = line.slice(0, at);
        else {
          line = line.slice(0, at) + part + line.slice(at + part.length);
          at += part.length;
        }
      }
      return line;
    });
    expect(r.stdout).toMatch(/rows\/s/);
    expect(screen.filter((l) => l.startsWith('iprecord: no loaded source answers for '))).toHaveLength(1);
    expect(screen.filter((l) => /rows\/s/.test(l) && /iprecord:/.test(l))).toEqual([]);
    expect(screen.filter((l) => l !== '').at(-1)).toMatch(/^enriched 200,000 rows /);
  });

  it('iprecord info: what is loaded as JSON, and a warning per missing or stale list', () => {
    const r = run(['info']);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.out) as ReturnType<Engine['info']>;
    expect(info.databases.map((d) => d.role)).toEqual(engine.info().databases.map((d) => d.role));
    const missing = info.lists.filter((l) => l.state !== 'loaded').map((l) => l.name);
    expect(missing.length).toBeGreaterThan(0);
    // Then the age of the installed location and network data, when old.
    const lines = [
      ...missing.map((name) => `warning: ${name}: missing (no source of this category is loaded)`),
      ...info.warnings.map((w) => `warning: ${w}`),
    ];
    expect(r.err.trim().split('\n')).toEqual(lines);
    expect(run(['info', '--help']).out).toMatch(/^Usage: iprecord info/);
  });

  it('stops quietly when the reader of its output goes away (| head)', async () => {
    const file = join(dir, 'many.txt');
    writeFileSync(file, addresses(200_000).join('\n'));
    const child = spawn(process.execPath, [CLI, 'enrich', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // Read the first chunk, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err.replace(/^iprecord: no loaded source answers for .*\n/, '')).not.toMatch(/Error|at .*\(/);
    expect(code).toBe(0);
  });
});

describe.skipIf(!existsSync('/dev/full'))('output that cannot be written', () => {
  it('is one line naming standard output and exit code 2, for enrich and a lookup (a full disk: /dev/full)', () => {
    const file = join(dir, 'full.txt');
    writeFileSync(file, addresses(20_000).join('\n') + '\n');
    for (const args of [['enrich', file], ['enrich', '--output', 'ndjson', file], ['8.8.8.8']]) {
      const full = openFileSync('/dev/full', 'w');
      try {
        const r = spawnSync(process.execPath, [CLI, ...args], {
          stdio: ['ignore', full, 'pipe'],
          encoding: 'utf8',
          env: { ...process.env, IPRECORD_DATA: '' },
        });
        expect(r.status, args.join(' ')).toBe(2);
        expect(
          r.stderr
            .trim()
            .split('\n')
            .filter((l) => !l.includes('IPRECORD_MISSING') && !l.includes('no loaded source')),
        ).toEqual([expect.stringMatching(/^iprecord: cannot write to standard output: .*ENOSPC/)]);
      } finally {
        closeSync(full);
      }
    }
  });
});

describe('enrich keeps what it does not read', () => {
  it('copies the other columns of a CSV row byte for byte, bytes that are not UTF-8 among them (Latin-1 text)', () => {
    const file = join(dir, 'latin1.csv');
    // "Zürich" and "café" as Latin-1 (0xFC, 0xE9), a quoted cell with a comma, and a row of fewer cells than the header.
    const rows = [
      Buffer.from('ip,city,note\n'),
      Buffer.from('8.8.8.8,Z\xfcrich,"caf\xe9, ""le"" bar"\n', 'latin1'),
      Buffer.from('1.1.1.1,only\n'),
    ];
    writeFileSync(file, Buffer.concat(rows));
    const r = spawnSync(process.execPath, [CLI, 'enrich', '--fields', 'country_code', file], {
      env: { ...process.env, IPRECORD_DATA: '' },
    });
    expect(r.status, r.stderr.toString()).toBe(0);
    const lines = r.stdout.toString('latin1').split('\n');
    expect(lines[0]).toBe('ip,city,note,country_code,error');
    expect(lines[1]).toBe(`8.8.8.8,Z\xfcrich,"caf\xe9, ""le"" bar",${engine.field('8.8.8.8', 'country_code')},`);
    // Cells added where the header has more: from the cells, as before.
    expect(lines[2]).toBe(`1.1.1.1,only,,${engine.field('1.1.1.1', 'country_code')},`);
  });

  it('says how many rows held bytes that are not UTF-8 where the output can only carry text (NDJSON)', () => {
    const file = join(dir, 'latin1-more.csv');
    writeFileSync(
      file,
      Buffer.concat([Buffer.from('ip,city\n'), Buffer.from('8.8.8.8,Z\xfcrich\n1.1.1.1,Sydney\n9.9.9.9,G\xe4vle\n', 'latin1')]),
    );
    const ndjson = spawnSync(process.execPath, [CLI, 'enrich', '--output', 'ndjson', '--fields', 'country_code', file], {
      encoding: 'utf8',
      env: { ...process.env, IPRECORD_DATA: '' },
    });
    expect(ndjson.status).toBe(0);
    expect(JSON.parse(ndjson.stdout.split('\n')[0]).city).toBe('Z\ufffdrich');
    expect(ndjson.stderr).toMatch(/^iprecord enrich: 2 rows held bytes that are not UTF-8, written with U\+FFFD in their place/m);
    const csv = spawnSync(process.execPath, [CLI, 'enrich', '--fields', 'country_code', file], {
      encoding: 'utf8',
      env: { ...process.env, IPRECORD_DATA: '' },
    });
    expect(csv.status).toBe(0);
    expect(csv.stderr).not.toMatch(/not UTF-8/);
  });
});

describe('iprecord enrich --format log', () => {
  /** A combined-format access log: addresses of both families, IPv6 in brackets with a port, IPv4 with a port, private ones, garbage and blank lines. */
  function accessLog(n: number): { text: string; lines: string[]; ips: string[] } {
    const next = xorshift32(7);
    const lines: string[] = [];
    const ips: string[] = [];
    const agents = ['Mozilla/5.0 (X11; Linux x86_64)', 'curl/8.5.0', 'Go-http-client/1.1', '-'];
    for (let i = 0; i < n; i++) {
      const a = next();
      const kind = i % 17;
      const v6 = `2a00:${(a & 0xffff).toString(16)}:${((a >>> 16) & 0xfff).toString(16)}::${(i & 0xff).toString(16)}`;
      const ip = kind === 3 ? v6 : kind === 5 ? `192.168.${a & 255}.1` : kind === 8 ? v6 : kind === 11 ? 'garbage' : unicastV4(a);
      const field = kind === 8 ? `[${ip}]:443` : kind === 13 ? `${ip}:${1024 + (a % 60000)}` : ip;
      const request = `"GET /item/${a % 9973}?q=${i} HTTP/1.1" ${[200, 304, 404, 500][a & 3]} ${a % 50000}`;
      lines.push(
        `${field} - - [26/Nov/2026:10:${String(i % 60).padStart(2, '0')}:00 +0000] ${request} "https://example.com/" "${agents[a % 4]}"`,
      );
      ips.push(ip);
    }
    // Blank lines are not rows.
    return { text: lines.map((l, i) => (i % 1000 === 999 ? l + '\n' : l)).join('\n') + '\n', lines, ips };
  }

  it('keeps every line of a 30 000-line access log whole, with the record of its address (ports and brackets taken off) or its error', () => {
    const log = accessLog(30_000);
    const file = join(dir, 'access.log');
    writeFileSync(file, log.text);
    // Two worker threads: the log's chunks answered out of order and written in order.
    const r = run(['enrich', file, '--fields', 'country_code,asn', '--threads', '2']);
    expect(r.code, r.err).toBe(1);
    const out = r.out.trimEnd().split('\n');
    expect(out).toHaveLength(log.lines.length);
    let good = 0;
    const wrong: string[] = [];
    out.forEach((text, i) => {
      const row = JSON.parse(text) as { line: string; iprecord: Record<string, unknown> };
      const want = expected(log.ips[i], ['country_code', 'asn']);
      if ('record' in want) good++;
      const same =
        row.line === log.lines[i] &&
        JSON.stringify('record' in want ? row.iprecord : row.iprecord.error) ===
          JSON.stringify('record' in want ? want.record : want.error);
      if (!same && wrong.push(`${log.lines[i]}\n  ${text}`) > 5) throw new Error(wrong.join('\n'));
    });
    expect(wrong).toEqual([]);
    expect(good).toBeGreaterThan(log.lines.length * 0.75);
  });

  it('finds the address with --regex (its group ip), writes CSV with the line first, and refuses --regex for other inputs', () => {
    const text = 'ts=1 client=8.8.8.8 status=200\nts=2 client=[2606:4700::1111]:443 status=200\nts=3 status=500\n';
    const r = run(
      ['enrich', '--format', 'log', '--regex', 'client=(?<ip>\\S+)', '--output', 'csv', '--fields', 'country_code,asn.asn'],
      text,
    );
    expect(r.code, r.err).toBe(1);
    const rows = r.out
      .trimEnd()
      .split('\n')
      .map((l) => splitCsvLine(l));
    expect(rows[0]).toEqual(['line', 'country_code', 'asn.asn', 'error']);
    const v = (ip: string) => engine.lookup(ip);
    expect(rows[1]).toEqual(['ts=1 client=8.8.8.8 status=200', v('8.8.8.8').country_code, v('8.8.8.8').asn?.asn, '']);
    expect(rows[2]).toEqual([
      'ts=2 client=[2606:4700::1111]:443 status=200',
      v('2606:4700::1111').country_code,
      v('2606:4700::1111').asn?.asn,
      '',
    ]);
    expect(rows[3]).toEqual(['ts=3 status=500', '', '', 'no address in this row']);
    expect(run(['enrich', '--format', 'lines', '--regex', 'x'], '8.8.8.8\n').code).toBe(2);
    expect(run(['enrich', '--format', 'log', '--regex', '('], '8.8.8.8\n').err).toMatch(/--regex is not a regular expression/);
  });
});
