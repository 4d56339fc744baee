/**
 * First and last seen, carried across builds (`compile/feeds/seen.ts`):
 * a list whose entries appear, stay, vanish and come back over builds days
 * or weeks apart, against a reference that replays the list's history
 * address by address (every address of the two IPv4 blocks the entries are
 * drawn from, and the IPv6 entries and their neighbours). Once as `iprecord
 * build` swaps builds of a local list in, once as `iprecord update`
 * downloads it from an HTTP origin whose list changes or answers 304, read
 * back through `explain()`.
 */

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseThreatConfig } from '../../src/compile/feeds/config.js';
import { dayOf, decodeSeen, encodeSeen, KEEP_DAYS, type SeenList } from '../../src/compile/feeds/seen.js';
import { buildAndSwap, updateDataset } from '../../src/compile/feeds/update.js';
import { dayText, SEEN_MAX_BYTES } from '../../src/evidence/seen.js';
import { run as explainVerb } from '../../src/cli/verbs/explain.js';
import { CURRENT_FILE, SEEN_FILE } from '../../src/dataset/store.js';
import { open } from '../../src/index.js';
import { createServer as createIprecordServer } from '../../src/server/index.js';
import { prng, seed } from '../helpers/env.js';
import { HANG_MS } from '../helpers/wait.js';
import { SMALL_SOURCES } from '../helpers/maxmind.js';

/** An entry a list may hold. */
interface Entry {
  readonly text: string;
  readonly v4?: [number, number];
  readonly v6?: bigint;
}
/** Entries drawn from: single addresses and small blocks of two /24s, and six IPv6 addresses of one /64. */
function pool(blocks: readonly [number, number], net6: readonly [string, bigint]): readonly Entry[] {
  return [
    ...Array.from({ length: 24 }, (_, i) => {
      const base = blocks[i < 12 ? 0 : 1] + (i % 12) * 20;
      const size = [1, 1, 2, 4, 8][i % 5];
      const at = base - (base % size);
      const dotted = [at >>> 24, (at >>> 16) & 255, (at >>> 8) & 255, at & 255].join('.');
      return { text: size === 1 ? dotted : `${dotted}/${32 - Math.log2(size)}`, v4: [at, at + size - 1] as [number, number] };
    }),
    ...Array.from({ length: 6 }, (_, i) => {
      const low = i * 3 + 1;
      return { text: net6[0] + low.toString(16), v6: net6[1] + BigInt(low) };
    }),
  ];
}

/**
 * The reference: each probe's first and last day, by replaying which
 * downloads held it (every address of the pool's two /24s, and the IPv6
 * entries and their neighbours).
 */
class Replay {
  readonly truth = new Map<string, { first: number; last: number } | null>();
  readonly probes4: number[] = [];
  readonly probes6: bigint[];
  constructor(readonly entries: readonly Entry[]) {
    for (const e of entries) {
      const block = e.v4 === undefined ? null : e.v4[0] - (e.v4[0] % 256);
      if (block !== null && !this.probes4.includes(block)) for (let a = block; a < block + 256; a++) this.probes4.push(a);
    }
    this.probes6 = entries.filter((p) => p.v6 !== undefined).flatMap((p) => [p.v6! - 1n, p.v6!, p.v6! + 1n]);
  }
  /** A download of `day` that held `held`. */
  download(day: number, held: readonly Entry[]): void {
    const replay = (key: string, holds: boolean) => {
      const before = this.truth.get(key) ?? null;
      if (holds) this.truth.set(key, { first: before?.first ?? day, last: day });
      else if (before !== null && day - before.last > KEEP_DAYS) this.truth.set(key, null);
    };
    for (const a of this.probes4)
      replay(
        `4:${a}`,
        held.some((p) => p.v4 !== undefined && p.v4[0] <= a && a <= p.v4[1]),
      );
    for (const x of this.probes6)
      replay(
        `6:${x}`,
        held.some((p) => p.v6 === x),
      );
  }
  want(key: string): { first: number; last: number } | null {
    return this.truth.get(key) ?? null;
  }
}

/** Documentation space: no lookup reads these lists, only seen.bin. */
const POOL = pool([0xc6336400, 0xcb007100], ['2001:db8::', 0x20010db8n << 96n]);

const at6 = (ranges: readonly (readonly [bigint, bigint, number, number])[], x: bigint) =>
  ranges.find(([s, e]) => s <= x && x <= e) ?? null;
/** The range of flat IPv4 ranges (start, end, first, last) that holds `x`, as a tuple. */
function at4(ranges: Uint32Array, x: number): [number, number, number, number] | null {
  for (let i = 0; i < ranges.length; i += 4)
    if (ranges[i] <= x && x <= ranges[i + 1]) return [ranges[i], ranges[i + 1], ranges[i + 2], ranges[i + 3]];
  return null;
}

