/**
 * The access log's redaction as it was first written (`server/log.ts`
 * before its query was read in one pass): the reference the faster one
 * must answer exactly as, kept here and nowhere in the package.
 */

const UNSAFE = /[^\x21-\x7e]/;

/** Characters outside printable ASCII as %XX, so that a line stays one line. */
function clean(s: string): string {
  if (!UNSAFE.test(s)) return s;
  return s.replace(/[^\x21-\x7e]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 256 ? '%' + code.toString(16).toUpperCase().padStart(2, '0') : encodeURIComponent(c);
  });
}

export function redactAsFirstWritten(target: string, isKey: (text: string) => boolean = () => false): string {
  const q = target.indexOf('?');
  const path = redactPath(q < 0 ? target : target.slice(0, q), isKey);
  if (q < 0) return clean(path);
  const query = target
    .slice(q + 1)
    .split(/([&;?])/)
    .map((part, i) => {
      if (i % 2 === 1 || part === '') return part;
      const text = decoded(part);
      const pieces = text.split('=');
      if (pieces.length === 1) return '[redacted]';
      // The first name that says a credential follows; the first piece's raw spelling is kept.
      let at = pieces.findIndex((name, j) => j < pieces.length - 1 && looksLikeKey(name));
      if (at < 0 && holdsKey(text, isKey)) at = 0;
      if (at < 0) return part;
      const raw = part.indexOf('=');
      const name = at === 0 && raw >= 0 ? part.slice(0, raw) : pieces.slice(0, at + 1).join('=');
      return `${name}=[redacted]`;
    })
    .join('');
  return clean(`${path}?${query}`);
}

/** A path with each segment that holds a key as `[redacted]` (the path itself, unsplit, where none does: nearly always). */
function redactPath(path: string, isKey: (text: string) => boolean): string {
  const isSecret = (segment: string) => segment.length >= MIN_KEY && holdsKey(decoded(segment), isKey);
  for (let start = 0; ;) {
    const slash = path.indexOf('/', start);
    const end = slash < 0 ? path.length : slash;
    if (end - start >= MIN_KEY && isSecret(path.slice(start, end)))
      return path
        .split('/')
        .map((segment) => (isSecret(segment) ? '[redacted]' : segment))
        .join('/');
    if (slash < 0) return path;
    start = slash + 1;
  }
}

/** Keys are at least this long (keys.ts refuses shorter ones). */
const MIN_KEY = 8;

/** Whether a decoded text, or one of its words, is a key of the server. */
function holdsKey(text: string, isKey: (text: string) => boolean): boolean {
  if (text.length < MIN_KEY) return false;
  const words = [text, ...text.split(/[=,;&?/]+/).filter((word) => word.length >= MIN_KEY && word !== text)];
  // A `+` in a query may stand for a space.
  return words.some((word) => isKey(word) || (word.includes('+') && isKey(word.replace(/\+/g, ' '))));
}

/** Whether a parameter's name says its value is a credential. */
function looksLikeKey(name: string): boolean {
  const n = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return /key|token|secret|passw|auth|signature|credential/.test(n);
}

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
