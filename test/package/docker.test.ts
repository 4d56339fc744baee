/**
 * The Dockerfile, as far as it can be checked without Docker (not on this
 * machine): its instructions run in order as a script in a clean folder
 * standing for the image's file system (container paths under it; COPY
 * from a fresh clone of this tree, which .dockerignore leaves alike; the
 * apt-get line is what this machine has already; USER and chown left to
 * Docker), then its CMD started, answering the API, its HEALTHCHECK and
 * the metrics port. Part of `npm run test:setup` (a full npm install).
 */

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';

interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const at = l.indexOf(' ');
      return { op: l.slice(0, at).toUpperCase(), args: l.slice(at + 1).trim() };
    });
}

const isClone = existsSync(join(ROOT, '.git'));
const dir = mkdtempSync(join(tmpdir(), 'iprecord-docker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!isClone)('the Dockerfile', () => {
  it('run as a script in a clean folder gives a server that answers, passes its health check and serves metrics', async () => {
    const context = join(dir, 'context');
    execFileSync('git', ['clone', '--quiet', ROOT, context]);
    // Each stage a folder of its own standing for its file system; container paths (absolute, at a word's start) under it.
    const stages = new Map<string, string>();
    let root = '';
    const under = (base: string, s: string) => s.replace(/(^|[\s=:"'])\/(src|opt|tmp|data)(?=[/\s"':]|$)/g, `$1${base}/$2`);
    const mapped = (s: string) => under(root, s);
    const env: NodeJS.ProcessEnv = { ...process.env, IPRECORD_DATA: undefined, npm_config_loglevel: 'error' };
    delete env.IPRECORD_DATA;
    let cwd = '';
    let cmd: string[] = [];
    let health = '';
    const ran: string[] = [];
    for (const { op, args } of instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))) {
      if (op === 'FROM') {
        root = join(dir, `stage-${stages.size}`);
        stages.set(/\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.size), root);
        // The base image's folders the Dockerfile uses.
        mkdirSync(join(root, 'tmp'), { recursive: true });
        cwd = root;
      } else if (op === 'WORKDIR') {
        cwd = mapped(args);
        mkdirSync(cwd, { recursive: true });
      } else if (op === 'COPY') {
        const parts = args.split(/\s+/);
        const from = parts[0].startsWith('--from=') ? stages.get(parts.shift()?.slice(7) ?? '') : undefined;
        const [src, dst] = parts;
        const target = dst.startsWith('/') ? mapped(dst) : join(cwd, dst);
        cpSync(from === undefined ? join(context, src) : under(from, src), target, {
          recursive: true,
          filter: (p) => !p.includes(`${context}/.git`),
        });
      } else if (op === 'RUN') {
        const script = mapped(args)
          .split('&&')
          .map((c) => c.trim())
          // What this machine has already (a compiler, make, Python); owners are Docker's.
          .filter((c) => !/^(apt-get|rm -rf \S*\/var\/lib\/apt|chown)\b/.test(c))
          .join(' && ');
        const started = performance.now();
        const r = spawnSync('sh', ['-c', script], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
        expect(r.status, `${script}\n${r.stdout}\n${r.stderr}`).toBe(0);
        ran.push(`${script.slice(0, 60)}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      } else if (op === 'ENV') {
        for (const [, k, v] of args.matchAll(/(\w+)=(\S+)/g)) env[k] = mapped(v).replace(/\$(\w+)/g, (_, name: string) => env[name] ?? '');
      } else if (op === 'CMD') {
        cmd = JSON.parse(args) as string[];
      } else if (op === 'HEALTHCHECK') {
        health = args.slice(args.indexOf('CMD ') + 4);
      }
    }
    console.log(`Dockerfile as a script: ${ran.join('; ')}`);
    // The compiled default data is in the image.
    expect(existsSync(join(root, 'opt/iprecord/node_modules/iprecord/data/default.iprd'))).toBe(true);
    expect(existsSync(join(root, 'data/iprecord'))).toBe(true);
    // The CMD, on free ports (its own are the image's).
    const args = cmd.map((a) => (a === '9464' ? '0' : a));
    const server = spawn(args[0], args.slice(1), { cwd: root, env: { ...env, PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    try {
      const ports = await new Promise<{ api: number; metrics: number }>((resolve, reject) => {
        server.stderr.on('data', (c: Buffer) => {
          err += c.toString();
          const api = /listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(err);
          const metrics = /metrics on port (\d+)/.exec(err);
          if (api !== null && metrics !== null) resolve({ api: Number(api[1]), metrics: Number(metrics[1]) });
        });
        server.once('exit', (code) => reject(new Error(`the CMD exited ${code}: ${err}`)));
      });
      const record = (await (await fetch(`http://127.0.0.1:${ports.api}/8.8.8.8`)).json()) as {
        country_code: string;
        asn: { asn: string };
      };
      expect(record).toMatchObject({ country_code: 'US', asn: { asn: 'AS15169' } });
      const check = spawnSync('sh', ['-c', health], { env: { ...env, PORT: String(ports.api) }, encoding: 'utf8' });
      expect(check.status, check.stderr).toBe(0);
      expect(await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text()).toMatch(
        /^iprecord_requests_total\{operation="lookup",status="200"\} 1$/m,
      );
    } finally {
      const exit = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exit;
    }
    // A bound on a hang only: a fresh npm install beside the rest of CI took 11 minutes in a slow hour.
  }, 1_200_000);
});
if (!isClone) console.log(`Dockerfile test skipped: ${ROOT} is not a git clone`);
