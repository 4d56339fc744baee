import { readRegular } from '../files/read.js';

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

/** A line of a file that could not be read as a row. */
export interface CsvBadLine {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

/** The largest CSV file read whole: about the longest text Node holds (2^29 - 24 characters), refused with its size rather than a RangeError. */
const MAX_CSV_BYTES = 512 * 1024 * 1024;

/**
 * Calls `row` with the fields of each line of CSV files that is not blank
 * or a `#` comment (null when a quoted field does not close on the line);
 * `bad` reports that line. Returns the lines reported.
 */
export function forEachCsvRow(
  files: readonly string[],
  row: (fields: string[] | null, bad: (reason: string) => void) => void,
): CsvBadLine[] {
  const badLines: CsvBadLine[] = [];
  for (const file of files) {
    const lines = readRegular(file, MAX_CSV_BYTES).toString('utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
      if (line === '' || line.startsWith('#')) continue;
      row(splitCsvLine(line), (reason) => badLines.push({ file, line: i + 1, text: line.slice(0, 200), reason }));
    }
  }
  return badLines;
}

/** A value as a CSV cell (RFC 4180): empty for null, text quoted where it holds a quote, comma or line break (quotes doubled), an object as its JSON. */
export function csvField(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
