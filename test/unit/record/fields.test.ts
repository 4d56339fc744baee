import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELD_NAMES, parseFields } from '../../../src/record/fields.js';
import { InvalidFieldError } from '../../../src/contract/errors.js';
import { seed } from '../../helpers/env.js';

/** A name as a caller may write it: a field, with spaces around, blank, or repeated. */
const name = fc.oneof(
  fc.constantFrom(...FIELD_NAMES),
  fc.constantFrom(...FIELD_NAMES).map((n) => ` ${n} `),
  fc.constant(''),
  fc.constant('  '),
);

describe('fields', () => {
  it('a list and its text choose the same fields, as the same list (compiled once for both)', () => {
    fc.assert(
      fc.property(fc.array(name, { maxLength: 8 }), (names) => {
        const fromList = parseFields(names);
        const fromText = parseFields(names.join(','));
        expect(fromList).toBe(fromText);
        expect(parseFields([...names])).toBe(fromList);
      }),
      { seed: seed(), numRuns: 500 },
    );
  });

  it('a list changed by its caller after a lookup is read again, not taken for the list it was', () => {
    const names = ['ip', 'city'];
    expect(parseFields(names)).toEqual(['ip', 'city']);
    names[1] = 'asn';
    expect(parseFields(names)).toEqual(['ip', 'asn']);
    names.push('city');
    expect(parseFields(names)).toEqual(['ip', 'asn', 'city']);
  });

  it('a list entry that is not a field name, or holds a comma, is refused naming it, as before', () => {
    expect(() => parseFields(['ip', 'nope'])).toThrow(InvalidFieldError);
    expect(() => parseFields(['ip,city'])).toThrow(/ip,city/);
    expect(() => parseFields(['ip', 7 as unknown as string])).toThrow(InvalidFieldError);
    expect(parseFields([])).toBeNull();
  });
});
