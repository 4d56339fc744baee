/** The arguments `build` and `update` share: the dataset directory and the feed configuration. */

import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { commandOptions, options } from './args.js';
import { userDataDir } from '../dataset/store.js';
import { defaultThreatConfig, readThreatConfig, type ThreatConfig } from '../compile/feeds/config.js';

/**
 * Arguments of `build` and `update`: the dataset directory (`dirOption`)
 * and the feed configuration, read. A number is the exit code to return.
 */
export function feedCommand(
  command: string,
  usage: string,
  argv: string[],
  dirOption: 'out' | 'data',
): { dir: string; config: ThreatConfig } | number {
  const parsed = commandOptions(command, usage, options(argv, ['config', dirOption]));
  if (typeof parsed === 'number') return parsed;
  const { o } = parsed;
  try {
    const dir = resolve(o[dirOption] ?? userDataDir());
    // A directory made where there is none (and its parents); one that is something else is said, not mkdir's ENOTDIR.
    if (existsSync(dir) && !statSync(dir).isDirectory())
      throw new Error(`--${dirOption} ${dir} is not a directory (a dataset directory is made where there is none)`);
    return {
      dir,
      config: o.config === undefined ? defaultThreatConfig() : readThreatConfig(o.config),
    };
  } catch (e) {
    process.stderr.write(`iprecord ${command}: ${(e as Error).message}\n`);
    return 2;
  }
}
