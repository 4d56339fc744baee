/**
 * What the package's own commands, server and exports ask of an engine
 * beside its API: records written for many rows without an error made for
 * each bad one (`iprecord enrich`, `POST /bulk`), the compiled dataset an
 * export walks, options that open the same data on a worker thread, and
 * the missing-lists warning a command gives at its start. Not exported by
 * the package.
 */

import { insideOf, type Engine } from './engine.js';
import type { AnswerOptions } from './answers.js';
import type { Dataset } from '../dataset/format.js';
import { threadOptions, type OpenOptions } from './options.js';
import type { ByteWriter } from '../text/writer.js';
import { prefetch } from '../dataset/prefetch.js';
import type { DiffSide } from '../evidence/diff.js';

export { GROUP as PREFETCH_GROUP } from '../dataset/prefetch.js';

/**
 * `lookupJson(ip, options)` (without `fields`) as byte text: its UTF-8
 * bytes, one per character (`record/bytes.ts`), written out with a plain
 * copy (`buffer.latin1Write`); for an address that has no record, null,
 * with the error's message in `failure.message` (no error made: bad rows
 * are many).
 */
export function recordBytes(engine: Engine, ip: string, options: AnswerOptions | undefined, failure: { message: string }): string | null {
  const inside = insideOf(engine);
  const snap = inside.live();
  const parsed = inside.checked(ip, failure);
  return parsed === null ? null : inside.answers.bytes(snap, parsed, options);
}

/**
 * Writes the UTF-8 bytes of `lookupJson(ip, options)` (without `fields`)
 * to `out`; for an address that has no record, writes nothing and answers
 * false, with the error's message in `failure.message`.
 */
export function writeRecord(
  engine: Engine,
  ip: string,
  options: AnswerOptions | undefined,
  failure: { message: string },
  out: ByteWriter,
): boolean {
  const inside = insideOf(engine);
  const snap = inside.live();
  const parsed = inside.checked(ip, failure);
  if (parsed === null) return false;
  inside.answers.write(snap, parsed, options, out);
  return true;
}

/**
 * A writer of chosen paths' CSV cells (as given, each after a comma) to
 * `out`; for an address that has no record, it writes nothing and answers
 * false, with the error's message in `failure.message`.
 * @throws InvalidFieldError naming a path the record has not
 */
export function csvCells(
  engine: Engine,
  paths: readonly string[],
  options?: AnswerOptions,
): (ip: string, out: ByteWriter, failure: { message: string }) => boolean {
  const inside = insideOf(engine);
  const write = inside.answers.cells(paths, options);
  return (ip, out, failure) => {
    const snap = inside.live();
    const parsed = inside.checked(ip, failure);
    if (parsed === null) return false;
    write(snap, parsed, out);
    return true;
  };
}

/**
 * Reads ahead what the records of `ips[from]` up to `ips[to]` (at most
 * `PREFETCH_GROUP`) are written from, so that writing them one after
 * another waits on memory once for the group rather than once an address
 * (`dataset/prefetch.ts`); `parts`: false where chosen fields are written
 * rather than whole records. What is not an address is passed over.
 */
export function prefetchRecords(engine: Engine, ips: readonly unknown[], from: number, to: number, parts = true): void {
  prefetch(insideOf(engine).live().dataset, ips, from, to, parts);
}

/**
 * The compiled dataset answering now (its typed arrays over the bytes the engine holds), for exports, which walk its ranges.
 * @throws ClosedError
 */
export function compiledDataset(engine: Engine): Dataset {
  return insideOf(engine).live().dataset;
}

/** An engine as one side of a diff (`evidence/diff.ts`): its current dataset, and its `select()` with errors as values. */
export function diffSide(engine: Engine): DiffSide {
  return { dataset: compiledDataset(engine), pick: (paths) => engine.select(paths).try };
}

/**
 * Options that open the engine's current data in a worker thread of this process, over its files (`share()`): for
 * exports, which write each family on a thread of its own.
 * @throws ClosedError
 */
export function workerOptions(engine: Engine): OpenOptions {
  return threadOptions(insideOf(engine).options, engine.share());
}

/** The warning of threat categories without a loaded source, now rather than at the first lookup (a command's start). */
export function warnMissingLists(engine: Engine): void {
  insideOf(engine).warnMissingLists();
}
