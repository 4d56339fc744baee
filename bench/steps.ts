/**
 * Where `writeJson()`'s time goes, step by step: each step replaced by
 * nothing, one process per variant (a step patched out of a process that
 * ran the whole path would leave the optimised code of both behind),
 * variants in turn, three passes, medians. Each variant writes into a
 * buffer as `writeJson()` does; what a step costs is the whole path's time
 * less the variant's. maxmind's `get()` + `JSON.stringify` written is
 * measured the same way, the peer of `npm run bench`'s ratios.
 *
 * - `all`: the whole path;
 * - `no zone`: `time_zone` written as `null` (its state, text and copies);
 * - `no clock`: the moment and the count read once for the run, not per record;
 * - `no copies`: the parts' and country runs' bytes left unwritten (their reads kept);
 * - `no copies, no zone`: both;
 * - `reads`: the address parsed, its range, record row, location and network rows and their parts' first words read,
 *   nothing written (every read from memory a record waits for);
 * - `range`: the address parsed and its range found.
 *
 * Addresses: distinct IPv4 and IPv6 (each looked up once per process) and
 * 256 IPv4 addresses again and again (in cache).
 *
 *     node --import tsx bench/steps.ts
 */

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import maxmind from 'maxmind';
import { open } from '../src/index.js';
import { ByteSink } from '../src/record/render.js';
import { Answers } from '../src/engine/answers.js';
import { RecordObjects } from '../src/record/objects.js';
import { defaultGeoPaths } from '../src/dataset/defaults.js';
import { findRange, LOC, LOCATION, NET_PART, NETWORK, PART_UTF8, RECORD, type Dataset } from '../src/dataset/format.js';
import type { ByteWriter } from '../src/text/writer.js';
import type { CountryRow } from '../src/record/countries.js';
import { distinctAddresses } from './mix.js';

const VARIANTS = ['all', 'no zone', 'no clock', 'no copies', 'no copies, no zone', 'reads', 'range', 'maxmind'] as const;
type Variant = (typeof VARIANTS)[number];
const PASSES = 3;
const ROUNDS = 9;

/** Replaces a method of a prototype, refusing one that is not there (a renamed step would measure nothing). */
function patch<T>(proto: object, name: string, fn: (this: T, ...args: never[]) => unknown): void {
  if (typeof (proto as Record<string, unknown>)[name] !== 'function') throw new Error(`bench/steps.ts: no method ${name} to replace`);
  (proto as Record<string, unknown>)[name] = fn;
}

function patchOut(variant: Variant): void {
  const sink = ByteSink.prototype;
  const nullZone = function (this: ByteSink) {
    this.out.latin1('null');
  };
  if (variant === 'no zone' || variant === 'no copies, no zone') patch(sink, 'zone', nullZone);
  if (variant === 'no copies' || variant === 'no copies, no zone') {
    patch(sink, 'part', function (this: ByteSink, _ds: Dataset, start: number, end: number) {
      this.out.used += ((end & ~PART_UTF8) >>> 0) - start;
    });
    patch(sink, 'run', function (this: ByteSink, c: CountryRow, i: number) {
      this.out.used += c.runAt[2 * i + 1] - c.runAt[2 * i];
    });
  }
  if (variant === 'no clock') {
    const now = Date.now();
    patch(Answers.prototype, 'renderState', function (this: { render: Record<string, unknown> }, address: unknown) {
      const s = this.render;
      s.now = now;
      s.count = '0';
      s.ownCount = true;
      s.basic = false;
      s.address = address;
      return s;
    });
  }
  if (variant === 'reads')
    patch(
      RecordObjects.prototype,
      'write',
      function (this: { ds: Dataset }, _c: unknown, _v: unknown, _w: unknown, ref: number, _s: unknown, out: ByteWriter) {
        const ds = this.ds;
        const rec = (ref >>> 8) * RECORD;
        const loc = ds.records[rec] * LOCATION;
        const net = ds.records[rec + 1] * NETWORK;
        const u32 = ds.parts.u32;
        const first =
          u32[ds.locations[loc + LOC.placePart] >>> 2] ^
          u32[ds.locations[loc + LOC.part] >>> 2] ^
          u32[ds.networks[net + NET_PART.head] >>> 2];
        out.used += first & 1;
      },
    );
  if (variant === 'range')
    patch(
      Answers.prototype,
      'write',
      function (this: Answers, snap: { dataset: Dataset }, parsed: { version: 4 | 6 }, _o: unknown, out: ByteWriter) {
        out.used += findRange(snap.dataset, parsed.version, this.ip.words) & 1;
      },
    );
}

