/**
 * The checksum of a file iprecord writes (a dataset, a threat.bin): zlib's
 * CRC-32 of every byte after the header, continued over the header's bytes
 * before the checksum's own four and after them, so that no byte of the
 * file is outside it.
 */

import { crc32 } from '../platform/bytes.js';

/**
 * The checksum of a file whose header is `header` (its first `header.length` bytes) and whose bytes after the header
 * have the CRC-32 `body`; the checksum's own four bytes, at `at`, are left out.
 */
export function fileCrc(header: Uint8Array, at: number, body: number): number {
  return crc32(header.subarray(at + 4), crc32(header.subarray(0, at), body));
}

/** The checksum of a whole file's bytes, its header the first `headerBytes`. */
export function wholeFileCrc(buf: Uint8Array, headerBytes: number, at: number): number {
  return fileCrc(buf.subarray(0, headerBytes), at, crc32(buf.subarray(headerBytes)));
}
