/**
 * Where the rows of `iprecord enrich`'s input end, in its bytes. A row is
 * a line (lines end with `\n`, `\r\n` or a lone `\r`), except that a CSV
 * record goes on across line breaks while a quoted field is open (RFC
 * 4180: a field that starts with `"`; `""` inside is a quote; a quote
 * inside an unquoted field is a character like any other). A row is at
 * most MAX_ROW bytes. A malformed record costs its first line and no
 * more: when a quoted field opened on a line does not close within
 * MAX_ROW bytes, or its closing quote on a later line is followed by
 * anything but a separator or the line's end (a stray quote), the first
 * line is a row alone, reported as malformed, and reading goes on at the
 * next line. Each byte is looked at a bounded number of times: linear in
 * the input.
 *
 * The main thread (where to cut chunks) and the thread that enriches a
 * chunk (which rows it holds) both read rows with this code, so they agree.
 */

/** The longest row, in bytes (a line, or a CSV record across lines). */
export const MAX_ROW = 1 << 20;

const NL = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;

/** A row found by `RowScanner.next()`. */
export const enum RowEnd {
  /** The bytes end before the row does: more input is needed. */
  More,
  /** A row, ending at `end` (past its line break). */
  Row,
  /** A line that opens a quoted field that never closes: a malformed row alone. */
  Open,
  /** A line longer than MAX_ROW with no line break in it yet: `end` is where the cap falls. */
  Long,
}

/** A byte's next place at or after `from`, searched again only when `from` moves past it (or back before its search). */
class NextByte {
  private from = -1;
  private at = -2;
  constructor(private readonly byte: number) {}
  find(b: Uint8Array, from: number): number {
    if (from < this.from || (this.at !== -1 && this.at < from)) {
      this.at = from >= b.length ? -1 : b.indexOf(this.byte, from);
      this.from = from;
    }
    return this.at;
  }
}

/**
 * Finds rows, one after another, in one buffer. Keeps the next line
 * break and quote it has found, so that lines without quotes cost two
 * searches each and no work per byte.
 */
export class RowScanner {
  /** Past the row's last byte (its line break included). */
  end = 0;
  /** Past the row's text (its final line break left out). */
  textEnd = 0;
  /** The line breaks in the row (1; 0 for a last line without one; more for a CSV record across lines). */
  lines = 0;
  private readonly nl = new NextByte(NL);
  private readonly cr = new NextByte(CR);
  private readonly quote = new NextByte(QUOTE);

  /** `final`: nothing comes after `b`. `csv`: quoted fields go on across lines. */
  constructor(
    private readonly b: Uint8Array,
    private readonly csv: boolean,
    private readonly final: boolean,
  ) {}

  /** The row that starts at `start`: its kind; its end and line breaks in `end` and `lines`. */
  next(start: number): RowEnd {
    const br = this.lineBreak(start);
    if (this.csv) {
      const q = this.quote.find(this.b, start);
      if (q >= 0 && (br < 0 || q < br)) return this.record(start, br);
    }
    return this.line(start, br);
  }

  /** The row is the line from `start`, whose break (if any) is at `br`. */
  private line(start: number, br: number): RowEnd {
    const { b } = this;
    const stop = br < 0 ? b.length : br;
    if (stop - start > MAX_ROW) {
      this.end = start + MAX_ROW;
      return RowEnd.Long;
    }
    if (br < 0) {
      if (!this.final) return RowEnd.More;
      this.end = this.textEnd = b.length;
      this.lines = 0;
      return RowEnd.Row;
    }
    // A \r last in the bytes may be the first half of \r\n.
    if (b[br] === CR && br + 1 === b.length && !this.final) return RowEnd.More;
    this.end = br + (b[br] === CR && b[br + 1] === NL ? 2 : 1);
    this.textEnd = br;
    this.lines = 1;
    return RowEnd.Row;
  }

  /** A CSV record from `start`, whose first line breaks at `br`, with a quote on that line. */
  private record(start: number, br: number): RowEnd {
    const { b } = this;
    let p = start;
    for (;;) {
      // Outside quotes: the line ends, or a field starts with a quote.
      const q = this.quote.find(b, p);
      const lineEnd = this.lineBreak(p);
      if (q < 0 || (lineEnd >= 0 && q > lineEnd)) return this.through(start, br, lineEnd);
      p = q + 1;
      if (q !== start && b[q - 1] !== COMMA) continue; // a quote inside an unquoted field
      // Inside quotes, across lines: up to the closing quote ("" is a quote).
      for (;;) {
        const c = this.quote.find(b, p);
        if (c < 0 || c - start >= MAX_ROW) {
          if (c < 0 && !this.final && b.length - start < MAX_ROW) return RowEnd.More;
          return this.open(start, br);
        }
        if (c + 1 === b.length && !this.final) return RowEnd.More;
        p = c + 1;
        if (b[p] !== QUOTE) break;
        p++;
      }
      const after = p < b.length ? b[p] : -1;
      if (after === COMMA) continue;
      if (after === -1 || after === NL || after === CR) return this.through(start, br, after === -1 ? -1 : p);
      // Something after a closing quote: a malformed line when on the first line; later, a stray quote opened the field.
      return br < 0 || p <= br ? this.line(start, br) : this.open(start, br);
    }
  }

  /** The row from `start` through the line break at `lineEnd` (-1: the end of the bytes); its first line breaks at `br`. */
  private through(start: number, br: number, lineEnd: number): RowEnd {
    if (lineEnd === br) return this.line(start, br);
    if ((lineEnd < 0 ? this.b.length : lineEnd) - start > MAX_ROW) return this.open(start, br);
    const kind = this.line(start, lineEnd);
    if (kind !== RowEnd.Row) return kind;
    // The breaks inside quotes, then the record's own.
    let inside = 0;
    const stop = lineEnd < 0 ? this.b.length : lineEnd;
    for (let at = br; at >= 0 && at < stop; at = this.lineBreak(at + (this.b[at] === CR && this.b[at + 1] === NL ? 2 : 1))) inside++;
    this.lines += inside;
    return RowEnd.Row;
  }

  /** The first line alone, as a malformed row (its quoted field not closed). */
  private open(start: number, br: number): RowEnd {
    const kind = this.line(start, br);
    return kind === RowEnd.Row ? RowEnd.Open : kind;
  }

  /** The first line break at or after `from` (`\n`, or `\r` alone or before `\n`), or -1. */
  private lineBreak(from: number): number {
    const nl = this.nl.find(this.b, from);
    const cr = this.cr.find(this.b, from);
    return nl < 0 ? cr : cr < 0 ? nl : Math.min(nl, cr);
  }
}
