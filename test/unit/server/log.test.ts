import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { AccessLog, MAX_QUEUED, redact } from '../../../src/server/log.js';
import { redactAsFirstWritten } from '../../helpers/redact-reference.js';

/** Every spelling of a key a log could hold: as sent, percent-encoded once or twice, `+` for space. */
function spellings(key: string): string[] {
  const once = encodeURIComponent(key);
  return [key, once, encodeURIComponent(once), key.replace(/ /g, '+')];
}

const keyChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!*()+: '.split(''));
const key = fc
  .array(keyChars, { minLength: 8, maxLength: 40 })
  .map((cs) => cs.join('').trim())
  .filter((k) => k.length >= 8);

/** Where a client may put a key: a path, any parameter name, a pair inside a value, a list. */
const placements: ((k: string) => string)[] = [
  (k) => `/${k}`,
  (k) => `/8.8.8.8/${k}`,
  (k) => `/8.8.8.8?k=${k}`,
  (k) => `/8.8.8.8?=api-key=${k}`,
  (k) => `/8.8.8.8?q=api-key%3D${k}`,
  (k) => `/8.8.8.8?q=api-key%253D${k}`,
  (k) => `/8.8.8.8?fields=ip,${k}`,
  (k) => `/8.8.8.8?x=1&y=${k}&z=2`,
  (k) => `/8.8.8.8?fields=ip?key=${k}`,
  (k) => `/${k}?fields=ip`,
];

describe('access log redaction', () => {
  it('never writes a key of the server, wherever and however it is sent', () => {
    fc.assert(
      fc.property(key, fc.nat(placements.length - 1), fc.constantFrom(0, 1, 2), (k, where, encode) => {
        const keys = new Set([k]);
        const sent = encode === 0 ? k : encode === 1 ? encodeURIComponent(k) : encodeURIComponent(encodeURIComponent(k));
        const line = redact(placements[where]!(sent), (text) => keys.has(text));
        for (const s of spellings(k)) expect(line).not.toContain(s);
        expect(line).toContain('[redacted]');
      }),
    );
  });

  it('answers as the redaction first written, for any target', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        'api-key',
        'API_KEY',
        'token',
        'fields',
        'ip,city',
        'k',
        'S3CRET-0001',
        'S3CRET%2D0001',
        'a+b',
        '%3D',
        '%253D',
        '%E2%82',
        '8.8.8.8',
        '2001:db8::1',
        '',
      ),
      fc.string({ maxLength: 6 }),
    );
    const sep = fc.constantFrom('=', '&', ';', '?', '/', ',', '');
    const target = fc.array(fc.tuple(piece, sep), { maxLength: 8 }).map((ps) => '/' + ps.map(([p, s]) => p + s).join(''));
    const keys = new Set(['S3CRET-0001', 'a b c d e f']);
    const isKey = (t: string) => keys.has(t);
    fc.assert(
      fc.property(target, (t) => {
        expect(redact(t, isKey)).toBe(redactAsFirstWritten(t, isKey));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps what is not a key, and the raw name of a key parameter', () => {
    const none = (): boolean => false;
    expect(redact('/8.8.8.8?fields=ip,city&callback=cb', none)).toBe('/8.8.8.8?fields=ip,city&callback=cb');
    expect(redact('/8.8.8.8?api%2Dkey=S3CRET-0001&x=1', none)).toBe('/8.8.8.8?api%2Dkey=[redacted]&x=1');
    expect(redact('/8.8.8.8?q=api-key%3DS3CRET-0001', none)).toBe('/8.8.8.8?q=api-key=[redacted]');
    expect(redact('/8.8.8.8?=token=S3CRET-0001', none)).toBe('/8.8.8.8?=token=[redacted]');
    expect(redact('/S3CRET-0001?fields=ip', (t) => t === 'S3CRET-0001')).toBe('/[redacted]?fields=ip');
    expect(redact('/8.8.8.8?k=S3CRET-0001', (t) => t === 'S3CRET-0001')).toBe('/8.8.8.8?k=[redacted]');
  });
});

