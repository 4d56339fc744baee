/**
 * Flag images for the records' `flag` URLs: `/flags/<cc>.png` (250 pixels
 * wide) and `/flags/<cc>.svg`, from the `svg-country-flags` package (public
 * domain), read once per file and kept.
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

const NAME = /^([a-z]{2}(?:-[a-z]{3})?)\.(png|svg)$/;

export interface FlagImage {
  readonly body: Buffer;
  readonly type: string;
}

export class Flags {
  private readonly dir: string | null;
  /** Images found (at most the package's 512 files; misses are not kept). */
  private readonly cache = new Map<string, FlagImage>();

  constructor() {
    let dir: string | null = null;
    try {
      dir = dirname(require.resolve('svg-country-flags/package.json'));
    } catch {
      dir = null;
    }
    this.dir = dir;
  }

  /** Whether the images are installed. */
  get available(): boolean {
    return this.dir !== null;
  }

  /** The image of a file name such as `us.png` or `gb-sct.svg` (any case), or null. */
  get(file: string): FlagImage | null {
    if (this.dir === null) return null;
    const name = file.toLowerCase();
    const hit = this.cache.get(name);
    if (hit !== undefined) return hit;
    const m = NAME.exec(name);
    if (m === null) return null;
    try {
      const path = m[2] === 'png' ? join(this.dir, 'png250px', `${m[1]}.png`) : join(this.dir, 'svg', `${m[1]}.svg`);
      const image = { body: readFileSync(path), type: m[2] === 'png' ? 'image/png' : 'image/svg+xml' };
      this.cache.set(name, image);
      return image;
    } catch {
      return null;
    }
  }
}
