/**
 * Text as UTF-8 bytes in 8-aligned memory, read eight and four bytes at a
 * time: what `ByteWriter.part` copies from (the dataset's parts, a
 * country's runs of members, a zone's text of the second, the flag's base
 * URL).
 */

import { utf8Length, writeUtf8 } from '../platform/bytes.js';

/** UTF-8 bytes read as float64 and as 32-bit words (`ByteWriter.part`): over 8-aligned memory, little-endian. */
export interface Words {
  readonly f64: Float64Array;
  readonly u32: Uint32Array;
}

/** Words over 8-aligned bytes (a multiple of 8 long). */
export function wordsOver(b: Uint8Array): Words {
  return { f64: new Float64Array(b.buffer, b.byteOffset, b.length >>> 3), u32: new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2) };
}

/** Texts as UTF-8 in words, each from a multiple of 8 bytes; where each starts and ends (`at[2i]`, `at[2i + 1]`). */
export function textWords(texts: readonly string[]): { words: Words; at: number[] } {
  const at: number[] = [];
  let size = 0;
  for (const t of texts) {
    const n = utf8Length(t);
    at.push(size, size + n);
    size = (size + n + 7) & ~7;
  }
  const b = new Uint8Array(size);
  texts.forEach((t, i) => writeUtf8(b, t, at[2 * i]));
  return { words: wordsOver(b), at };
}
