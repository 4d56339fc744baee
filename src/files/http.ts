/**
 * Downloads for `iprecord update`, with the same rules for threat feeds and
 * databases: a conditional GET (`If-None-Match`, `If-Modified-Since` from
 * the last good download), a timeout, a size cap, and retries with
 * exponential backoff for network errors, timeouts and 5xx answers.
 */

import { lookup } from 'node:dns/promises';
import { createWriteStream, rmSync } from 'node:fs';
import { once } from 'node:events';

/** What the last good download of a URL sent, for the next conditional GET. */
export interface Validators {
  readonly etag?: string;
  readonly lastModified?: string;
}

export interface DownloadOptions {
  /** Per request. */
  readonly timeoutMs: number;
  /** Largest body accepted. */
  readonly maxBytes: number;
  /** Retries after the first attempt. */
  readonly retries: number;
  /** First backoff; doubles each retry. */
  readonly backoffMs: number;
  /** The User-Agent sent. @default iprecord-update */
  readonly userAgent?: string;
}

/** A download that failed: its reason, and whether another attempt may do better. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where a body goes, chunk by chunk; `end` is called once all of it came, `abort` when it will not. */
interface Sink {
  write(chunk: Uint8Array): void | Promise<void>;
  end(): void | Promise<void>;
  abort(): void;
}

/** One GET into `sink`: the validators, or null for 304. @throws HttpError */
async function getOnce(url: string, last: Validators | null, o: DownloadOptions, sink: () => Sink): Promise<Validators | null> {
  const headers: Record<string, string> = { 'user-agent': o.userAgent ?? 'iprecord-update' };
  if (last?.etag) headers['if-none-match'] = last.etag;
  if (last?.lastModified) headers['if-modified-since'] = last.lastModified;
  let res: Response;
  const signal = AbortSignal.timeout(o.timeoutMs);
  try {
    res = await fetch(url, { headers, signal, redirect: 'follow' });
  } catch (e) {
    const err = e as Error;
    throw new HttpError(
      err.name === 'TimeoutError'
        ? `no answer within ${o.timeoutMs} ms`
        : `request failed: ${(err.cause as Error | undefined)?.message ?? err.message}`,
      true,
    );
  }
  try {
    return await readBody(res, o, sink);
  } finally {
    // A body refused before it was read is not left to stream on: its connection would keep the process alive (a
    // body whose reading stopped was cancelled by leaving its loop).
    if (!res.bodyUsed) await res.body?.cancel().catch(() => undefined);
  }
}

/** The answer's body into a sink: the validators, or null for 304. @throws HttpError */
async function readBody(res: Response, o: DownloadOptions, sink: () => Sink): Promise<Validators | null> {
  if (res.status === 304) return null;
  if (res.status >= 500) throw new HttpError(`HTTP ${res.status}`, true);
  if (res.status !== 200) throw new HttpError(`HTTP ${res.status}`, false);
  // fetch decodes a compressed body (Content-Encoding gzip, deflate, br): Content-Length then counts the encoded
  // bytes, not those read here (a body cut short fails to decode instead).
  const encoded = (res.headers.get('content-encoding') ?? 'identity').toLowerCase() !== 'identity';
  const declared = encoded ? NaN : Number(res.headers.get('content-length') ?? NaN);
  if (declared > o.maxBytes) throw new HttpError(`body of ${declared} bytes is over the ${o.maxBytes} byte cap`, false);
  const out = sink();
  let size = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > o.maxBytes) throw new HttpError(`body is over the ${o.maxBytes} byte cap`, false);
      await out.write(chunk);
    }
    if (Number.isFinite(declared) && size !== declared) throw new HttpError(`body cut short: ${size} of ${declared} bytes`, true);
  } catch (e) {
    out.abort();
    if (e instanceof HttpError) throw e;
    const err = e as NodeJS.ErrnoException;
    // The sink's own failure (a full disk) is not the server's: another attempt would not help.
    if (err.code !== undefined && err.syscall !== undefined) throw new HttpError(`cannot keep the download: ${err.message}`, false);
    throw new HttpError(
      err.name === 'TimeoutError' ? `body not received within ${o.timeoutMs} ms` : `body cut short: ${err.message}`,
      true,
    );
  }
  await out.end();
  return { etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined };
}

