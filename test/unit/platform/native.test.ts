import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryMapper, missingAddon, type Mapper } from '../../../src/platform/native.js';

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
    expect(
      missingAddon({ message: 'The module was compiled against a different Node.js version\nusing NODE_MODULE_VERSION 115' }, null),
    ).toBe('The module was compiled against a different Node.js version');
  });
});

describe('the memory map', () => {
  const mapper = memoryMapper();
  if (!('map' in mapper) && process.env.IPRECORD_REQUIRE_MMAP === '1') throw new Error('IPRECORD_REQUIRE_MMAP=1: memory maps are required');
  const thp = '/sys/kernel/mm/transparent_hugepage/enabled';
  // Linux with transparent huge pages (its flags in smaps), the addon built.
  const why = !('map' in mapper)
    ? mapper.reason
    : !existsSync(thp) || readFileSync(thp, 'utf8').includes('[never]')
      ? 'the kernel has no transparent huge pages'
      : null;
  if (why !== null) console.warn(`skipping the huge-page advice test: ${why}`);

  it.skipIf(why !== null)(
    'maps a file of 2 MiB or more asking for huge pages, a smaller one not (the flags of its mapping in /proc/self/smaps)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'iprecord-map-'));
      try {
        const flags = (file: string) => {
          const mapping = readFileSync('/proc/self/smaps', 'utf8')
            .split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)
            .find((m) => m.split('\n')[0].endsWith(file));
          return /^VmFlags:(.*)$/m
            .exec(mapping ?? '')?.[1]
            .trim()
            .split(' ');
        };
        const sizes = { big: 4 << 20, small: (2 << 20) - 8 };
        const maps = Object.entries(sizes).map(([name, size]) => {
          const file = join(dir, `${name}.bin`);
          writeFileSync(file, Buffer.alloc(size, 1));
          return { file, size, buffer: (mapper as Mapper).map(file) };
        });
        for (const { buffer, size } of maps) expect(buffer.length).toBe(size);
        expect(flags(maps[0].file)).toContain('hg');
        expect(flags(maps[1].file)).toEqual(expect.arrayContaining(['rd']));
        expect(flags(maps[1].file)).not.toContain('hg');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
