/**
 * Compiling a dataset from its sources into its place: what the compiler
 * process (`main.ts`) runs. Build time only.
 */

import { closeSync, existsSync, linkSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { defaultAsnSources, defaultGeoPaths } from '../dataset/defaults.js';
import { candidates, datasetKey, readDatasetKey, type DatasetSources } from '../dataset/locate.js';
import { InvalidDatasetError } from '../contract/errors.js';
import { specialTable } from '../ip/special.js';
import { compileDataset, type CompiledDataset, type Progress } from './dataset.js';
import { mergeThreat } from './merge.js';
import { Sources, type SourceFile } from './sources.js';
import { ThreatTree } from './feeds/tree.js';
import { Dataset } from '../dataset/format.js';
import { MAX_TEXT_BYTES, textCuts } from './geo/adapters/values.js';
import { writeSeal } from '../dataset/seal.js';
import { openRegular, readFileRange } from '../files/read.js';
import { removeLeftTemps } from '../files/write.js';

/** Seals a dataset just written from a buffer that passed `verify()`. */
function sealWritten(path: string): void {
  const { fd, stat } = openRegular(path);
  closeSync(fd);
  writeSeal(path, stat);
}

/** The sources opened for the compiler (the default data where none is given). */
export function openSources(sources: DatasetSources): Sources {
  let asn: readonly SourceFile[];
  if (sources.asn !== null) asn = sources.asn;
  else {
    const { files, source } = defaultAsnSources();
    asn = [{ path: source, csv: files }];
  }
  return new Sources({ geo: sources.geo ?? defaultGeoPaths(), asn, anonymous: sources.anonymous, networks: sources.networks ?? [] });
}

/**
 * Compiles `sources` and writes the dataset to the first of `places` that
 * can be written; its path. With threat feeds (`sources.threat`, a
 * threat.bin), the dataset of the databases alone (the base: found in its
 * place, else compiled and written there) gets the feeds merged in
 * (`merge.ts`), so that a build whose databases did not change takes
 * seconds. `say` is told what happens.
 * @throws InvalidDatasetError when a source cannot be read or no place can be written
 */
export function compileTo(
  sources: DatasetSources,
  key: string,
  places: readonly string[],
  say: (line: string) => void,
  progress?: Progress,
): string {
  const started = Date.now();
  if (sources.threat !== undefined) {
    const { threat: threatPath, ...databases } = sources;
    const baseKey = datasetKey(databases);
    const basePlaces = candidates(databases);
    const found = basePlaces.find((p) => existsSync(p) && readDatasetKey(p) === baseKey);
    const basePath = found ?? compileTo(databases, baseKey, basePlaces, say, progress);
    progress?.('merging the threat feeds', 0.99);
    return place(
      // A FIFO or a device named as threat.bin is refused, not waited on.
      () =>
        mergeThreat(
          readFileRange(basePath, Buffer.allocUnsafe),
          new ThreatTree(readFileRange(threatPath, Buffer.allocUnsafe), threatPath),
          key,
        ),
      places,
      say,
      started,
      'the threat feeds merged',
      key,
    );
  }
  const what = sources.geo === null && sources.asn === null ? 'the default data' : 'the databases given';
  say(`compiling ${what} into one dataset (once; the default data takes about 25 s)...`);
  progress?.('reading the sources', 0);
  return place(
    () => {
      const compiled = compileDataset(openSources(sources), null, specialTable(), key, new Date(), progress);
      if (textCuts.count > 0)
        say(
          `${textCuts.count} source strings longer than ${MAX_TEXT_BYTES} bytes were cut to ${MAX_TEXT_BYTES} (the first: ${JSON.stringify(textCuts.first + '...')})`,
        );
      return compiled;
    },
    places,
    say,
    started,
    'compiled',
    key,
  );
}

/**
 * Makes a dataset and writes it beside the first of `places` that can be
 * written, checks the file as written (what every open checks; the seal
 * spares the first open the same work), and renames it into place; its
 * path. What `make` built is let go before the file is read back (the
 * compiler process runs with `--expose-gc`), so the peak is the larger of
 * the two, not their sum.
 * @throws InvalidDatasetError when the file fails its check or no place can be written
 */
function place(
  make: () => CompiledDataset,
  places: readonly string[],
  say: (line: string) => void,
  started: number,
  what: string,
  key: string,
): string {
  const written = writeFirst(make, places);
  (globalThis as { gc?: () => void }).gc?.();
  let theirs = false;
  try {
    new Dataset(readFileRange(written.tmp, Buffer.allocUnsafe), 'the compiled dataset').verify();
    theirs = !moveIntoPlace(written.tmp, written.path, key);
  } catch (e) {
    rmSync(written.tmp, { force: true });
    throw e;
  }
  if (theirs) {
    say(`${what}: the same dataset was put in ${written.path} by another process meanwhile, which is kept`);
    return written.path;
  }
  sealWritten(written.path);
  say(
    `${what}: ${written.ranges} ranges into ${written.path} (${(written.size / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return written.path;
}

/**
 * Puts the file written (`tmp`) in place, unless a process that compiled
 * the same sources at the same time put its own there first: that one is
 * kept (its process may answer from it, and an export it started opens it
 * again by its path on worker threads) and `tmp` removed; false then. A
 * file there of other sources is replaced.
 */
function moveIntoPlace(tmp: string, path: string, key: string): boolean {
  try {
    // A link is made only where no file is: the check and the move are one step.
    linkSync(tmp, path);
    rmSync(tmp, { force: true });
    return true;
  } catch (e) {
    // A file system without hard links: the rename.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
      renameSync(tmp, path);
      return true;
    }
  }
  if (readDatasetKey(path) === key) {
    rmSync(tmp, { force: true });
    return false;
  }
  renameSync(tmp, path);
  return true;
}

/** Makes a dataset and writes it to a temporary file beside the first of `places` that can be written. */
function writeFirst(make: () => CompiledDataset, places: readonly string[]): { path: string; tmp: string; size: number; ranges: number } {
  const compiled = make();
  let lastError: unknown;
  for (const path of places) {
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(path), { recursive: true });
      // A compile killed outright before this one left its temporary file: it goes now.
      removeLeftTemps(path);
      const size = compiled.writeFile(tmp);
      return { path, tmp, size, ranges: compiled.ranges.v4 + compiled.ranges.v6 };
    } catch (e) {
      rmSync(tmp, { force: true });
      lastError = e;
    }
  }
  throw new InvalidDatasetError(`Cannot write the compiled dataset to ${places.join(' or ')}.`, { cause: lastError });
}
