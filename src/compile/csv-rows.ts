/** Files of CSV rows, read whole: the compiler's CSV sources. Build time only. */

import { readRegular } from '../files/read.js';
import { splitCsvLine } from '../text/csv.js';

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
