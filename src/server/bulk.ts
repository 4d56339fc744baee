/**
 * `POST /bulk`'s parts: its body read up to a limit, and the answer to its
 * addresses (one record, or `{ message }`, per address, in order).
 */

import type { Engine } from '../engine/engine.js';
import { isIprecordError } from '../contract/errors.js';
import { byteText } from '../record/bytes.js';
import { MESSAGES, type Exchange, type Responder } from './respond.js';
import { PREFETCH_GROUP, prefetchRecords, recordBytes } from '../engine/inside.js';

/** Reads a request's body up to `limit` bytes, then hands it to `then` as text; past the limit, a 413 (and the connection closed). */
export function readBody(ctx: Exchange, limit: number, out: Responder, then: (text: string) => void): void {
  const { req } = ctx;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return out.fail(ctx, 413, MESSAGES.tooLarge, ['Connection', 'close']);
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > limit) {
      done = true;
      out.fail(ctx, 413, MESSAGES.tooLarge, ['Connection', 'close']);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    try {
      then(Buffer.concat(chunks, size).toString('utf8'));
    } catch (e) {
      out.failed(ctx, e);
    }
  });
  req.on('error', () => {
    done = true;
  });
}

/**
 * The JSON array answering addresses: full records as byte text (`bytes`:
 * written as they are), or the chosen fields; a bad address answers in
 * place with its message.
 * @throws InvalidFieldError for a bad `fields` (the request fails)
 */
export function bulkJson(
  engine: Engine,
  ips: readonly string[],
  fields: string | null,
  count: string,
  basicThreat: boolean,
): { json: string; bytes: boolean } {
  let body = '[';
  if (fields === null) {
    // No error made for a bad address: bad rows are many.
    const options = { count, basicThreat };
    const failure = { message: '' };
    for (let i = 0; i < ips.length; i++) {
      if (i % PREFETCH_GROUP === 0) prefetchRecords(engine, ips, i, i + PREFETCH_GROUP);
      if (i > 0) body += ',';
      body += recordBytes(engine, ips[i], options, failure) ?? '{"message":' + byteText(JSON.stringify(failure.message)) + '}';
    }
    return { json: body + ']', bytes: true };
  }
  const options = { fields, count, basicThreat };
  for (let i = 0; i < ips.length; i++) {
    if (i % PREFETCH_GROUP === 0) prefetchRecords(engine, ips, i, i + PREFETCH_GROUP, false);
    if (i > 0) body += ',';
    try {
      body += engine.lookupJson(ips[i], options);
    } catch (e) {
      if (!isIprecordError(e) || e.status !== 400 || e.code === 'INVALID_FIELD') throw e;
      body += '{"message":' + JSON.stringify(e.message) + '}';
    }
  }
  return { json: body + ']', bytes: false };
}