/** One variant's medians (µs a record), in this process. */
async function measure(variant: Variant): Promise<Record<'v4' | 'v6' | 'hot', number>> {
  patchOut(variant);
  const engine = await open({ memory: 'read' });
  const [geo4, geo6] = (await Promise.all(defaultGeoPaths().map((p) => maxmind.open(p)))) as { get(ip: string): unknown }[];
  const out = Buffer.alloc(1 << 16);
  const all = distinctAddresses(1_400_000, 777);
  const v4 = all.filter((ip) => !ip.includes(':'));
  const v6 = all.filter((ip) => ip.includes(':') && !ip.startsWith('::ffff:'));
  const hot = v4.slice(0, 256);
  let sink = 0;
  const write =
    variant === 'maxmind'
      ? (ip: string) => out.write(JSON.stringify((ip.includes(':') ? geo6 : geo4).get(ip)) ?? 'null', 0)
      : (ip: string) => engine.writeJson(ip, out, 0);
  const run = (ips: string[], from: number, n: number) => {
    const t = performance.now();
    for (let k = 0; k < n; k++) sink += write(ips[from + k] ?? ips[(from + k) % ips.length]);
    return ((performance.now() - t) * 1000) / n;
  };
  const times = { v4: [] as number[], v6: [] as number[], hot: [] as number[] };
  run(hot, 0, 200_000);
  for (let round = 0; round < ROUNDS; round++) {
    times.v4.push(run(v4, round * 100_000, 100_000));
    times.v6.push(run(v6, round * 20_000, 20_000));
    times.hot.push(run(hot, 0, 100_000));
  }
  if (sink < 0) console.log(sink);
  return { v4: median(times.v4), v6: median(times.v6), hot: median(times.hot) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const asked = process.argv[2] as Variant | undefined;
if (asked !== undefined) {
  if (!VARIANTS.includes(asked)) throw new Error(`bench/steps.ts: no variant ${asked}`);
  console.log(JSON.stringify(await measure(asked)));
} else {
  const self = fileURLToPath(import.meta.url);
  const runs: Record<string, Record<'v4' | 'v6' | 'hot', number>[]> = {};
  for (let pass = 0; pass < PASSES; pass++)
    for (const v of VARIANTS) {
      const line = execFileSync(process.execPath, ['--import', 'tsx', '--no-warnings', self, v], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop()!;
      (runs[v] ??= []).push(JSON.parse(line) as Record<'v4' | 'v6' | 'hot', number>);
    }
  const of = (v: string, k: 'v4' | 'v6' | 'hot') => median(runs[v].map((r) => r[k]));
  const cell = (v: string, k: 'v4' | 'v6' | 'hot') => {
    const spread = runs[v].map((r) => r[k]);
    return `${of(v, k).toFixed(2)} (${Math.min(...spread).toFixed(2)}-${Math.max(...spread).toFixed(2)})`;
  };
  console.log('| variant | distinct IPv4 µs | distinct IPv6 µs | in cache µs |\n|---|---|---|---|');
  for (const v of VARIANTS) console.log(`| ${v} | ${cell(v, 'v4')} | ${cell(v, 'v6')} | ${cell(v, 'hot')} |`);
  for (const k of ['v4', 'v6'] as const)
    console.log(
      `${k}: all ${(of('maxmind', k) / of('all', k)).toFixed(2)}x maxmind; reads alone ${(of('maxmind', k) / of('reads', k)).toFixed(2)}x`,
    );
}
