/**
 * The access log: one line per request, written in batches (a write per
 * request would cost a system call each on a pipe or a file). A reader
 * slower than the requests never holds answers back nor fills memory:
 * lines past MAX_QUEUED unwritten bytes are dropped, and the log says how
 * many in a line of its own (`# iprecord: 1200 access log lines dropped`).
 * A stream that fails (a full disk, an I/O error) fails the log, never the
 * server: said once as a warning (`IPRECORD_ACCESS_LOG`), its lines are
 * dropped and counted from then on.
 *
 * `203.0.113.9 shop [2026-11-22T15:04:05Z] "GET /8.8.8.8?fields=city&api-key=[redacted] HTTP/1.1" 200 31 0.21ms`
 *
 * The second column is the key's name from the keys file (`-` without a
 * key); the key itself is never written: the value of every parameter
 * whose name looks like a key is redacted, and so is any part of the
 * path or query that is one of the server's keys, under whatever name.
 */

/** Bytes held before a write. */
const FLUSH_BYTES = 64 * 1024;
/** Longest wait before held lines are written. */
const FLUSH_MS = 200;
/**
 * Bytes the log's stream may hold unwritten (a pipe whose reader is slow
 * holds every write in memory): past them, lines are dropped and counted,
 * never answers held back, and the count is written once the stream keeps
 * up again.
 */
export const MAX_QUEUED = 8 * 1024 * 1024;

export class AccessLog {
  private lines: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private second = -1;
  private stamp = '';
  /** Lines dropped since the last said. */
  private unsaid = 0;
  /** Lines dropped in all. */
  dropped = 0;
  /** The error that ended the stream, if one did. */
  private failed: Error | null = null;

  /** `isKey` tells whether a text is one of the server's keys (never true without keys). */
  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly isKey: (text: string) => boolean = () => false,
  ) {
    // Without a listener, a stream's error is thrown from the event loop: it would end the server.
    (out as Partial<NodeJS.EventEmitter>).on?.('error', (e: Error) => this.fail(e));
  }

  private fail(e: Error): void {
    if (this.failed !== null) return;
    this.failed = e;
    process.emitWarning(`the access log cannot be written (${e.message}): its lines are dropped from now on, and counted`, {
      code: 'IPRECORD_ACCESS_LOG',
    });
  }

  request(
    remote: string,
    label: string,
    method: string,
    target: string,
    httpVersion: string,
    status: number,
    bytes: number,
    ms: number,
  ): void {
    const now = Date.now();
    const s = Math.floor(now / 1000);
    if (s !== this.second) {
      this.second = s;
      this.stamp = new Date(s * 1000).toISOString().slice(0, 19) + 'Z';
    }
    this.push(
      `${remote} ${label} [${this.stamp}] "${clean(method)} ${redact(target, this.isKey)} HTTP/${httpVersion}" ${status} ${bytes} ${ms.toFixed(2)}ms\n`,
    );
  }

  private push(line: string): void {
    this.lines.push(line);
    this.bytes += line.length;
    if (this.bytes >= FLUSH_BYTES) this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /**
   * Writes what is held, or drops it (counted) while the stream holds more
   * than MAX_QUEUED bytes unwritten, or once it failed; `last` (the
   * server's stop): writes it whatever the stream holds, the count of lines
   * dropped first.
   */
  flush(last = false): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0 && (this.unsaid === 0 || !last)) return;
    const queued = (this.out as { writableLength?: number }).writableLength ?? 0;
    if (this.failed !== null || (!last && queued > MAX_QUEUED)) {
      this.unsaid += this.lines.length;
      this.dropped += this.lines.length;
    } else {
      const said =
        this.unsaid === 0
          ? ''
          : `# iprecord: ${this.unsaid} access log lines dropped before this one: the log's reader took them slower than requests came\n`;
      this.unsaid = 0;
      this.out.write(said + this.lines.join(''));
    }
    this.lines = [];
    this.bytes = 0;
  }
}

const UNSAFE = /[^\x21-\x7e]/;

/** Characters outside printable ASCII as %XX, so that a line stays one line. */
function clean(s: string): string {
  if (!UNSAFE.test(s)) return s;
  return s.replace(/[^\x21-\x7e]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 256 ? '%' + code.toString(16).toUpperCase().padStart(2, '0') : encodeURIComponent(c);
  });
}

/**
 * The request target with every credential replaced by `[redacted]`:
 * - the value of a query parameter whose name looks like a key (`api-key`,
 *   and the names the server does not read but a client may send a key
 *   under: `apikey`, `api_key`, `API-KEY`, `token`, `secret`...), compared
 *   as decoded, also when the pair is itself a value (`q=api-key%3DK`,
 *   `=api-key=K`); a pair after a second `?` or a `;` counts as a pair;
 * - a parameter with no value (`?KEY`);
 * - any path segment or parameter value holding one of the server's keys,
 *   whatever its name (`?k=KEY`, `GET /KEY`).
 */
