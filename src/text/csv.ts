/** CSV text: a line split into fields, a value as a cell (files of CSV rows are read by `files/csv.ts`). */

/**
 * Splits one CSV line into fields (RFC 4180 quoting: `"a, b"`, `""` for a
 * quote). Returns null when a quoted field is not closed on the line.
 */
export function splitCsvLine(line: string, separator = ','): string[] | null {
  const out: string[] = [];
  let i = 0;
  const n = line.length;
  for (;;) {
    if (i < n && line.charCodeAt(i) === 34) {
      let value = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) return null;
        value += line.slice(i, q);
        if (line.charCodeAt(q + 1) === 34) {
          value += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(value);
      if (i === n) return out;
      if (line[i] !== separator) return null;
      i++;
    } else {
      const sep = line.indexOf(separator, i);
      if (sep < 0) {
        out.push(line.slice(i));
        return out;
      }
      out.push(line.slice(i, sep));
      i = sep + 1;
    }
  }
}

/** A value as a CSV cell (RFC 4180): empty for null, text quoted where it holds a quote, comma or line break (quotes doubled), an object as its JSON. */
export function csvField(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
