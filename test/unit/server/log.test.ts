import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact } from '../../../src/server/log.js';

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
