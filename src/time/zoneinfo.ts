/**
 * Which tz database release a dataset's zone rules come from: the
 * package's own table, or the system's zoneinfo (`TZDIR`, else
 * `/usr/share/zoneinfo`) when it holds a newer release, so that a system
 * whose tz data is kept current (`apt upgrade tzdata`) gives current
 * offsets at the next compile (`iprecord update`, or an `open()` of data
 * whose key names an older release). Read here for the dataset's key;
 * `compile/zones/` reads the rules.
 */

import { closeSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openRegular } from '../files/read.js';
import { PACKAGE_ZONES } from './package-zones.js';

/** The zoneinfo directory the system's tz functions read. */
export const zoneinfoDir = (): string => process.env.TZDIR || '/usr/share/zoneinfo';

/** The release of a zoneinfo directory: the version line of its `tzdata.zi` (Debian, Alpine, Fedora), else its `+VERSION` file (macOS); null when it states none. */
export function zoneinfoRelease(dir: string): string | null {
  const head = (name: string) => {
    let fd: number | undefined;
    try {
      // A regular file only: a FIFO here would hold the open forever.
      fd = openRegular(join(dir, name)).fd;
      const b = Buffer.alloc(64);
      return b.toString('latin1', 0, readSync(fd, b, 0, 64, 0));
    } catch {
      return null;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };
  const zi = head('tzdata.zi');
  const version = zi === null ? head('+VERSION') : (/^# version (\S+)/.exec(zi)?.[1] ?? null);
  return version === null ? null : (/^\d{4}[a-z]+$/.exec(version.trim())?.[0] ?? null);
}

/** Whether release `a` (`2026g`) is later than `b` (`2026f`; `2026aa` after `2026z`). */
export function laterRelease(a: string, b: string): boolean {
  const [ya, la] = [a.slice(0, 4), a.slice(4)];
  const [yb, lb] = [b.slice(0, 4), b.slice(4)];
  if (ya !== yb) return ya > yb;
  return la.length !== lb.length ? la.length > lb.length : la > lb;
}

/** Where a dataset compiled now takes its zone rules: the system's zoneinfo when its release is later than the package's, else the package (`source: 'package'`). */
export function zoneSource(dir = zoneinfoDir()): { readonly tzdata: string; readonly source: string } {
  const release = zoneinfoRelease(dir);
  if (release !== null && laterRelease(release, PACKAGE_ZONES.tzdata)) return { tzdata: release, source: dir };
  return { tzdata: PACKAGE_ZONES.tzdata, source: 'package' };
}
