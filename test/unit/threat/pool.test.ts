import { describe, expect, it } from 'vitest';
import { withoutLoaders } from '../../../src/threat/pool.js';

describe('worker options', () => {
  it('leave out the options that load modules, with their values, in both spellings', () => {
    const argv = ['--import', 'tsx', '--enable-source-maps', '--import=./trace.mjs', '-r', 'dotenv/config', '--conditions=development', '--require=x', '--loader', 'ts-node/esm', '--experimental-loader=y', '--no-warnings'];
    expect(withoutLoaders(argv)).toEqual(['--enable-source-maps', '--conditions=development', '--no-warnings']);
  });

  it('keep everything else as it was', () => {
    expect(withoutLoaders([])).toEqual([]);
    expect(withoutLoaders(['--stack-size=2000', '--trace-warnings'])).toEqual(['--stack-size=2000', '--trace-warnings']);
  });
});
