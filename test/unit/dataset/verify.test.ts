/**
 * `verifyDataset` (dataset/verify.ts), the whole-file check every open
 * runs: it passes what the compiler writes; a byte changed anywhere past
 * the header fails the checksum; and a file crafted with its checksum made
 * again (random bytes changed, then sealed) is either refused with a typed
 * error naming the defect or passes: never another error, never a hang.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { openSources } from '../../../src/compile/run.js';
import { InvalidDatasetError } from '../../../src/contract/errors.js';
import { CRC_AT, Dataset, HEADER, readCounts } from '../../../src/dataset/format.js';
import type { DatasetText } from '../../../src/dataset/text.js';
import { verifyDataset } from '../../../src/dataset/verify.js';
import { NET_TYPED_BY, NETWORK, registryWord } from '../../../src/dataset/layout.js';
import { REGISTRY_STATEMENTS } from '../../../src/dataset/registry-statements.js';
import { wholeFileCrc } from '../../../src/files/checksum.js';
import { specialTable } from '../../../src/ip/special.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const db = (name: string) => testDb(FIXTURES_DIR, name);
const good = compileDataset(
  openSources({
    geo: [db('GeoIP2-City-Fixture'), db('DBIP-City-Lite-Fixture')],
    asn: [db('GeoIP2-ISP-Fixture')],
    anonymous: [db('GeoIP2-Anonymous-IP-Fixture')],
  }),
  null,
  specialTable(),
  'fixtures',
).toBuffer();

/** The check as `Dataset.verify()` calls it, on bytes that open. */
function verify(buf: Buffer): void {
  const ds = new Dataset(buf, 'the file under test');
  const internal = ds as unknown as { text: DatasetText };
  verifyDataset(ds, { buf, counts: readCounts(buf), text: internal.text });
}

/** Opens and checks `buf`: 'passed', or the typed error's message. @throws anything that is not an InvalidDatasetError */
function outcome(buf: Buffer): string {
  try {
    verify(buf);
    return 'passed';
  } catch (e) {
    if (!(e instanceof InvalidDatasetError)) throw e;
    return e.message;
  }
}

describe('the whole-file check', () => {
  it('passes what the compiler writes', () => {
    expect(outcome(good)).toBe('passed');
  });

  it('fails the checksum on any byte changed past the header', () => {
    fc.assert(
      fc.property(fc.integer({ min: HEADER, max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const b = Buffer.from(good);
        b[at] ^= xor;
        expect(outcome(b)).toMatch(/checksum mismatch|not a valid iprecord dataset|past|add up/);
      }),
      { numRuns: 60 },
    );
  });

  it("refuses a network row typed by a registry's statement it does not know, and passes each it knows", () => {
    const typedAs = (word: number) => {
      const b = Buffer.from(good);
      const rows = new Dataset(b, 'the file under test').networks;
      expect(rows.buffer).toBe(b.buffer);
      rows[NET_TYPED_BY] = word;
      b.writeUInt32LE(wholeFileCrc(b, HEADER, CRC_AT), CRC_AT);
      return outcome(b);
    };
    expect(new Dataset(good, 'x').networks.length / NETWORK).toBeGreaterThan(0);
    for (let n = 0; n < REGISTRY_STATEMENTS.length; n++) expect(typedAs(registryWord(n))).toBe('passed');
    expect(typedAs(registryWord(REGISTRY_STATEMENTS.length))).toMatch(
      new RegExp(
        `networks row 0 says a registry's statement ${REGISTRY_STATEMENTS.length} decided its type, of ${REGISTRY_STATEMENTS.length}`,
      ),
    );
  });

  it('refuses a crafted file with a typed error, or passes it: nothing else', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.integer({ min: HEADER, max: good.length - 1 }), xor: fc.integer({ min: 1, max: 255 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        (changes) => {
          const b = Buffer.from(good);
          for (const { at, xor } of changes) b[at] ^= xor;
          b.writeUInt32LE(wholeFileCrc(b, HEADER, CRC_AT), CRC_AT);
          expect(typeof outcome(b)).toBe('string');
        },
      ),
      { numRuns: 200 },
    );
  });
});
