/**
 * The two platform modules give the same answers: `bytes.ts` (Buffer's
 * natives, what Node, Bun and Deno run) and `bytes-web.ts` (TextDecoder,
 * TextEncoder and loops, what `iprecord/bytes` is built with), over random
 * text of every plane, lone surrogates included, and random bytes.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as node from '../../../src/platform/bytes.js';
import * as web from '../../../src/platform/bytes-web.js';
import { seed } from '../../helpers/env.js';

const SEED = seed();
/** Text of any code units: ASCII, two- and three-byte characters, pairs and lone surrogates. */
const text = fc.string({ unit: 'binary', maxLength: 200 });
const latin1 = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 5000 });
const bytes = fc.uint8Array({ maxLength: 10_000 });

describe('bytes.ts and bytes-web.ts', () => {
  it('decode the same bytes to the same text, as Latin-1 and as UTF-8 (invalid UTF-8 replaced alike), at any slice', () => {
    fc.assert(
      fc.property(bytes, fc.nat(), fc.nat(), (b, x, y) => {
        const from = b.length === 0 ? 0 : x % b.length;
        const to = from + (b.length === from ? 0 : y % (b.length - from + 1));
        expect(web.latin1Text(b, from, to)).toBe(node.latin1Text(b, from, to));
        expect(web.utf8Text(b, from, to)).toBe(node.utf8Text(b, from, to));
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it('encode the same text to the same bytes and lengths, whole characters only where the room ends', () => {
    fc.assert(
      fc.property(text, fc.nat(40), fc.nat(800), (s, at, room) => {
        expect(web.utf8Length(s)).toBe(node.utf8Length(s));
        expect(Buffer.compare(web.utf8Bytes(s), node.utf8Bytes(s))).toBe(0);
        const a = new Uint8Array(at + room);
        const b = new Uint8Array(at + room);
        expect(web.writeUtf8(a, s, at)).toBe(node.writeUtf8(b, s, at));
        expect(Buffer.compare(a, b)).toBe(0);
      }),
      { seed: SEED, numRuns: 800 },
    );
    fc.assert(
      fc.property(latin1, fc.nat(40), fc.nat(6000), (s, at, room) => {
        const a = new Uint8Array(at + room);
        const b = new Uint8Array(at + room);
        expect(web.writeLatin1(a, s, at)).toBe(node.writeLatin1(b, s, at));
        expect(Buffer.compare(a, b)).toBe(0);
        expect(web.latin1Text(a, at, at + Math.min(room, s.length))).toBe(s.slice(0, room));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('copy the same bytes, as far as either end', () => {
    fc.assert(
      fc.property(bytes, fc.nat(), fc.nat(), fc.nat(300), fc.nat(2000), (src, x, y, at, room) => {
        const from = src.length === 0 ? 0 : x % src.length;
        const to = from + (src.length === from ? 0 : y % (src.length - from + 1));
        const a = new Uint8Array(at + room);
        const b = new Uint8Array(at + room);
        expect(web.copyBytes(src, a, at, from, to)).toBe(node.copyBytes(src, b, at, from, to));
        expect(Buffer.compare(a, b)).toBe(0);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("compute zlib's CRC-32, continued from any value", () => {
    fc.assert(
      fc.property(bytes, fc.integer({ min: 0, max: 0xffffffff }), (b, crc) => {
        expect(web.crc32(b)).toBe(node.crc32(b));
        expect(web.crc32(b, crc)).toBe(node.crc32(b, crc));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('make bytes of the length asked', () => {
    for (const n of [0, 1, 4095, 65_536]) expect([web.allocBytes(n).length, node.allocBytes(n).length]).toEqual([n, n]);
  });
});
