/**
 * Ids by whole numbers from 0 to 2^31 - 1 (data offsets of a source
 * database): open addressing over one typed array of key and id pairs,
 * one memory read a lookup where a `Map` of a million numbers takes two.
 * Build time only.
 */
export class IdMap {
  /** Key and id pairs; key -1: an empty slot. */
  private slots = new Int32Array(1 << 13).fill(-1);
  private count = 0;

  /** The id of `key`, or `absent`. */
  get(key: number, absent: number): number {
    const { slots } = this;
    const mask = (slots.length >> 1) - 1;
    for (let i = IdMap.slot(key, mask); ; i = (i + 1) & mask) {
      const k = slots[i * 2];
      if (k === key) return slots[i * 2 + 1];
      if (k === -1) return absent;
    }
  }

  /** Sets the id of `key`, not yet present. */
  set(key: number, id: number): void {
    if (++this.count * 4 > this.slots.length) this.grow();
    const { slots } = this;
    const mask = (slots.length >> 1) - 1;
    let i = IdMap.slot(key, mask);
    while (slots[i * 2] !== -1) i = (i + 1) & mask;
    slots[i * 2] = key;
    slots[i * 2 + 1] = id;
  }

  private static slot(key: number, mask: number): number {
    const h = Math.imul(key, 0x9e3779b1);
    return (h ^ (h >>> 16)) & mask;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2).fill(-1);
    this.count = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== -1) this.set(old[i], old[i + 1]);
  }
}