export function redact(target: string, isKey: (text: string) => boolean = () => false): string {
  const q = target.indexOf('?');
  const path = redactPath(q < 0 ? target : target.slice(0, q), isKey);
  if (q < 0) return clean(path);
  // The query's parts between separators (`&`, `;`, `?`), each as the rules above say; the separators kept.
  let query = '';
  for (let from = q + 1; ;) {
    let to = from;
    while (to < target.length) {
      const c = target.charCodeAt(to);
      if (c === 0x26 || c === 0x3b || c === 0x3f) break;
      to++;
    }
    query += to === from ? '' : redactPart(target.slice(from, to), isKey);
    if (to === target.length) break;
    query += target[to];
    from = to + 1;
  }
  return clean(`${path}?${query}`);
}

/** One `name=value` part of a query (not empty), redacted as `redact` says. */
function redactPart(part: string, isKey: (text: string) => boolean): string {
  const text = decoded(part);
  const eq = text.indexOf('=');
  if (eq < 0) return '[redacted]';
  // The first name that says a credential follows; the first piece's raw spelling is kept.
  let at = -1;
  let name = 0;
  for (let end = eq; end >= 0; end = text.indexOf('=', name)) {
    if (looksLikeKey(text.slice(name, end))) {
      at = end;
      break;
    }
    name = end + 1;
  }
  if (at < 0 && holdsKey(text, isKey)) at = eq;
  if (at < 0) return part;
  const raw = part.indexOf('=');
  return `${at === eq && raw >= 0 ? part.slice(0, raw) : text.slice(0, at)}=[redacted]`;
}

/** A path with each segment that holds a key as `[redacted]` (the path itself, unsplit, where none does: nearly always). */
function redactPath(path: string, isKey: (text: string) => boolean): string {
  for (let start = 0; ;) {
    const slash = path.indexOf('/', start);
    const end = slash < 0 ? path.length : slash;
    if (end - start >= MIN_KEY && isSecret(path.slice(start, end), isKey))
      return path
        .split('/')
        .map((segment) => (isSecret(segment, isKey) ? '[redacted]' : segment))
        .join('/');
    if (slash < 0) return path;
    start = slash + 1;
  }
}

/** Whether a path segment holds a key of the server, decoded. */
function isSecret(segment: string, isKey: (text: string) => boolean): boolean {
  return segment.length >= MIN_KEY && holdsKey(decoded(segment), isKey);
}

/** Keys are at least this long (keys.ts refuses shorter ones). */
const MIN_KEY = 8;

/** Characters that part a text into words, and a `+` that may stand for a space. */
const WORDY = /[=,;&?/+]/;

/** Whether a decoded text, or one of its words, is a key of the server. */
function holdsKey(text: string, isKey: (text: string) => boolean): boolean {
  if (text.length < MIN_KEY) return false;
  // One word (an address in a path, nearly always): the text itself.
  if (!WORDY.test(text)) return isKey(text);
  if (isKeySpaced(text, isKey)) return true;
  // Its words between `=`, `,`, `;`, `&`, `?` and `/`, those long enough to be a key.
  for (let from = 0, i = 0; i <= text.length; i++) {
    if (i < text.length && !SEPARATORS.has(text.charCodeAt(i))) continue;
    if (i - from >= MIN_KEY && i - from < text.length && isKeySpaced(text.slice(from, i), isKey)) return true;
    from = i + 1;
  }
  return false;
}

const SEPARATORS = new Set([...'=,;&?/'].map((c) => c.charCodeAt(0)));

/** Whether a word is a key of the server, as it is or with each `+` a space (a `+` in a query may stand for one). */
function isKeySpaced(word: string, isKey: (text: string) => boolean): boolean {
  return isKey(word) || (word.includes('+') && isKey(word.replace(/\+/g, ' ')));
}

/** Whether a parameter's name says its value is a credential. */
function looksLikeKey(name: string): boolean {
  const n = name.toLowerCase();
  // The words are letters only: a match in the name is one in the name without its other characters too.
  return KEY_WORDS.test(n) || (/[^a-z0-9]/.test(n) && KEY_WORDS.test(n.replace(/[^a-z0-9]/g, '')));
}

const KEY_WORDS = /key|token|secret|passw|auth|signature|credential/;

/** Percent-decoded, twice at most (`api-key%253DK` is `api-key=K` too); as given where it does not decode. */
function decoded(text: string): string {
  let out = text;
  for (let round = 0; round < 2 && out.includes('%'); round++) {
    try {
      out = decodeURIComponent(out);
    } catch {
      break;
    }
  }
  return out;
}
