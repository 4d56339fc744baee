/**
 * The access log: one line per request, written in batches (a write per
 * request would cost a system call each on a pipe or a file).
 *
 * `203.0.113.9 shop [2026-11-22T15:04:05Z] "GET /8.8.8.8?fields=city&api-key=[redacted] HTTP/1.1" 200 31 0.21ms`
 *
 * The second column is the key's name from the keys file (`-` without a
 * key); the key itself is never written: the value of every parameter
 * whose name looks like a key is redacted.
 */

/** Bytes held before a write. */
const FLUSH_BYTES = 64 * 1024;
/** Longest wait before held lines are written. */
const FLUSH_MS = 200;

export class AccessLog {
  private lines: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private second = -1;
  private stamp = '';

  constructor(private readonly out: NodeJS.WritableStream) {}

  request(remote: string, label: string, method: string, target: string, httpVersion: string, status: number, bytes: number, ms: number): void {
    const now = Date.now();
    const s = Math.floor(now / 1000);
    if (s !== this.second) {
      this.second = s;
      this.stamp = new Date(s * 1000).toISOString().slice(0, 19) + 'Z';
    }
    this.push(`${remote} ${label} [${this.stamp}] "${clean(method)} ${redact(target)} HTTP/${httpVersion}" ${status} ${bytes} ${ms.toFixed(2)}ms\n`);
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

  /** Writes what is held. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.bytes = 0;
    this.out.write(text);
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
 * The request target with the value of every query parameter whose name
 * looks like a key replaced: `api-key`, and the names the server does not
 * read but a client may send a key under (`apikey`, `api_key`, `API-KEY`,
 * `token`, `secret`...), compared as decoded; a pair after a second `?`
 * or a `;` counts as a pair too.
 */
function redact(target: string): string {
  const q = target.indexOf('?');
  if (q < 0) return clean(target);
  // Each parameter as decoded (`api-key%3DKEY` is `api-key=KEY`); one with no value may be a key given bare (`?KEY`).
  const query = target
    .slice(q + 1)
    .split(/([&;?])/)
    .map((part, i) => {
      if (i % 2 === 1 || part === '') return part;
      const decoded = decodeName(part);
      const eq = decoded.indexOf('=');
      if (eq < 0) return '[redacted]';
      if (!looksLikeKey(decoded.slice(0, eq))) return part;
      const raw = part.indexOf('=');
      return `${raw < 0 ? decoded.slice(0, eq) : part.slice(0, raw)}=[redacted]`;
    })
    .join('');
  return clean(target.slice(0, q + 1) + query);
}

/** Whether a parameter's name says its value is a credential. */
function looksLikeKey(name: string): boolean {
  const n = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return /key|token|secret|passw|auth|signature|credential/.test(n);
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
