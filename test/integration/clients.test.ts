/**
 * The hosted service's official client libraries pointed at `iprecord
 * serve`: the exact requests each one sends (`fixtures/service/clients.json`,
 * read from their code) replayed over real sockets, at the base address and
 * under the EU base path, each answer checked against the library's own.
 * The server stands behind a proxy here (`trustProxy: 1`) so that the
 * caller's own address is a public one.
 */

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type Engine, type IpRecord } from '../../src/index.js';
import { createServer, type IprecordServer } from '../../src/server/index.js';
import { ROOT } from '../helpers/env.js';

interface Answer {
  lookup?: string | null;
  bulk?: string[];
  field?: string;
  ip?: string | null;
  fields?: string[];
}
interface Replay {
  call: string;
  method: string;
  target: string;
  headers?: Record<string, string>;
  body?: string;
  answer: Answer;
}
interface Client {
  name: string;
  headers: Record<string, string>;
  requests: Replay[];
}

const { clients } = JSON.parse(readFileSync(join(ROOT, 'fixtures/service/clients.json'), 'utf8')) as { clients: Client[] };
const KEY = 'biz-key-00001';
const CALLER = '8.8.8.8';

let engine: Engine;
let server: IprecordServer;
let port: number;

beforeAll(async () => {
  engine = await open();
  server = await createServer({ engine, keys: { keys: [{ key: KEY, plan: 'business' }] }, trustProxy: 1, basePaths: ['/eu'] });
  port = (await server.listen(0, '127.0.0.1')).port;
});
afterAll(async () => {
  await server.close();
  engine.close();
});

/** Sends one request as the client writes it, with the proxy's `x-forwarded-for`. */
function replay(client: Client, r: Replay, base: string): Promise<{ status: number; type: string; body: string }> {
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  const headers: Record<string, string> = { ...client.headers, ...r.headers, 'x-forwarded-for': CALLER };
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: r.method, path: base + r.target.replace('{key}', KEY), headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A record without what changes between two lookups (the clock and the count). */
function stable(r: Partial<IpRecord>): unknown {
  const { count, time_zone, ...rest } = r;
  expect(count === undefined || /^\d+$/.test(count)).toBe(true);
  return { ...rest, time_zone: time_zone == null ? time_zone : { ...time_zone, current_time: null } };
}

/** What the library answers for the call, in the shape the server sends it. */
function expected(a: Answer): unknown {
  const options = a.fields === undefined ? undefined : { fields: a.fields };
  if (a.bulk !== undefined) return a.bulk.map((ip) => stable(engine.lookup(ip, options)));
  if (a.field !== undefined) return engine.field(a.ip ?? CALLER, a.field as 'country_name');
  return stable(engine.lookup(a.lookup ?? CALLER, options));
}

describe.each(clients)('the $name client', (client) => {
  describe.each(['', '/eu'])('at base path "%s"', (base) => {
    it.each(client.requests)('$call', async (r) => {
      const res = await replay(client, r, base);
      expect(res.status, res.body).toBe(200);
      const want = expected(r.answer);
      if (r.answer.field !== undefined) {
        expect(res.type).toBe('text/plain; charset=utf-8');
        expect(res.body).toBe(want);
        return;
      }
      expect(res.type).toBe('application/json; charset=utf-8');
      const got = JSON.parse(res.body) as Partial<IpRecord> | Partial<IpRecord>[];
      // `fields=` (the Python client's plain lookup) selects nothing: the full record, never `{}`.
      expect(Array.isArray(got) ? got.map(stable) : stable(got)).toEqual(want);
    });
  });
});

describe('the Node client, as docs/server.md points it at the server', () => {
  it('runs the block of docs/server.md with the real package (ipdata 2.2.4) and prints what the library answers', async () => {
    const doc = readFileSync(join(ROOT, 'docs/server.md'), 'utf8');
    const block = /<!-- node-client -->\s*```js\n([\s\S]*?)```/.exec(doc);
    expect(block, 'docs/server.md has no node-client block').not.toBeNull();
    // The block as written, but for its indentation, this server's port and key.
    const code = (block as RegExpExecArray)[1]
      .replace(/^ {2}/gm, '')
      .replace('http://127.0.0.1:8080', `http://127.0.0.1:${port}`)
      .replace("'KEY'", `'${KEY}'`);
    // Not spawnSync: the server answering it runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
    const want = engine.lookup('8.8.8.8');
    expect(stdout.trim()).toBe(`${want.country_code} ${want.asn?.asn}`);
  });
});