describe('access log under a slow reader', () => {
  /** A stream whose reader has stopped: every write stays queued (its callback held) until `resume()`. */
  function stalled() {
    const held: (() => void)[] = [];
    let text = '';
    const stream = new Writable({
      highWaterMark: 1 << 16,
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        held.push(done);
      },
    });
    return {
      stream,
      text: () => text,
      resume: () => {
        while (held.length > 0) held.shift()!();
      },
    };
  }
  const line = (log: AccessLog, k: number) => log.request('192.0.2.1', '-', 'GET', `/8.8.8.${k % 256}`, '1.1', 200, 1100, 0.2);

  it('drops and counts lines past its bound of queued bytes, says how many once the reader keeps up, and writes all at the stop', () => {
    const out = stalled();
    const log = new AccessLog(out.stream);
    // About 70 bytes a line: three times the bound's worth of lines.
    const lines = Math.ceil((3 * MAX_QUEUED) / 70);
    for (let k = 0; k < lines; k++) line(log, k);
    log.flush();
    // Memory bounded: what the stream holds is the bound and a batch at most.
    expect(out.stream.writableLength).toBeLessThanOrEqual(MAX_QUEUED + 128 * 1024);
    expect(log.dropped).toBeGreaterThan(lines / 2);
    // The reader catches up: what the stream held reaches it; every line written or counted.
    out.resume();
    const written = out.text().split('\n').length - 1;
    expect(written + log.dropped).toBe(lines);
    // The next batch starts with the count of what was dropped.
    line(log, 1);
    log.flush();
    const after = out.text().split('\n').slice(written);
    expect(after[0]).toBe(
      `# iprecord: ${log.dropped} access log lines dropped before this one: the log's reader took them slower than requests came`,
    );
    expect(after[1]).toMatch(/^192\.0\.2\.1 - \[.*\] "GET \/8\.8\.8\.1 HTTP\/1\.1" 200 1100 0\.20ms$/);
    // Stalled again at the stop: what is held is written whatever the stream holds, nothing dropped.
    const dropped = log.dropped;
    for (let k = 0; k < lines; k++) line(log, k);
    log.flush(true);
    expect(log.dropped).toBeGreaterThan(dropped);
    out.resume();
    const total = out.text().split('\n').length - 1;
    // Every line is written or counted; each count said once.
    const notes = out.text().match(/^# iprecord: (\d+) access log lines dropped/gm) ?? [];
    const said = [...out.text().matchAll(/^# iprecord: (\d+) access log lines dropped/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(said).toBe(log.dropped);
    expect(total - notes.length + log.dropped).toBe(2 * lines + 1);
  });

  it('a stream that fails fails the log, not its caller: said once, its lines dropped and counted from then on', async () => {
    const warned: string[] = [];
    const onWarning = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_ACCESS_LOG' && warned.push(w.message));
    process.on('warning', onWarning);
    try {
      const log = new AccessLog(new Writable({ write: (_c, _e, done) => done(new Error('ENOSPC: no space left on device, write')) }));
      for (let k = 0; k < 10; k++) line(log, k);
      log.flush();
      // The stream's error comes on a later turn; then, lines are counted rather than written.
      await new Promise((r) => setTimeout(r, 20));
      for (let k = 0; k < 25; k++) line(log, k);
      log.flush();
      for (let k = 0; k < 5; k++) line(log, k);
      log.flush(true);
      await new Promise((r) => setImmediate(r));
      expect(log.dropped).toBe(30);
      expect(warned).toEqual([
        'the access log cannot be written (ENOSPC: no space left on device, write): its lines are dropped from now on, and counted',
      ]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('drops nothing when its reader keeps up', () => {
    let bytes = 0;
    const log = new AccessLog(
      new Writable({
        write: (c: Buffer, _e, done) => {
          bytes += c.length;
          done();
        },
      }),
    );
    for (let k = 0; k < 200_000; k++) line(log, k);
    log.flush(true);
    expect(log.dropped).toBe(0);
    expect(bytes).toBeGreaterThan(200_000 * 60);
  });
});
