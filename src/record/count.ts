/**
 * `count`: lookups answered in the last 24 hours, in one-minute buckets,
 * as text refreshed once a minute (the service's rule).
 */

const MINUTE = 60_000;
const BUCKETS = 1440;

export class CountWindow {
  private readonly buckets = new Uint32Array(BUCKETS);
  private minute = -1;
  private total = 0;
  private text = '0';

  /** Counts one lookup at `nowMs`; returns the count as of the minute's start. */
  tick(nowMs: number): string {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    this.buckets[m % BUCKETS]++;
    this.total++;
    return this.text;
  }

  /** The count as text without counting a lookup. */
  peek(nowMs: number): string {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    return this.text;
  }

  private advance(m: number): void {
    if (this.minute < 0 || m - this.minute >= BUCKETS) {
      this.buckets.fill(0);
      this.total = 0;
    } else {
      for (let k = this.minute + 1; k <= m; k++) {
        const b = k % BUCKETS;
        this.total -= this.buckets[b];
        this.buckets[b] = 0;
      }
    }
    this.minute = m;
    this.text = String(this.total);
  }
}
