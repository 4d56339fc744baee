/**
 * A dataset directory as the runtime reads it: the `current` file names
 * the build in use (`builds/<name>`, swapped by one rename), which holds
 * `manifest.json` and the dataset; without `current`, the directory itself.
 */

import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidDatasetError } from '../contract/errors.js';
import { readRegularText } from '../files/read.js';
import type { Category } from '../contract/template.js';

/** A build's files. */
export const DATASET_FILE = 'dataset.iprd';
export const MANIFEST_FILE = 'manifest.json';
export const THREAT_FILE = 'threat.bin';
/** The pointer to the build in use. */
export const CURRENT_FILE = 'current';
/** The folder of a data directory's builds, each a folder of its own. */
export const BUILDS_DIR = 'builds';
/** What changed against the build before, written by `iprecord build` and `update` into the new build (`evidence/diff.ts`). */
export const CHANGES_FILE = 'changes.json';
/** When each list first and last held each range (`compile/feeds/seen.ts`). */
export const SEEN_FILE = 'seen.bin';

/**
 * Whether a change to this entry of a dataset directory can change what
 * it answers: `current` swapped, or a build's own file where the directory
 * is the build. Feeds, sources, new builds and the lock are not (an update
 * that starts is no reason to reload); null (a platform that does not say
 * which entry) is.
 */
export function changesAnswers(entry: string | null): boolean {
  return entry === null || entry === CURRENT_FILE || entry === DATASET_FILE || entry === MANIFEST_FILE || entry === THREAT_FILE;
}

/**
 * The directory of the build in use in a dataset directory; null for a
 * directory that holds no build yet when `waiting` (a watched directory
 * whose first `iprecord update` has not swapped one in: the default data
 * answers until then).
 * @throws InvalidDatasetError when `current` is there but cannot be read (a FIFO or a device is refused at once), or the directory is not there, or holds no build and is not `waiting`
 */
export function resolveDataset(dir: string, waiting = false): string | null {
  const path = join(dir, CURRENT_FILE);
  let pointer: string;
  try {
    pointer = readRegularText(path).trim();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw notDataDirectory(dir, 'is a file, not a directory');
    if (code !== 'ENOENT') throw new InvalidDatasetError(`Cannot read ${path}: ${(e as Error).message}`, { cause: e });
    // A directory without a pointer holds a build itself; one that is not there, or holds none, is named, not its files.
    if (!existsSync(dir)) throw notDataDirectory(dir, 'does not exist');
    if (!holdsBuild(dir)) {
      if (waiting) return null;
      throw notDataDirectory(dir, `holds no build (no ${CURRENT_FILE}, ${MANIFEST_FILE} or ${THREAT_FILE})`);
    }
    return dir;
  }
  return pointer === '' ? dir : join(dir, pointer);
}

/** Whether a dataset directory names a build (`current`) or is one (its manifest, or a threat.bin of its own). */
export function holdsBuild(dir: string): boolean {
  return [CURRENT_FILE, MANIFEST_FILE, THREAT_FILE].some((f) => existsSync(join(dir, f)));
}

/** The error of a `data` that is no dataset directory: what it is, and what makes one. */
const notDataDirectory = (dir: string, what: string) =>
  new InvalidDatasetError(
    `Cannot read data directory ${dir}: it ${what}; a data directory is what iprecord update --data <dir> or iprecord build --out <dir> makes.`,
  );

/**
 * The newest build of a dataset directory other than `current` (a build
 * directory): the one before, which `iprecord build` and `update` keep;
 * null when there is none.
 */
export function previousBuild(dir: string, current: string): string | null {
  let names: string[];
  try {
    names = readdirSync(join(dir, BUILDS_DIR));
  } catch {
    return null;
  }
  // Build names begin with their time (`2026-11-27T23-50-46-386Z-<pid>`): the newest last.
  const others = names.filter((n) => join(dir, BUILDS_DIR, n) !== current && existsSync(join(dir, BUILDS_DIR, n, MANIFEST_FILE))).sort();
  return others.length === 0 ? null : join(dir, BUILDS_DIR, others[others.length - 1]);
}

/**
 * The user's dataset directory, where `iprecord update` and `build` write
 * when not told where: $IPRECORD_DATA when set and not empty, else the
 * platform's place for an application's data: $XDG_DATA_HOME/iprecord
 * (`~/.local/share/iprecord`) on Linux and other Unix systems,
 * `~/Library/Application Support/iprecord` on macOS and
 * `%LOCALAPPDATA%\iprecord` on Windows.
 */
export function userDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
  if (env.IPRECORD_DATA) return env.IPRECORD_DATA;
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'iprecord');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'iprecord');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'iprecord');
}

/**
 * The dataset directory to answer from when none is given: $IPRECORD_DATA
 * when set (empty: none, the installed data alone), else the user's
 * dataset directory (`userDataDir`) when a build is there (its `current`
 * file), or, `waiting` (a server that watches it), once the directory is
 * there at all; else none.
 */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home = homedir(),
  waiting = false,
): string | undefined {
  if (env.IPRECORD_DATA !== undefined) return env.IPRECORD_DATA || undefined;
  const dir = userDataDir(env, platform, home);
  return existsSync(waiting ? dir : join(dir, CURRENT_FILE)) ? dir : undefined;
}

/** A feed's state in a build: `ok`: compiled; `missing`: no local copy of a URL yet; `failed`: unreadable. */
export type FeedState = 'ok' | 'missing' | 'failed';

/** A build's `manifest.json`: when it was built, its files, and each configured feed's state. */
export interface Manifest {
  readonly format: 1;
  readonly builtAt: string;
  readonly threat: string;
  /** The compiled dataset with the feeds compiled in, when the build made one. */
  readonly dataset?: string;
  readonly feeds: readonly {
    readonly name: string;
    readonly state: FeedState;
    /** What the configuration says it lists (a feed that failed has no other record of it). */
    readonly categories?: readonly Category[];
    readonly entries: number;
    readonly badLines: number;
    readonly error?: string;
  }[];
}

/** The manifest of a dataset directory's build (`resolveDataset`), or null when there is none. @throws InvalidDatasetError when it is unreadable */
export function readManifest(build: string | null): Manifest | null {
  if (build === null) return null;
  const path = join(build, MANIFEST_FILE);
  let text: string;
  try {
    text = readRegularText(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InvalidDatasetError(`Cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return JSON.parse(text) as Manifest;
  } catch (e) {
    throw new InvalidDatasetError(`${path} is not valid JSON.`, { cause: e });
  }
}

/** IPv4 addresses, IPv6 /48s (a piece under a /48 counts as one). */
export interface Space {
  readonly ipv4: number;
  readonly ipv6_48s: number;
}

/** What changed against the build before (`changes.json`, `info().changes`; docs/cli.md, iprecord diff). */
export interface Changes {
  readonly before: string;
  readonly after: string;
  readonly changed: Space;
  readonly answered: Space;
  readonly members: Readonly<Record<string, Space>>;
  readonly lists: {
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly { readonly name: string; readonly before: string; readonly after: string }[];
  };
}

/** The changes a build holds (`changes.json`), or null (none: its directory's first build, or one not written by iprecord). */
export function readChanges(build: string | null): Changes | null {
  if (build === null) return null;
  try {
    return JSON.parse(readRegularText(join(build, CHANGES_FILE))) as Changes;
  } catch {
    return null;
  }
}
