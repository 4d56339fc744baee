import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENTRIES } from '../../../tsup.config.js';
import { BUILT_ENTRIES, ownEntry, threadOptions, withoutLoaders } from '../../../src/platform/threads.js';
import { ROOT } from '../../helpers/env.js';

describe('worker options', () => {
  it('leave out the options that load modules, with their values, in both spellings', () => {
    const argv = [
      '--import',
      'tsx',
      '--enable-source-maps',
      '--import=./trace.mjs',
      '-r',
      'dotenv/config',
      '--conditions=development',
      '--require=x',
      '--loader',
      'ts-node/esm',
      '--experimental-loader=y',
      '--no-warnings',
    ];
    expect(withoutLoaders(argv)).toEqual(['--enable-source-maps', '--conditions=development', '--no-warnings']);
  });

  it('keep everything else as it was', () => {
    expect(withoutLoaders([])).toEqual([]);
    expect(withoutLoaders(['--stack-size=2000', '--trace-warnings'])).toEqual(['--stack-size=2000', '--trace-warnings']);
  });

  it('leave out, after Node refused them, the options a thread cannot take', () => {
    const argv = ['--max-old-space-size=2048', '--enable-source-maps', '--title=x', '--conditions=dev'];
    expect(threadOptions(argv, 'Initiated Worker with invalid execArgv flags: --max-old-space-size=2048, --title=x')).toEqual([
      '--enable-source-maps',
      '--conditions=dev',
    ]);
    // A message that names none of them: no options at all.
    expect(threadOptions(argv, 'something else')).toEqual([]);
    expect(threadOptions(argv, 'flags: --other')).toEqual([]);
  });
});

describe('ownEntry', () => {
  it('is <name>.js beside a built module, the source beside a TypeScript one, or <name>.js in $IPRECORD_BUILT_ENTRIES', () => {
    const saved = process.env[BUILT_ENTRIES];
    try {
      delete process.env[BUILT_ENTRIES];
      expect(ownEntry('file:///pkg/dist/chunk-AB12.js', './worker.ts', 'threat-worker').href).toBe('file:///pkg/dist/threat-worker.js');
      expect(ownEntry('file:///pkg/src/compile/feeds/build.ts', './worker.ts', 'threat-worker').href).toBe(
        'file:///pkg/src/compile/feeds/worker.ts',
      );
      process.env[BUILT_ENTRIES] = '/pkg/.test-dist-x';
      expect(ownEntry('file:///pkg/src/compile/feeds/build.ts', './worker.ts', 'threat-worker').href).toBe(
        pathToFileURL('/pkg/.test-dist-x/threat-worker.js').href,
      );
      // A built module's entry is beside it whatever the variable says.
      expect(ownEntry('file:///pkg/dist/chunk-AB12.js', './worker.ts', 'threat-worker').href).toBe('file:///pkg/dist/threat-worker.js');
    } finally {
      if (saved === undefined) delete process.env[BUILT_ENTRIES];
      else process.env[BUILT_ENTRIES] = saved;
    }
  });

  it('names, at every call in src/, an entry that tsup.config.ts builds from that same source', () => {
    const entries: Record<string, string> = ENTRIES;
    const calls: [string, string][] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && !path.endsWith('threads.ts'))
          for (const m of readFileSync(path, 'utf8').matchAll(/ownEntry\(import\.meta\.url, '([^']+)', '([^']+)'\)/g))
            calls.push([m[2], relative(ROOT, fileURLToPath(new URL(m[1], pathToFileURL(path))))]);
      }
    };
    walk(join(ROOT, 'src'));
    // The compiler process, the dataset check, the feed builder, enrich, Parquet, range CSVs and shared counts.
    expect(calls.length).toBe(7);
    for (const [name, source] of calls) expect([name, entries[name]]).toEqual([name, source]);
  });
});
