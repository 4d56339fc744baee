/**
 * Where a Parquet export's writer (hyparquet-writer's `ByteWriter`) puts its
 * bytes: a file descriptor the export's main thread opened, written a
 * megabyte at a time at its own position. hyparquet-writer's `fileWriter`
 * opens the file by name for every megabyte it appends, creating it when it
 * is not there: a worker thread still writing when a signal's removal of
 * the temporary files had run made one again, and the exit left it behind
 * (a parquet export stopped by SIGTERM left `all.ipv4.parquet.<pid>.tmp`).
 * Through a descriptor, what is written after the removal goes to the
 * removed file, and no thread creates one: the main thread opens the files
 * before its threads start and closes them once they have stopped.
 */

import { writeSync } from 'node:fs';
import { ByteWriter } from 'hyparquet-writer';

/** Bytes held before they are written. */
const CHUNK = 1 << 20;

/** A writer of the file open as `fd` from its start; `finish()` writes what it holds (the descriptor stays open). */
export function descriptorWriter(fd: number): ByteWriter {
  const writer = new ByteWriter();
  let position = 0;
  const flush = () => {
    for (let at = 0; at < writer.index;)
      at += writeSync(fd, new Uint8Array(writer.buffer, at, writer.index - at), 0, writer.index - at, position + at);
    position += writer.index;
    writer.index = 0;
  };
  const grow = writer.ensure.bind(writer);
  writer.ensure = (size: number) => {
    if (writer.index > CHUNK) flush();
    grow(size);
  };
  writer.finish = flush;
  const none = (): never => {
    throw new Error('a descriptor writer holds no buffer');
  };
  writer.getBuffer = none;
  writer.getBytes = none;
  return writer;
}
