/**
 * What the benchmarks that run the built CLI share: the CLI as a child
 * process, timed, with its peak resident and proportional size sampled
 * from /proc; and generated log CSVs (`id,client_ip,path`).
 */

import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { proportionalBytes, residentBytes, unicastV4, xorshift32 } from '../test/helpers/env.js';

const ROOT = join(import.meta.dirname, '..');
export const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) {
  console.error(`${process.argv[1]} runs the built CLI: run npm run build first.`);
  process.exit(1);
}

/** Writes a CSV (`id,client_ip,path`) of `rows` rows, each made by `row` from its number and a seeded uint32. */
export function writeCsv(file: string, rows: number, seed: number, row: (i: number, a: number) => string): void {
  const next = xorshift32(seed);
  const fd = openSync(file, 'w');
  writeSync(fd, 'id,client_ip,path\n');
  let chunk: string[] = [];
  for (let i = 0; i < rows; i++) {
    chunk.push(row(i, next()));
    if (chunk.length === 100_000) {
      writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
  }
  if (chunk.length > 0) writeSync(fd, chunk.join('\n') + '\n');
  closeSync(fd);
}

/** Mostly public IPv4 from the whole space, one row in ten IPv6 (some private or reserved: bad rows). */
export const uniformRow = (i: number, a: number) =>
  `${i},${i % 10 === 9 ? `2a00:${(a & 0xffff).toString(16)}::${(a >>> 16).toString(16)}` : unicastV4(a)},/page/${a % 1000}`;

/** Loaded into the child: at exit, its CPU time (every thread's, user and system) on a line of its own. */
const CPU_LINE = 'cpu-us:';
const CPU_AT_EXIT = `--import=data:text/javascript,process.on('exit',()=>{const{userCPUTime:u,systemCPUTime:s}=process.resourceUsage();process.stderr.write('\\n${CPU_LINE}'+(u+s)+'\\n')})`;

/** Runs the CLI to /dev/null: wall seconds, CPU seconds, peak resident and proportional bytes, the last line of its standard error. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ secs: number; cpu: number; peak: number; peakPss: number; summary: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} ${CPU_AT_EXIT}` },
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let peak = 0;
  let peakPss = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(child.pid as number));
    peakPss = Math.max(peakPss, proportionalBytes(child.pid as number));
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);
  // enrich exits 1 when some rows are bad (the generated logs have some); 2 and above are failures.
  if (code === null || code > 1) throw new Error(`iprecord ${args.join(' ')} exited ${code}: ${err.trim()}`);
  const lines = err.trim().split('\n');
  // A worker thread may write the line too at its end (the preload runs there): the process's figure is the last and largest.
  const cpu = Math.max(...lines.filter((l) => l.startsWith(CPU_LINE)).map((l) => Number(l.slice(CPU_LINE.length)))) / 1e6;
  const summary = lines.filter((l) => l !== '' && !l.startsWith(CPU_LINE)).pop() ?? '';
  return { secs: (performance.now() - started) / 1000, cpu, peak, peakPss, summary };
}