describe('seen.bin', () => {
  it('refuses bytes that are not one, cut short or with bytes after its lists, with a typed error', () => {
    expect(() => decodeSeen(Buffer.from('not a seen file'))).toThrow(/not a valid seen.bin: bad magic/);
    const one = encodeSeen([{ name: 'a', latest: 20_000, v4: Uint32Array.of(1, 2, 19_999, 20_000), v6: [[1n, 5n, 20_000, 20_000]] }]);
    expect(decodeSeen(one).get('a')?.v6).toEqual([[1n, 5n, 20_000, 20_000]]);
    expect(() => decodeSeen(one.subarray(0, one.length - 3))).toThrow(/not a valid seen.bin: the IPv6 ranges of a run past the end/);
    expect(() => decodeSeen(Buffer.concat([one, Buffer.alloc(2)]))).toThrow(/2 bytes after the last list/);
  });
});

describe('first and last seen across builds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-seen-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('carries each address first seen, last seen and forgets it 90 days after, as a replay of the history says', async () => {
    const list = join(dir, 'list.txt');
    const config = parseThreatConfig({ feeds: [{ name: 'drawn', source: list, format: 'list', categories: ['attacker'] }] }, dir);
    const next = prng(seed());
    // Days between builds: a day, weeks, the 90 days an entry is kept exactly, and once past them.
    const gaps = [0, 1, 1, 14, 30, 90, 95, 2, 60];
    let day = dayOf(Date.UTC(2026, 0, 1));
    const history = new Replay(POOL);
    let seen: SeenList | undefined;
    let entries = 0;
    for (const gap of gaps) {
      day += gap;
      const held = POOL.filter(() => next() < 0.55);
      entries += held.length;
      writeFileSync(list, held.map((p) => p.text).join('\n') + '\n');
      // The list's date is its file's (a download's time, a local file's modification time).
      const time = new Date(day * 86_400_000 + 3_600_000);
      utimesSync(list, time, time);
      const { buildDir } = await buildAndSwap(config, dir, { now: time, dataset: false });
      history.download(day, held);
      seen = decodeSeen(readFileSync(join(buildDir, SEEN_FILE))).get('drawn');
      expect(seen?.latest).toBe(day);
      const wrong: string[] = [];
      const check = (key: string, got: readonly [unknown, unknown, number, number] | null) => {
        const want = history.want(key);
        const answer = got === null ? null : { first: got[2], last: got[3] };
        if (JSON.stringify(answer) !== JSON.stringify(want))
          wrong.push(`${key} on day ${day}: ${JSON.stringify(answer)}, the replay ${JSON.stringify(want)}`);
      };
      for (const a of history.probes4) check(`4:${a}`, at4(seen!.v4, a));
      for (const x of history.probes6) check(`6:${x}`, at6(seen!.v6, x));
      expect(wrong.slice(0, 5)).toEqual([]);
    }
    // A damaged seen.bin does not stop the next build: its days start again, and a warning says so.
    const current = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
    writeFileSync(join(dir, current, SEEN_FILE), 'damaged');
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
    process.on('warning', listen);
    try {
      const time = new Date((day + 1) * 86_400_000 + 3_600_000);
      utimesSync(list, time, time);
      const { buildDir } = await buildAndSwap(config, dir, { now: time, dataset: false });
      const fresh = decodeSeen(readFileSync(join(buildDir, SEEN_FILE))).get('drawn')!;
      for (let i = 0; i < fresh.v4.length; i += 4) expect([fresh.v4[i + 2], fresh.v4[i + 3]]).toEqual([day + 1, day + 1]);
      await new Promise((r) => setImmediate(r));
      expect(warned.join('\n')).toMatch(/not a valid seen.bin: bad magic\. First and last seen start again from this build/);
    } finally {
      process.off('warning', listen);
    }
    // The history had all of it: addresses listed again after a gap, and forgotten after the 95 days.
    expect(entries).toBeGreaterThan(60);
    const firsts = new Set([...history.truth.values()].filter((t) => t !== null).map((t) => t!.first));
    expect(firsts.size).toBeGreaterThan(2);
    // Neighbours with the same days are one range: no more ranges than entries drawn.
    expect(seen!.v4.length / 4).toBeLessThanOrEqual(POOL.length);
  });
});

