import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { candidates, datasetKey, ensureDataset, readDatasetKey } from '../../../src/dataset/locate.js';
import { SMALL } from '../../helpers/maxmind.js';

describe('datasets of given databases', () => {
  it('compile once: the file carries the key of its sources, and a second open finds it without compiling', () => {
    const sources = { geo: [...SMALL.geo], asn: [...SMALL.asn], anonymous: [] };
    const path = ensureDataset(sources);
    expect(candidates(sources)).toContain(path);
    expect(readDatasetKey(path)).toBe(datasetKey(sources));
    const written = statSync(path).mtimeMs;
    expect(ensureDataset(sources)).toBe(path);
    expect(statSync(path).mtimeMs).toBe(written);
  });

  it('reads no key from what is not a dataset', () => {
    expect(readDatasetKey(SMALL.geo[0])).toBeNull();
    expect(readDatasetKey('/nonexistent/file.iprd')).toBeNull();
  });
});
