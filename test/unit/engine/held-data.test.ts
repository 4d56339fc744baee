/**
 * `engine/held-data.ts`, over a dataset file of the fixtures: reloads run
 * one after another (a failed one does not stop the next), each swap says
 * whether the dataset is another; a file replaced by a bad one keeps the
 * answers from the last good data; a mapped file damaged in place stops
 * them (lookups throw the damage) until good data is loaded; after
 * `close()` nothing answers.
 */

import { closeSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { openSources } from '../../../src/compile/run.js';
import { ClosedError, InvalidDatasetError } from '../../../src/contract/errors.js';
import { HeldData } from '../../../src/engine/held-data.js';
import { resolveOptions } from '../../../src/engine/options.js';
import { memoryState, Snapshot } from '../../../src/engine/snapshot.js';
import { specialTable } from '../../../src/ip/special.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const db = (name: string) => testDb(FIXTURES_DIR, name);
const compiled = (anonymous: boolean) =>
  compileDataset(
    openSources({
      geo: [db('GeoIP2-City-Fixture')],
      asn: [db('GeoIP2-ISP-Fixture')],
      anonymous: anonymous ? [db('GeoIP2-Anonymous-IP-Fixture')] : [],
    }),
    null,
    specialTable(),
    'fixtures',
  ).toBuffer();
const ONE = compiled(false);
const TWO = compiled(true);
const dir = mkdtempSync(join(tmpdir(), 'iprecord-held-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A holder over a dataset file of its own, and what it told its engine. */
async function held(name: string, memory: 'mmap' | 'read') {
  const path = join(dir, name);
  writeFileSync(path, ONE);
  const options = resolveOptions({ dataset: path, memory });
  const told: string[] = [];
  const data = new HeldData(await Snapshot.open(options), options, {
    swapped: (_next, other) => told.push(other ? 'another dataset' : 'the same dataset'),
    stopped: (damage) => told.push(`stopped: ${damage.message}`),
  });
  return { path, data, told };
}

/** Writes `bytes` over the file's own (the same inode: written in place). */
function inPlace(path: string, bytes: Buffer, at = 0): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

describe('the data an engine holds', () => {
  it('reloads one after another, a failed reload not stopping the next, each swap saying whether the dataset is another', async () => {
    const { path, data, told } = await held('chain', 'read');
    const before = data.live();
    // A file put in its place (a rename) that is not a dataset: the reload fails, the answers stay.
    writeFileSync(`${path}.new`, 'not a dataset');
    renameSync(`${path}.new`, path);
    const failed = data.reload();
    writeFileSync(`${path}.new`, TWO);
    const good = (async () => {
      await failed.catch(() => undefined);
      renameSync(`${path}.new`, path);
      return data.reload();
    })();
    await expect(failed).rejects.toThrow(InvalidDatasetError);
    expect(data.live()).toBe(before);
    await good;
    expect(told).toEqual(['another dataset']);
    expect(data.live()).not.toBe(before);
    // Nothing changed: the same bytes are kept.
    await data.reload();
    expect(told).toEqual(['another dataset', 'the same dataset']);
    expect(await data.checkData()).toBe('unchanged');
  });

  it.skipIf(memoryState(resolveOptions({})).mode !== 'mmap')(
    'stops answering when a mapped file is damaged in place, until good data is loaded',
    async () => {
      const { path, data, told } = await held('mapped', 'mmap');
      expect(data.live().mapped).toBe(true);
      // One byte of the records changed where the process reads the file's pages.
      const at = ONE.length - 100;
      inPlace(path, Buffer.of(ONE[at] ^ 0xff), at);
      expect(await data.checkData()).toBe('damaged');
      expect(told).toEqual([expect.stringMatching(/^stopped: .+ was written while this process answered from its pages/)]);
      expect(data.damage).toBeInstanceOf(InvalidDatasetError);
      expect(() => data.live()).toThrow(data.damage!);
      // Good bytes written back in place: answered again.
      inPlace(path, ONE);
      await data.reload();
      expect(data.damage).toBeNull();
      expect(data.live().dataset.name).toBe(path);
      expect(told.at(-1)).toMatch(/dataset$/);
    },
  );

  it('answers nothing once closed', async () => {
    const { data } = await held('closed', 'read');
    data.close();
    expect(data.closed).toBe(true);
    expect(() => data.live()).toThrow(ClosedError);
    await expect(data.reload()).rejects.toThrow(ClosedError);
    await expect(data.checkData()).rejects.toThrow(ClosedError);
  });
});