/** How long a host's name may take to resolve. */
const RESOLVE_MS = 5000;
/** How long an answer about a host's name is kept. */
const RESOLVED_FOR_MS = 60_000;
/**
 * Each host's name, resolved once a minute at most (a cache: an update
 * fetches some 60 URLs of a few hosts; without it, a machine offline spent
 * every retry of every feed on the same failing lookup, 109 s in all).
 * A failure's reason, or null where the name resolves.
 */
const resolved = new Map<string, { readonly at: number; readonly failure: Promise<string | null> }>();

/** Why `url`'s host does not resolve (within `RESOLVE_MS`), or null when it does (or names an address). */
export function unresolved(url: string): Promise<string | null> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return Promise.resolve(null);
  }
  const known = resolved.get(host);
  if (known !== undefined && Date.now() - known.at < RESOLVED_FOR_MS) return known.failure;
  const failure = Promise.race([
    lookup(host.replace(/^\[|\]$/g, '')).then(
      () => null,
      (e: NodeJS.ErrnoException) => `${host} does not resolve (${e.code ?? e.message})`,
    ),
    new Promise<string>((r) => setTimeout(() => r(`${host} does not resolve within ${RESOLVE_MS} ms`), RESOLVE_MS).unref()),
  ]);
  resolved.set(host, { at: Date.now(), failure });
  return failure;
}

/** GETs with retries: the validators, or null for 304. @throws HttpError (the last attempt's) */
async function getWithRetries(url: string, last: Validators | null, o: DownloadOptions, sink: () => Sink): Promise<Validators | null> {
  // A name that does not resolve fails at once, without retries: no other attempt would do better within the update.
  const failure = await unresolved(url);
  if (failure !== null) throw new HttpError(failure, false);
  let error = new HttpError('not attempted', false);
  for (let attempt = 0; attempt <= o.retries; attempt++) {
    if (attempt > 0) await sleep(o.backoffMs * 2 ** (attempt - 1));
    try {
      return await getOnce(url, last, o, sink);
    } catch (e) {
      error = e as HttpError;
      if (!error.retry) break;
    }
  }
  throw error;
}

/** Downloads a body into memory: it and its validators, or null for 304. @throws HttpError */
export async function download(url: string, last: Validators | null, o: DownloadOptions): Promise<(Validators & { body: Buffer }) | null> {
  let chunks: Buffer[] = [];
  const got = await getWithRetries(url, last, o, () => {
    chunks = [];
    return { write: (c) => void chunks.push(Buffer.from(c)), end: () => {}, abort: () => {} };
  });
  return got === null ? null : { ...got, body: Buffer.concat(chunks) };
}

/** Downloads a body into a file (written anew by each attempt, removed when all fail): its validators, or null for 304. @throws HttpError */
export async function downloadToFile(url: string, last: Validators | null, o: DownloadOptions, path: string): Promise<Validators | null> {
  try {
    return await getWithRetries(url, last, o, () => {
      const file = createWriteStream(path);
      // A write error (a full disk) or a destroy with writes pending fails the next call, never the process.
      let failed: Error | null = null;
      file.on('error', (e) => (failed ??= e));
      return {
        write: async (c) => {
          if (failed !== null) throw failed;
          if (!file.write(c)) await once(file, 'drain');
        },
        end: async () => {
          if (failed !== null) throw failed;
          file.end();
          await once(file, 'finish');
        },
        abort: () => file.destroy(),
      };
    });
  } catch (e) {
    rmSync(path, { force: true });
    throw e;
  }
}