describe('a seen.bin that is no regular file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-seen-special-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['a FIFO', (path: string) => execFileSync('mkfifo', [path]), /is not a regular file\. First and last seen start again/],
    ['a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path), /is not a regular file\. First and last seen start again/],
    [
      'larger than its bound',
      (path: string) => {
        writeFileSync(path, '');
        truncateSync(path, SEEN_MAX_BYTES + 1);
      },
      /more than the \d+ it may\./,
    ],
  ] as const)(
    'is refused before it is read (%s): the next build starts the days again and says so',
    async (_what, make, said) => {
      const list = join(dir, 'list.txt');
      writeFileSync(list, '81.2.69.142\n');
      const config = parseThreatConfig({ feeds: [{ name: 'one', source: list, format: 'list', categories: ['attacker'] }] }, dir);
      await buildAndSwap(config, dir, { dataset: false });
      const current = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
      rmSync(join(dir, current, SEEN_FILE));
      make(join(dir, current, SEEN_FILE));
      const warned: string[] = [];
      const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
      process.on('warning', listen);
      try {
        const { buildDir } = await buildAndSwap(config, dir, { dataset: false });
        expect([...decodeSeen(readFileSync(join(buildDir, SEEN_FILE))).keys()]).toEqual(['one']);
        await new Promise((r) => setImmediate(r));
        expect(warned.join('\n')).toMatch(said);
      } finally {
        process.off('warning', listen);
      }
    },
    HANG_MS,
  );
});

