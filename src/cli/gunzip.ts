/**
 * gzip input decompressed member after member (RFC 1952), as `gzip -d`
 * reads it. Node's Gunzip stream inflates what follows a member in the
 * same call as the member's end; when that is not another member the call
 * fails and its output is lost (the last 200-odd rows of a file with
 * bytes appended). Here each member's deflate data goes to a raw
 * inflater, whose end says where the member ends: every byte decoded is
 * given before a failure (a damaged or cut-short member, a wrong check
 * value, bytes after the last member other than zero padding) is thrown.
 */

import { createInflateRaw, crc32, type InflateRaw } from 'node:zlib';

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;

/** The decompressed bytes of `source`, a gzip file. @throws Error after the bytes decoded, for what is wrong */
export async function* gunzip(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  const input = source[Symbol.asyncIterator]();
  let pending: Buffer = Buffer.alloc(0);
  let done = false;
  /** Reads more input into `pending`; false at its end. */
  const more = async (): Promise<boolean> => {
    if (done) return false;
    const r = await input.next();
    if (r.done === true) {
      done = true;
      return false;
    }
    const data = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    return true;
  };
  /** Whether `pending` holds `n` bytes (reading more as needed). */
  const has = async (n: number): Promise<boolean> => {
    while (pending.length < n) if (!(await more())) return false;
    return true;
  };
  for (let member = 0; ; member++) {
    // After a member: the end, zero padding (tar and some writers add it), or another member.
    while (member > 0 && pending.every((b) => b === 0)) {
      pending = Buffer.alloc(0);
      if (!(await more())) return;
    }
    const header = await headerLength(has, () => pending);
    if (header < 0) throw new Error(member === 0 ? 'not gzip data' : 'bytes that are not gzip data after the compressed data');
    pending = pending.subarray(header);
    const z = createInflateRaw();
    let crc = 0;
    let size = 0;
    for (;;) {
      if (pending.length === 0 && !(await more())) throw new Error('the gzip data is cut short');
      const fed = pending;
      const before = z.bytesWritten;
      const out = await inflate(z, fed);
      for (const b of out.data) {
        crc = crc32(b, crc);
        size = (size + b.length) >>> 0;
        yield b;
      }
      if (out.failure !== null) throw new Error(`damaged gzip data: ${out.failure.message}`);
      pending = out.ended ? fed.subarray(z.bytesWritten - before) : Buffer.alloc(0);
      if (out.ended) break;
    }
    z.destroy();
    if (!(await has(8))) throw new Error('the gzip data is cut short');
    if (pending.readUInt32LE(0) !== crc >>> 0 || pending.readUInt32LE(4) !== size)
      throw new Error('damaged gzip data: its check value does not match');
    pending = pending.subarray(8);
    if (pending.length === 0 && !(await more())) return;
  }
}

/** Writes `chunk` to the inflater: what it gave, whether its data ended, and its failure. */
function inflate(z: InflateRaw, chunk: Buffer): Promise<{ data: Buffer[]; ended: boolean; failure: Error | null }> {
  return new Promise((resolve) => {
    const result = { data: [] as Buffer[], ended: false, failure: null as Error | null };
    let settled = false;
    const onData = (b: Buffer) => result.data.push(b);
    const finish = () => {
      if (settled) return;
      settled = true;
      z.off('data', onData);
      z.off('end', onEnd);
      z.off('error', onError);
      resolve(result);
    };
    const onEnd = () => {
      result.ended = true;
      finish();
    };
    const onError = (e: Error) => {
      result.failure = e;
      finish();
    };
    z.on('data', onData);
    z.once('end', onEnd);
    z.once('error', onError);
    // Written and inflated: the output is out by the next turn of the event loop.
    z.write(chunk, () => setImmediate(finish));
  });
}

/** The length of the gzip header at the start of `pending()` (reading more with `has`), or -1 when it is not one. */
async function headerLength(has: (n: number) => Promise<boolean>, pending: () => Buffer): Promise<number> {
  if (!(await has(10))) return -1;
  const b = pending();
  if (b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) return -1;
  const flags = b[3];
  let at = 10;
  if (flags & FEXTRA) {
    if (!(await has(at + 2))) return -1;
    at += 2 + pending().readUInt16LE(at);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    // A zero-terminated text.
    for (;;) {
      if (!(await has(at + 1))) return -1;
      if (pending()[at++] === 0) break;
    }
  }
  if (flags & FHCRC) at += 2;
  return (await has(at)) ? at : -1;
}
