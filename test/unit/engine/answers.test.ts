/**
 * `engine/answers.ts`: the four ways a record is answered (an object, JSON
 * text, byte text, bytes into the caller's buffer) say the same, for random
 * addresses of both families; `count` is the caller's text or the engine's
 * own lookups; `basicThreat` leaves `is_vpn` and `scores` out of each form;
 * the threat object, a selection and the CSV cells answer what the record
 * holds.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctAddresses } from '../../../bench/mix.js';
import { Answers } from '../../../src/engine/answers.js';
import { resolveOptions } from '../../../src/engine/options.js';
import { Snapshot } from '../../../src/engine/snapshot.js';
import { DEFAULT_FLAG_BASE_URL } from '../../../src/contract/template.js';
import { ByteWriter } from '../../../src/text/writer.js';
import { ALL_PATHS, at } from '../../helpers/reading.js';
import { seed } from '../../helpers/env.js';

const snap = Snapshot.openSync(resolveOptions({}));
const answers = new Answers(DEFAULT_FLAG_BASE_URL);
const SEED = seed();
const addresses = [...distinctAddresses(500, SEED + 4, 4), ...distinctAddresses(500, SEED + 5, 6)];
const parsed = (ip: string) => answers.ip.address(ip);
/** JSON text with the clock's moment blanked (each answer reads the clock). */
const timeless = (json: string) => json.replace(/"current_time":"[^"]*"/, '"current_time":""');
const options = { count: '7' };

describe('answers of a record', () => {
  it('as an object, JSON text, byte text and bytes into a buffer say the same', () => {
    fc.assert(
      fc.property(fc.constantFrom(...addresses), fc.nat(64), fc.boolean(), (ip, offset, basic) => {
        const o = { ...options, basicThreat: basic };
        const object = answers.record(snap, parsed(ip), null, o);
        const json = answers.json(snap, parsed(ip), o);
        expect(timeless(json)).toBe(timeless(JSON.stringify(object)));
        const bytes = Buffer.from(answers.bytes(snap, parsed(ip), o), 'latin1');
        expect(timeless(bytes.toString('utf8'))).toBe(timeless(json));
        const n = bytes.length;
        const target = Buffer.alloc(offset + n, 0xee);
        expect(answers.writeInto(snap, parsed(ip), o, target, offset)).toBe(n);
        expect(target.subarray(0, offset).every((b) => b === 0xee)).toBe(true);
        expect(timeless(target.toString('utf8', offset))).toBe(timeless(json));
        // Short of room by a byte: the length it needs, more than the room.
        expect(answers.writeInto(snap, parsed(ip), o, Buffer.alloc(offset + n - 1), offset)).toBeGreaterThan(n - 1);
        expect('is_vpn' in object.threat).toBe(!basic);
        expect('scores' in object.threat).toBe(!basic);
      }),
    );
  });

  it("counts the engine's own lookups where no count is given, and answers the caller's text where one is", () => {
    const ip = addresses[0];
    for (const answer of [
      () => answers.record(snap, parsed(ip), null, undefined).count,
      () => JSON.parse(answers.json(snap, parsed(ip), undefined)).count as string,
      () => answers.threatOf(snap, parsed(ip), false) && answers.counter.peek(Date.now()),
    ]) {
      const before = answers.counter.live(Date.now());
      const count = answer();
      // One lookup more in the window; the text is the count as of the minute's start (the service's rule).
      expect(answers.counter.live(Date.now())).toBe(before + 1);
      expect(Number(count)).toBeLessThanOrEqual(before + 1);
      expect(count).toMatch(/^\d+$/);
    }
    expect(answers.record(snap, parsed(ip), null, { count: '123' }).count).toBe('123');
    expect(JSON.parse(answers.json(snap, parsed(ip), { count: '123' })).count).toBe('123');
  });

  it('answers the threat object, a selection and the CSV cells as the record holds them', () => {
    fc.assert(
      fc.property(fc.constantFrom(...addresses), fc.array(fc.constantFrom(...ALL_PATHS), { minLength: 1, maxLength: 8 }), (ip, paths) => {
        const record = answers.record(snap, parsed(ip), null, options);
        expect(answers.threatOf(snap, parsed(ip), false)).toEqual(record.threat);
        const chosen = answers.selection(paths, options)(snap, parsed(ip)) as Record<string, unknown>;
        for (const p of new Set(paths)) if (!p.startsWith('time_zone')) expect(chosen[p], p).toEqual(at(record, p));
        const out = new ByteWriter(64);
        answers.cells(['country_code', 'asn.asn'], options)(snap, parsed(ip), out);
        expect(out.toString()).toBe(`,${record.country_code ?? ''},${record.asn?.asn ?? ''}`);
      }),
    );
  });

  it('answers fields alone where they are asked for, as the whole record has them', () => {
    const ip = addresses[1];
    const whole = answers.record(snap, parsed(ip), null, options);
    const some = answers.record(snap, parsed(ip), ['ip', 'country_code', 'asn'], options);
    expect(some).toEqual({ ip: whole.ip, country_code: whole.country_code, asn: whole.asn });
  });
});
