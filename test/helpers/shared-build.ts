/**
 * The shared feeds (helpers/feeds.ts) built once a run, for every suite
 * that reads them: a data directory holding their threat.bin and manifest,
 * no dataset. The first suite to ask builds it, under a lock, in the run's
 * cache folder (XDG_CACHE_HOME: helpers/environment.ts); the others wait for
 * it and read the same directory, and `open({ data })` over it finds the
 * merge with the default data that the first compiled in that cache. A
 * suite reads the directory and never writes to it.
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDataset, type FeedReport } from '../../src/compile/feeds/build.js';
import { sharedFeedConfig } from './feeds.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The directory of the shared feeds built, and what the build said of each feed. */
export async function sharedFeedsData(): Promise<{ readonly dir: string; readonly feeds: readonly FeedReport[] }> {
  const cache = process.env.XDG_CACHE_HOME;
  if (cache === undefined) throw new Error('XDG_CACHE_HOME is set by the test set-up (helpers/environment.ts)');
  const dir = join(cache, 'shared-feeds');
  const lock = join(cache, 'shared-feeds.lock');
  const done = join(dir, 'built.json');
  for (const deadline = Date.now() + 300_000; !existsSync(done); await new Promise((r) => setTimeout(r, 200))) {
    if (Date.now() > deadline) throw new Error(`the shared feeds were not built in ${dir} within 5 minutes`);
    try {
      mkdirSync(lock);
    } catch {
      // Another suite builds them; a lock whose process ended without building them is taken over.
      const pid = Number(readFileSync(join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      if (pid > 0 && !alive(pid)) rmSync(lock, { recursive: true, force: true });
      continue;
    }
    writeFileSync(join(lock, 'pid'), String(process.pid));
    try {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const result = await buildDataset(sharedFeedConfig(), dir, dir, { dataset: false });
      writeFileSync(done, JSON.stringify(result.feeds));
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return { dir, feeds: JSON.parse(readFileSync(done, 'utf8')) as FeedReport[] };
}
