/**
 * `misspeltCommand`: a first argument one edit from a command names that
 * command (or another as near); words near no command, and every form an
 * address takes, name none (they are looked up as addresses).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMMANDS, misspeltCommand } from '../../../src/cli/verbs.js';
import { canonicalIp } from '../../../src/ip/address.js';

/** A command with one letter dropped, doubled, changed or two swapped. */
const misspelt = fc
  .record({
    command: fc.constantFrom(...COMMANDS),
    at: fc.nat(),
    letter: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
    how: fc.constantFrom('drop', 'double', 'change', 'swap'),
  })
  .map(({ command, at, letter, how }) => {
    const i = at % command.length;
    const word =
      how === 'drop'
        ? command.slice(0, i) + command.slice(i + 1)
        : how === 'double'
          ? command.slice(0, i) + command[i] + command.slice(i)
          : how === 'change'
            ? command.slice(0, i) + letter + command.slice(i + 1)
            : command.slice(0, i) + command.slice(i + 1, i + 2) + command[i] + command.slice(i + 2);
    return { command, word };
  })
  .filter(({ command, word }) => word !== command && word.length > 1);

describe('a misspelt command', () => {
  it('one edit from a command names a command', () => {
    fc.assert(
      fc.property(misspelt, ({ word }) => {
        expect(COMMANDS).toContain(misspeltCommand(word));
      }),
    );
  });

  it('names none for a word near no command, or for what an address looks like', () => {
    for (const word of ['bleh', 'lookup', 'hello', 'localhost', 'example', 'cafe', 'beef', undefined])
      expect(misspeltCommand(word), word).toBeUndefined();
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        expect(canonicalIp(ip)).not.toBeNull();
        expect(misspeltCommand(ip)).toBeUndefined();
      }),
    );
  });
});
