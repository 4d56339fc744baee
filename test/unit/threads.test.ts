import { describe, expect, it } from 'vitest';
import { threadOptions, withoutLoaders } from '../../src/threads.js';

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
    expect(threadOptions(argv, 'Initiated Worker with invalid execArgv flags: --max-old-space-size=2048, --title=x')).toEqual(['--enable-source-maps', '--conditions=dev']);
    // A message that names none of them: no options at all.
    expect(threadOptions(argv, 'something else')).toEqual([]);
    expect(threadOptions(argv, 'flags: --other')).toEqual([]);
  });
});
