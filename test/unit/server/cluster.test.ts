import { describe, expect, it } from 'vitest';
import { workerExecArgv } from '../../../src/server/cluster.js';

describe('workerExecArgv', () => {
  it('adds a small young generation to the primary’s flags', () => {
    expect(workerExecArgv(['--enable-source-maps'], '')).toEqual(['--enable-source-maps', '--max-semi-space-size=2']);
  });

  it('keeps a size the user set in the flags or NODE_OPTIONS', () => {
    expect(workerExecArgv(['--max-semi-space-size=16'], '')).toEqual(['--max-semi-space-size=16']);
    expect(workerExecArgv([], '--max_semi_space_size=8')).toEqual([]);
  });
});
