/**
 * The server's metrics (`metricsPort`, `--metrics-port`) scraped as
 * Prometheus would, checked against the requests sent: in one process,
 * and added up over the workers of `iprecord serve --workers 2`.
 */

import { spawn, spawnSync } from 'node:child_process';
import { request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type Engine } from '../../src/index.js';
import { createServer, type IprecordServer } from '../../src/server/index.js';
import { ROOT } from '../helpers/env.js';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

const KEY = 'metrics-key-01';
const KEYS = { keys: [{ key: KEY, plan: 'business' as const }] };

/** A request on a new connection; its status and body. */
function fetchText(url: string, body?: string): Promise<{ status: number; text: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, method: body === undefined ? 'GET' : 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Samples of Prometheus's text format: `name{labels}` to value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('metrics', () => {
  let engine: Engine;
  let server: IprecordServer;
  let api: string;
  let metrics: string;
  beforeAll(async () => {
    engine = await open();
    server = await createServer({ engine, keys: KEYS, metricsPort: 0, accessLog: null });
    api = `http://127.0.0.1:${(await server.listen(0)).port}`;
    metrics = `http://127.0.0.1:${((server.metrics as Server).address() as AddressInfo).port}/metrics`;
  });
  afterAll(async () => {
    await server.close();
    engine.close();
  });

  it('count every request by operation and status, time them, size bulk requests; no address or key in a label', async () => {
    const addresses = ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '9.9.9.9', '185.220.101.1'];
    for (const ip of addresses) expect((await fetchText(`${api}/${ip}?api-key=${KEY}`)).status).toBe(200);
    expect((await fetchText(`${api}/10.1.2.3?api-key=${KEY}`)).status).toBe(400);
    expect((await fetchText(`${api}/8.8.8.8?api-key=not-a-key`)).status).toBe(401);
    expect((await fetchText(`${api}/8.8.8.8/threat?api-key=${KEY}`)).status).toBe(200);
    expect((await fetchText(`${api}/8.8.8.8/country_code?api-key=${KEY}`)).status).toBe(200);
    expect((await fetchText(`${api}/bulk?api-key=${KEY}`, JSON.stringify(addresses.slice(0, 3)))).status).toBe(200);
    expect((await fetchText(`${api}/bulk?api-key=${KEY}`, JSON.stringify(addresses))).status).toBe(200);
    expect((await fetchText(`${api}/healthz`)).status).toBe(200);
    expect((await fetchText(`${api}/no/such/path/here`)).status).toBe(404);
    // Not on the API's port.
    expect((await fetchText(`${api}/metrics?api-key=${KEY}`)).status).not.toBe(200);
    const scraped = await fetchText(metrics);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = samples(scraped.text);
    // Prometheus's naming rules: a counter's name ends in _total, no other type's does; and its own check agrees where
    // it is installed (promtool, in Debian's prometheus package).
    const types = [...scraped.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));
    expect(types.length).toBeGreaterThan(20);
    expect(types.filter(({ name, type }) => name.endsWith('_total') !== (type === 'counter'))).toEqual([]);
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: scraped.text, encoding: 'utf8' });
    if (promtool.error === undefined) expect(promtool.status, promtool.stdout + promtool.stderr).toBe(0);
    else console.log('metrics: promtool check skipped (apt install prometheus)');
    const requests = (operation: string, status: number) => m.get(`iprecord_requests_total{operation="${operation}",status="${status}"}`);
    expect(requests('lookup', 200)).toBe(5);
    // The private address, and /metrics on the API's port (read as an address).
    expect(requests('lookup', 400)).toBe(2);
    expect(requests('lookup', 401)).toBe(1);
    expect(requests('threat', 200)).toBe(1);
    expect(requests('field', 200)).toBe(1);
    expect(requests('bulk', 200)).toBe(2);
    expect(requests('health', 200)).toBe(1);
    expect(requests('other', 404)).toBe(1);
    expect(m.get('iprecord_request_duration_seconds_count{operation="lookup"}')).toBe(8);
    expect(m.get('iprecord_bulk_addresses_count')).toBe(2);
    expect(m.get('iprecord_bulk_addresses_sum')).toBe(8);
    expect(m.get('iprecord_bulk_addresses_bucket{le="5"}')).toBe(2);
    expect(m.get('iprecord_dataset_built_timestamp_seconds')).toBe(Date.parse(engine.info().dataset.builtAt) / 1000);
    for (const d of engine.info().databases)
      if (d.dataDate !== null)
        expect([...m.entries()].some(([k, v]) => k.includes(`role="${d.role}"`) && v === Date.parse(d.dataDate as string) / 1000)).toBe(
          true,
        );
    expect(m.get('iprecord_process_resident_memory_bytes')).toBeGreaterThan(0);
    for (const secret of [KEY, 'not-a-key', ...addresses, '10.1.2.3']) expect(scraped.text).not.toContain(secret);
  });

  it('count reloads, and reloads that failed', async () => {
    await server.reload();
    const m = samples((await fetchText(metrics)).text);
    expect(m.get('iprecord_reloads_total')).toBe(1);
    expect(m.get('iprecord_reload_failures_total')).toBe(0);
  });

  it('of iprecord serve --workers 2 are the workers added up, served by the primary', async () => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'dist', 'cli.js'), 'serve', '--port', '0', '--metrics-port', '0', '--workers', '2', '--access-log', 'off', '--quiet'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, IPRECORD_DATA: '' },
      },
    );
    let err = '';
    try {
      const ports = await new Promise<{ api: number; metrics: number }>((resolve, reject) => {
        child.stderr.on('data', (c: Buffer) => {
          err += c.toString();
          const listening = [...err.matchAll(/listening on http:\/\/127\.0\.0\.1:(\d+)/g)];
          const at = /metrics on port (\d+)/.exec(err);
          if (listening.length === 2 && at !== null) resolve({ api: Number(listening[0][1]), metrics: Number(at[1]) });
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
      });
      // New connections: the cluster spreads them over its workers.
      for (let i = 0; i < 40; i++) expect((await fetchText(`http://127.0.0.1:${ports.api}/8.8.8.8`)).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await fetchText(`http://127.0.0.1:${ports.api}/192.168.0.1`)).status).toBe(400);
      const m = samples((await fetchText(`http://127.0.0.1:${ports.metrics}/metrics`)).text);
      expect(m.get('iprecord_requests_total{operation="lookup",status="200"}')).toBe(40);
      expect(m.get('iprecord_requests_total{operation="lookup",status="400"}')).toBe(3);
      // A timestamp is the workers' latest, not their sum.
      expect(m.get('iprecord_dataset_built_timestamp_seconds')).toBeLessThan(Date.now() / 1000);
    } finally {
      const exit = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exit;
    }
  });
});
