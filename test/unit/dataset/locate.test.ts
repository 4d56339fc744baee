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

  it('feeds merged in: one place per set of databases, whichever threat.bin (builds do not pile up), apart from the databases alone; the key tells them apart', () => {
    const sources = { geo: [...SMALL.geo], asn: [...SMALL.asn], anonymous: [] };
    const [a, b] = [
      { ...sources, threat: SMALL.geo[0] },
      { ...sources, threat: SMALL.asn[0] },
    ];
    expect(candidates(a)).toEqual(candidates(b));
    expect(candidates(a)).not.toEqual(candidates(sources));
    expect(datasetKey(a)).not.toBe(datasetKey(b));
  });

  it('reads no key from what is not a dataset', () => {
    expect(readDatasetKey(SMALL.geo[0])).toBeNull();
    expect(readDatasetKey('/nonexistent/file.iprd')).toBeNull();
  });
});
