import { describe, expect, it } from 'vitest';
import { missingAddon } from '../../src/native.js';

describe('why the memory-map addon is missing', () => {
  const notFound = { code: 'MODULE_NOT_FOUND', message: "Cannot find module '../build/Release/iprecord_mmap.node'" };

  it('says the install scripts did not run when the install script left no word', () => {
    expect(missingAddon(notFound, null)).toMatch(/^the install scripts did not run .*npm rebuild iprecord/);
  });

  it("gives the install script's reason when it could not build it", () => {
    expect(missingAddon(notFound, { built: false, reason: 'node-gyp not found' })).toBe('it was not built at install: node-gyp not found');
    expect(missingAddon(notFound, { built: true, reason: null })).toBe('it was built at install but is gone');
  });

  it("gives a load error's first line (an addon built for another Node)", () => {
    expect(missingAddon({ message: 'The module was compiled against a different Node.js version\nusing NODE_MODULE_VERSION 115' }, null)).toBe(
      'The module was compiled against a different Node.js version',
    );
  });
});
