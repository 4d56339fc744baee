/**
 * Writing the server's answers: the headers every answer has, JSON and
 * JSONP bodies (full records as byte text, written without encoding them
 * again), the service's error bodies, refusals written on the socket
 * itself, and the access log's line for each.
 */

import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AnswerOptions, Engine } from '../engine/engine.js';
import { isIprecordError } from '../contract/errors.js';
import { clientAddress, type TrustProxy } from './client.js';
import type { Account } from './keys.js';
import type { AccessLog } from './log.js';
import type { Operation, ServerMetrics } from './metrics.js';

export const MAX_BULK = 100;
export const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';
export const JS_TYPE = 'application/javascript; charset=utf-8';

export const MESSAGES = {
  key: 'You have not provided a valid API Key.',
  bulkPlan: 'Upgrade to a paid plan to make bulk requests.',
  quota: 'You have exceeded your free quota. Upgrade to a paid plan to re-activate your account.',
  bulkArray: 'You did not provide a valid JSON Array.',
  bulkSize: `Bulk requests should not contain more than ${MAX_BULK} IP addresses.`,
  callback: 'The callback parameter must be a JavaScript identifier (letters, digits, _ and $, dotted), at most 64 characters.',
  notFound: 'Not found.',
  method: 'Method not allowed.',
  tooLarge: 'The request body is too large.',
  host: 'Unknown host.',
  internal: 'Internal server error.',
  damaged: 'The data failed its check; answers resume once good data is loaded.',
  quotaUnknown: "This key's quota cannot be checked now (its counts are shared and their store does not answer); try again shortly.",
} as const;

/** One request and what is known of it so far. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly started: number;
  account: Account | null;
  /** A valid JSONP callback of the request. */
  callback: string | null;
  /** What it asks for (metrics). */
  op: Operation;
}

export class Responder {
  constructor(
    private readonly log: AccessLog | null,
    private readonly trustProxy: TrustProxy,
    private readonly metrics: ServerMetrics | null,
  ) {}

  /** An error thrown while answering: the engine's 400s as they are, damaged data a 503, anything else a bare 500. */
  failed(ctx: Exchange, e: unknown): void {
    if (ctx.res.headersSent) {
      ctx.res.destroy();
      return;
    }
    if (isIprecordError(e) && e.status === 400) return this.fail(ctx, 400, e.message);
    // The engine's data failed its check (said once by its 'damaged' event): no answer until good data is loaded.
    if (isIprecordError(e) && e.code === 'INVALID_DATASET') return this.fail(ctx, 503, MESSAGES.damaged);
    process.emitWarning(`iprecord server: ${(e as Error)?.message ?? String(e)}`);
    this.fail(ctx, 500, MESSAGES.internal);
  }

  /** Answers requests that the HTTP parser refused (bad syntax, headers too large, too slow) with a JSON error, then closes. */
  clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    this.refuseRaw(
      socket,
      status,
      status === 431 ? 'The request headers are too large.' : status === 408 ? 'The request took too long.' : 'Bad request.',
      null,
    );
  }

  /** A JSON error written on the socket itself (no response object: the request was refused or is CONNECT), logged, then the socket closed. */
  refuseRaw(socket: Socket, status: number, message: string, req: IncomingMessage | null, extra: readonly string[] = []): void {
    const body = JSON.stringify({ message });
    const headers = [
      'Content-Type',
      JSON_TYPE,
      'Content-Length',
      String(Buffer.byteLength(body)),
      'X-Content-Type-Options',
      'nosniff',
      'Access-Control-Allow-Origin',
      '*',
      ...extra,
      'Connection',
      'close',
    ];
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    socket.end(head + '\r\n' + body);
    this.metrics?.request('other', status, 0);
    if (this.log !== null) {
      const remote = req === null ? (socket.remoteAddress ?? '-') : clientAddress(socket.remoteAddress, req.headers, this.trustProxy);
      this.log.request(remote, '-', req?.method ?? '-', req?.url ?? '-', req?.httpVersion ?? '1.1', status, Buffer.byteLength(body), 0);
    }
  }

  /** Sends a response; `bytes`: the body is byte text (`record/bytes.ts`), written as it is. */
  send(ctx: Exchange, status: number, type: string, body: string | Buffer, extra?: readonly string[], bytes = false): void {
    const length = typeof body === 'string' && !bytes ? Buffer.byteLength(body) : body.length;
    // 204 has no content and names none.
    const headers =
      status === 204
        ? ['X-Content-Type-Options', 'nosniff', 'Access-Control-Allow-Origin', '*']
        : ['Content-Type', type, 'Content-Length', String(length), 'X-Content-Type-Options', 'nosniff', 'Access-Control-Allow-Origin', '*'];
    if (extra !== undefined) headers.push(...extra);
    ctx.res.writeHead(status, headers);
    if (bytes) ctx.res.end(body, 'latin1');
    else ctx.res.end(body);
    this.metrics?.request(ctx.op, status, (performance.now() - ctx.started) / 1000);
    if (this.log !== null) {
      const { req } = ctx;
      const remote = clientAddress(req.socket.remoteAddress, req.headers, this.trustProxy);
      this.log.request(
        remote,
        ctx.account?.label ?? '-',
        req.method ?? '-',
        req.url ?? '',
        req.httpVersion,
        status,
        length,
        performance.now() - ctx.started,
      );
    }
  }

  /**
   * A JSON (or, with a valid callback, JSONP) body of a value; `bytes`: the
   * JSON is byte text (full records, written without encoding them to UTF-8
   * again; a valid callback is ASCII, so the wrapped text is byte text too).
   */
  sendJson(ctx: Exchange, json: string, bytes = false): void {
    if (ctx.callback === null) this.send(ctx, 200, JSON_TYPE, json, undefined, bytes);
    else this.send(ctx, 200, JS_TYPE, `${ctx.callback}(${json});`, undefined, bytes);
  }

  /**
   * A full record's JSON (or JSONP) body, its bytes written by the engine (`writeJson`) into this responder's buffer
   * and copied into one of their own length (the socket may hold a body after `end()`).
   */
  sendRecord(ctx: Exchange, engine: Engine, ip: string, options: AnswerOptions): void {
    const head = ctx.callback === null ? 0 : this.scratch.write(ctx.callback + '(', 0, 'latin1');
    let n = engine.writeJson(ip, this.scratch, head, options);
    // A record longer than the buffer (none is: its strings are cut at 256 bytes) is written again into a larger one.
    if (head + n + 2 > this.scratch.length) {
      this.scratch = Buffer.allocUnsafeSlow(2 * (head + n + 2));
      if (head > 0) this.scratch.write(ctx.callback + '(', 0, 'latin1');
      n = engine.writeJson(ip, this.scratch, head, options);
    }
    if (head > 0) n += this.scratch.write(');', head + n, 'latin1');
    const body = Buffer.allocUnsafe(head + n);
    this.scratch.copy(body, 0, 0, head + n);
    this.send(ctx, 200, head === 0 ? JSON_TYPE : JS_TYPE, body);
  }

  /** Where `sendRecord` writes a record (answers are written one at a time). */
  private scratch = Buffer.allocUnsafeSlow(16 * 1024);

  /** The service's error body `{"message": ...}`, wrapped when the request has a valid callback. */
  fail(ctx: Exchange, status: number, message: string, extra?: readonly string[]): void {
    const json = '{"message":' + JSON.stringify(message) + '}';
    if (ctx.callback === null) this.send(ctx, status, JSON_TYPE, json, extra);
    else this.send(ctx, status, JS_TYPE, `${ctx.callback}(${json});`, extra);
  }
}
