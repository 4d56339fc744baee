/**
 * `atMostFourACore` (`enrich --threads`, `serve --workers`): what is asked
 * for up to four a core of this machine, the bound past it, said as a
 * warning where the caller says so (a cluster's primary, not its workers).
 */

import { availableParallelism } from 'node:os';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { atMostFourACore } from '../../../src/cli/args.js';

const warned: string[] = [];
const onWarning = (w: Error & { code?: string }) => void (w.code === 'IPRECORD_WORKERS' && warned.push(w.message));
beforeEach(() => {
  warned.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => void process.off('warning', onWarning));
const turn = () => new Promise((r) => setImmediate(r));

describe('atMostFourACore', () => {
  const most = 4 * availableParallelism();

  it('gives what is asked up to four a core, the bound past it, and says only the second', async () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        (n) => atMostFourACore(n, '--threads', 'worker threads', false) === Math.min(n, most),
      ),
    );
    expect(atMostFourACore(most, '--threads', 'worker threads')).toBe(most);
    await turn();
    expect(warned).toEqual([]);
    expect(atMostFourACore(most + 1, '--workers', 'server processes')).toBe(most);
    await turn();
    expect(warned).toEqual([
      `--workers ${most + 1} is more than 4 a core of this machine's ${availableParallelism()}: ${most} server processes`,
    ]);
  });
});
