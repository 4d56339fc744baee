/**
 * The data an engine answers from, held: the snapshot answering now, its
 * reloads (one after another), the check of its mapped file by a stat, the
 * background check of its bytes, and what happens when they fail: a file
 * written in place that fails its check stops the answers (`damage`) until
 * good data is loaded, from the snapshot's good copy where there is one.
 * The engine (`engine.ts`) documents these as its own methods and hears of
 * each swap and stop.
 */

import { changedInPlace } from '../dataset/integrity.js';
import { ClosedError, InvalidDatasetError } from '../contract/errors.js';
import type { ResolvedOptions } from './options.js';
import { Snapshot } from './snapshot.js';

/** What the holder tells its engine. */
export interface HeldEvents {
  /** `next` answers from now on; `otherDataset`: its compiled dataset is not the one before. */
  swapped(next: Snapshot, otherDataset: boolean): void;
  /** Answers stopped: lookups throw `damage` until good data is loaded. */
  stopped(damage: InvalidDatasetError): void;
}

export class HeldData {
  private snapshot: Snapshot | null;
  /** Why nothing is answered: the mapped file was written and fails its check (null: it answers, or was closed). */
  damage: InvalidDatasetError | null = null;
  /** Reloads run one after another. */
  private reloading: Promise<void> = Promise.resolve();

  constructor(
    snapshot: Snapshot,
    private readonly options: ResolvedOptions,
    private readonly events: HeldEvents,
  ) {
    this.snapshot = snapshot;
  }

  /** The snapshot answering now. @throws the damage, or ClosedError */
  live(): Snapshot {
    if (this.snapshot === null) throw this.damage ?? new ClosedError();
    return this.snapshot;
  }

  /** `Engine.reload()`. */
  async reload(): Promise<void> {
    if (this.closed) throw new ClosedError();
    const run = this.reloading.then(async () => {
      const before = this.snapshot;
      const written = before?.mapped ? changedInPlace(before.files.values()) : null;
      let next: Snapshot | null;
      try {
        next = await Snapshot.open(this.options, before);
      } catch (e) {
        if (written === null || before === null) throw e;
        this.stop(
          new InvalidDatasetError(
            `${written} was written while this process answered from its pages (a memory map), and fails its check (${(e as Error).message}): no answer comes from it until good data is loaded`,
            { cause: e },
          ),
        );
        next = await before.goodCopy(this.options, written);
        if (next === null) throw this.damage;
      }
      this.swap(next);
    });
    // The chain goes on after a failure; the caller still sees it.
    this.reloading = run.catch(() => undefined);
    return run;
  }

  /** `Engine.checkData()`. */
  async checkData(): Promise<'unchanged' | 'reloaded' | 'damaged'> {
    const snap = this.snapshot;
    if (this.closed) throw new ClosedError();
    if (snap !== null && !(snap.mapped && changedInPlace(snap.files.values()) !== null)) return 'unchanged';
    try {
      await this.reload();
      return 'reloaded';
    } catch (e) {
      if (this.damage === null) throw e;
      return 'damaged';
    }
  }

  /** `Engine.verifyInBackground()`. */
  async verifyInBackground(): Promise<void> {
    const snap = this.live();
    try {
      await snap.verifyAgain();
    } catch (e) {
      if (this.snapshot !== snap) return;
      this.stop(e instanceof InvalidDatasetError ? e : new InvalidDatasetError((e as Error).message, { cause: e }));
      const good = await snap.goodCopy(this.options, snap.dataset.name);
      if (good !== null) this.swap(good);
    }
  }

  /** Answers from `next` from now on (unless closed meanwhile). */
  private swap(next: Snapshot): void {
    if (this.closed) return;
    const other = next.dataset !== this.snapshot?.dataset;
    this.snapshot = next;
    this.damage = null;
    this.events.swapped(next, other);
  }

  /** Answers stop: lookups throw `damage` until a reload loads good data. */
  private stop(damage: InvalidDatasetError): void {
    this.damage = damage;
    this.snapshot = null;
    this.events.stopped(damage);
  }

  /** Lets go of the data. */
  close(): void {
    this.snapshot = null;
    this.damage = null;
  }

  get closed(): boolean {
    return this.snapshot === null && this.damage === null;
  }
}
