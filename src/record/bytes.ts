/**
 * Byte text: a string whose characters are the UTF-8 bytes of a text, one
 * byte per character (every code below 256). Pieces of records kept this
 * way join into one-byte strings, which `buffer.latin1Write` copies as
 * they are; text with one emoji flag in it would be a two-byte string,
 * encoded to UTF-8 again for every record written.
 */

import { latin1Text, utf8Bytes } from '../platform/bytes.js';

/** The byte text of `text` (ASCII is its own). */
export function byteText(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      const b = utf8Bytes(text);
      return latin1Text(b, 0, b.length);
    }
  }
  return text;
}
