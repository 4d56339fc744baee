/**
 * The rows of a range file resolved into one partition (`range-csv.ts`).
 * Build time only.
 */

/** A row of a range file placed in the partition: its range, the order it came in, and its value's id. */
export interface Piece {
  readonly lo: bigint;
  readonly hi: bigint;
  readonly order: number;
  readonly id: number;
}

/**
 * Rows resolved into one sorted partition where a later row wins on its
 * own range: every row's start and end split the space (a piece ends
 * where any row starts or ends), and each piece takes the latest row that
 * covers it. One sweep over the rows' ends with a heap of the rows
 * covering the point, latest first: O(n log n) however the rows nest.
 */
export function resolveRows(rows: readonly Piece[]): Piece[] {
  const byStart = [...rows].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  // Sorted, then each point once. Not a Set: V8 hashes a BigInt by its lowest 64 bits, which are zero for most IPv6
  // range edges, so a Set of them is quadratic (95 s for the default ASN data's 515 000 rows).
  const sorted = rows.flatMap((r) => [r.lo, r.hi + 1n]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const points = sorted.filter((p, i) => i === 0 || p !== sorted[i - 1]);
  const active = new LatestFirst();
  const out: Piece[] = [];
  let next = 0;
  for (let k = 0; k + 1 < points.length; k++) {
    const at = points[k];
    while (next < byStart.length && byStart[next].lo <= at) active.push(byStart[next++]);
    // Rows that ended before this point leave when they come to the top.
    while (active.size > 0 && active.top().hi < at) active.pop();
    if (active.size > 0) out.push({ ...active.top(), lo: at, hi: points[k + 1] - 1n });
  }
  return out;
}

/** A binary heap of pieces, the latest order on top. */
class LatestFirst {
  private readonly a: Piece[] = [];
  get size(): number {
    return this.a.length;
  }
  top(): Piece {
    return this.a[0];
  }
  push(p: Piece): void {
    const a = this.a;
    let i = a.push(p) - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up].order >= a[i].order) break;
      [a[up], a[i]] = [a[i], a[up]];
      i = up;
    }
  }
  pop(): void {
    const a = this.a;
    const last = a.pop() as Piece;
    if (a.length === 0) return;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && a[l].order > a[m].order) m = l;
      if (r < a.length && a[r].order > a[m].order) m = r;
      if (m === i) return;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }
}
