/**
 * `count`: lookups answered in the last 24 hours, in one-minute buckets,
 * as text refreshed once a minute (the service's rule).
 */

const MINUTE = 60_000;
const BUCKETS = 1440;

export class CountWindow {
  /** Made at the first count: a server's keys file may list many keys never used (5.6 KiB each). */
  private buckets: Uint32Array | null = null;
  private minute = -1;
  private total = 0;
  private text = '0';

  /** Counts one lookup at `nowMs`; returns the count as of the minute's start. */
  tick(nowMs: number): string {
    this.add(nowMs, 1);
    return this.text;
  }

  /** Counts `n` lookups at `nowMs` (a bulk request). */
  add(nowMs: number, n: number): void {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    (this.buckets ??= new Uint32Array(BUCKETS))[m % BUCKETS] += n;
    this.total += n;
  }

  /** Lookups in the last 24 hours up to now (not refreshed once a minute like the text). */
  live(nowMs: number): number {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    return this.total;
  }

  /** The non-empty minutes of the window: `[minute since the epoch, lookups]`, oldest first. */
  minutes(nowMs: number): [number, number][] {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    const out: [number, number][] = [];
    const buckets = this.buckets;
    if (buckets === null || this.total === 0) return out;
    for (let k = m - BUCKETS + 1; k <= m; k++) {
      const n = buckets[k % BUCKETS];
      if (n > 0) out.push([k, n]);
    }
    return out;
  }

  /**
   * Adds saved minutes back (a restart); minutes outside the last 24 hours
   * are dropped. The text includes them at once.
   */
  restore(minutes: readonly (readonly [number, number])[], nowMs: number): void {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    for (const [k, n] of minutes) {
      if (k > m - BUCKETS && k <= m && Number.isSafeInteger(n) && n > 0) {
        (this.buckets ??= new Uint32Array(BUCKETS))[k % BUCKETS] += n;
        this.total += n;
      }
    }
    this.text = String(this.total);
  }

  /** The count as text without counting a lookup. */
  peek(nowMs: number): string {
    const m = Math.floor(nowMs / MINUTE);
    if (m !== this.minute) this.advance(m);
    return this.text;
  }

  private advance(m: number): void {
    const buckets = this.buckets;
    // With nothing counted in the window every bucket is 0 already.
    if (buckets !== null && this.total !== 0) {
      if (this.minute < 0 || m - this.minute >= BUCKETS) {
        buckets.fill(0);
        this.total = 0;
      } else {
        for (let k = this.minute + 1; k <= m; k++) {
          const b = k % BUCKETS;
          this.total -= buckets[b];
          buckets[b] = 0;
        }
      }
    }
    this.minute = m;
    this.text = String(this.total);
  }
}