describe('first and last seen across updates from an HTTP origin', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iprecord-seen-update-'));
  /** What the origin serves now; a request with its ETag is answered 304. */
  let body = '';
  const server = createServer((req, res) => {
    const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
    res.writeHead(200, { etag }).end(body);
  });
  /** The updates' configuration: the origin's one list (set by the first test, which the others follow). */
  let config: ReturnType<typeof parseThreatConfig>;
  afterAll(() => {
    vi.useRealTimers();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("explain() gives each address's first and last seen as a replay of the downloads says, a 304 counting as that day's download", async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/drawn`;
    // Public space, so that explain() answers each probe (an address of documentation space has no record).
    const entries = pool([0x51024500, 0x59a01400], ['2a02:cf40::', 0x2a02cf40n << 96n]);
    config = parseThreatConfig(
      { sources: SMALL_SOURCES, feeds: [{ name: 'drawn', source: url, format: 'list', categories: ['attacker'] }] },
      dir,
    );
    const next = prng(seed());
    const history = new Replay(entries);
    // Each update: days after the one before, and whether the origin's list changed (else it answers 304).
    const steps = [
      { gap: 0, changed: true },
      { gap: 3, changed: true },
      { gap: 20, changed: true },
      { gap: 20, changed: false },
      { gap: 70, changed: false },
      { gap: 95, changed: true },
      { gap: 1, changed: true },
    ];
    // The updates' clock: the day a download is dated by is this process's (its file's time is set from it).
    vi.useFakeTimers({ toFake: ['Date'] });
    let day = dayOf(Date.UTC(2026, 2, 1));
    let held: readonly Entry[] = [];
    for (const { gap, changed } of steps) {
      day += gap;
      vi.setSystemTime(day * 86_400_000 + 5 * 3_600_000);
      if (changed) {
        const drawn = entries.filter(() => next() < 0.55);
        held = drawn.length > 0 ? drawn : entries.slice(0, 1);
        body = held.map((p) => p.text).join('\n') + '\n';
      }
      const result = await updateDataset(config, dir, { retries: 0, allowShrink: true });
      expect(result.feeds.map((f) => [f.name, f.state])).toEqual([['drawn', changed ? 'updated' : 'unchanged']]);
      expect(result.ok).toBe(true);
      history.download(day, held);
      const engine = await open({ data: dir });
      try {
        const wrong: string[] = [];
        const check = (ip: string, key: string) => {
          const want = history.want(key);
          const got = engine.explain(ip).lists?.find((l) => l.name === 'drawn') ?? null;
          const answer = got === null ? null : [got.first_seen, got.last_seen, got.listed, got.downloaded];
          const expected = want === null ? null : [dayText(want.first), dayText(want.last), want.last === day, dayText(day)];
          if (JSON.stringify(answer) !== JSON.stringify(expected))
            wrong.push(`${ip} on ${dayText(day)}: ${JSON.stringify(answer)}, the replay ${JSON.stringify(expected)}`);
        };
        for (const a of history.probes4) check([a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join('.'), `4:${a}`);
        for (const x of history.probes6) check(`2a02:cf40::${(x & 0xffffn).toString(16)}`, `6:${x}`);
        expect(wrong.slice(0, 5)).toEqual([]);
      } finally {
        engine.close();
      }
    }
    // The history had what it is about: addresses held again after a gap, first days told apart, and some forgotten.
    expect(new Set([...history.truth.values()].filter((t) => t !== null).map((t) => t!.first)).size).toBeGreaterThan(2);
    expect([...history.truth.values()].some((t) => t === null)).toBe(true);
  });

  it('answers a damaged seen.bin as no history, said once, and the server its explanations as it answers lookups', async () => {
    vi.useRealTimers();
    const current = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
    const file = join(dir, current, SEEN_FILE);
    const bytes = readFileSync(file);
    // Cut short within its lists: its header still reads, its ranges run past the end.
    writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
    process.on('warning', listen);
    const engine = await open({ data: dir });
    const server = await createIprecordServer({ engine });
    try {
      const ip = '81.2.69.142';
      const explained = engine.explain(ip);
      expect(explained.lists).toBeNull();
      expect(explained.record).toEqual(engine.lookup(ip));
      engine.explain(ip);
      await new Promise((r) => setImmediate(r));
      expect(warned.length).toBe(1);
      expect(warned[0]).toMatch(
        /^The lists' history cannot be read: .+seen\.bin is not a valid seen\.bin: the IPv\d ranges of drawn run past the end\. explain answers without it \(lists: null\)\.$/,
      );
      const { port } = await server.listen(0, '127.0.0.1');
      const r = await fetch(`http://127.0.0.1:${port}/explain/${ip}`);
      expect(r.status).toBe((await fetch(`http://127.0.0.1:${port}/${ip}`)).status);
      expect(((await r.json()) as { lists: unknown }).lists).toBeNull();
      expect(() => engine.explain(ip, { damagedHistory: 'throw' })).toThrow(/the lists' history cannot be read: .+ run past the end/);
    } finally {
      process.off('warning', listen);
      await server.close();
      engine.close();
      writeFileSync(file, bytes);
    }
  });

  it('never answers or carries days from damaged day words: explain answers no history, the CLI exits 2, the next build starts again', async () => {
    vi.useRealTimers();
    const current = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
    const file = join(dir, current, SEEN_FILE);
    const good = readFileSync(file);
    const ip = '81.2.69.142';
    const engine = await open({ data: dir });
    // The first IPv4 range of the list as it lies in the file: start, end, first and last day.
    const drawn = decodeSeen(good).get('drawn')!;
    const row = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) row.writeUInt32LE(drawn.v4[i], i * 4);
    const at = good.indexOf(row);
    expect(at).toBeGreaterThan(0);
    const a = drawn.v4[0];
    const probe = [a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join('.');
    expect(engine.explain(probe).lists?.map((l) => l.first_seen)).toEqual([dayText(drawn.v4[2])]);
    // Two day words damaged (first seen 1972, last seen 2136), the checksum as it was.
    const damaged = Buffer.from(good);
    damaged.writeUInt32LE(800, at + 8);
    damaged.writeUInt32LE(60_600, at + 12);
    writeFileSync(file, damaged);
    const warned: string[] = [];
    const listen = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_SEEN_DAMAGED' && warned.push(w.message));
    process.on('warning', listen);
    const stderr: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => stderr.push(String(chunk)) > 0);
    try {
      expect(engine.explain(probe).lists).toBeNull();
      expect(engine.explain(ip).lists).toBeNull();
      await new Promise((r) => setImmediate(r));
      expect(warned).toEqual([expect.stringMatching(/seen\.bin is not a valid seen\.bin: its checksum does not match its bytes\./)]);
      // The CLI: one line saying why, exit 2 (1 is an address without a record).
      const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      let code: number;
      try {
        code = explainVerb([probe, '--data', dir]);
      } finally {
        stdout.mockRestore();
      }
      write.mockRestore();
      expect(code).toBe(2);
      // Node prints the warnings above to standard error too.
      expect(stderr.filter((l) => !l.startsWith('(node:')).join('')).toMatch(
        /^iprecord: [\d.]+: the lists' history cannot be read: .+ its checksum does not match its bytes\.\n$/,
      );
      // The next build: days start again from it (its own download's day), none of the damaged ones carried on.
      expect((await updateDataset(config, dir, { retries: 0, allowShrink: true })).ok).toBe(true);
      const now = readFileSync(join(dir, CURRENT_FILE), 'utf8').trim();
      expect(now).not.toBe(current);
      const fresh = decodeSeen(readFileSync(join(dir, now, SEEN_FILE))).get('drawn')!;
      const today = dayOf(Date.now());
      for (let i = 0; i < fresh.v4.length; i += 4) expect([fresh.v4[i + 2], fresh.v4[i + 3]]).toEqual([fresh.latest, fresh.latest]);
      expect(fresh.latest).toBeLessThanOrEqual(today);
      await new Promise((r) => setImmediate(r));
      expect(warned.join('\n')).toMatch(/its checksum does not match its bytes\. First and last seen start again from this build\./);
    } finally {
      write.mockRestore();
      process.off('warning', listen);
      engine.close();
    }
  });
});
