/**
 * Where a database file came from, for `info()`: the installed default data
 * package, a download by `iprecord update` (its URL and time, from the
 * state file beside it), or a file of the user's; and the date of its data.
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { shownUrl } from '../../files/url.js';

/** What `describeOrigin` tells of a database file. */
export interface SourceOrigin {
  readonly origin: 'package' | 'download' | 'file';
  /** The package and version (`@ip-location-db/asn@2.3.2026061719`), or the URL. */
  readonly from: string;
  /** When the data was made, as far as it says: an MMDB's build time, a package's release date, a download's Last-Modified, else when it was fetched or modified. */
  readonly dataDate: string | null;
  /** The data's licence as its package states it (`CC-BY-4.0`); absent where nothing states one (a download, a file). */
  readonly licence?: string;
}

/** What `iprecord update` writes beside a download (`<file>.json`). */
export interface DownloadState {
  readonly url: string;
  readonly etag?: string;
  readonly lastModified?: string;
  readonly networks: number;
  /** The addresses its networks cover, per family (IPv6 outside the ranges where IPv6 trees file IPv4); absent in states written before. */
  readonly space?: { readonly 4: number; readonly 6: number };
  readonly fetchedAt: string;
}

/** The state file of a download, or null. */
export function readDownloadState(path: string): DownloadState | null {
  try {
    const s = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as DownloadState;
    return typeof s.url === 'string' && typeof s.fetchedAt === 'string' ? s : null;
  } catch {
    return null;
  }
}

/** The version of the npm package a file belongs to, walking up to its package.json. */
function packageOf(path: string): { name: string; version: string; license?: string } | null {
  if (!/[\\/]node_modules[\\/]/.test(path)) return null;
  let dir = dirname(path);
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string; license?: unknown };
      if (pkg.name && pkg.version)
        return { name: pkg.name, version: pkg.version, ...(typeof pkg.license === 'string' ? { license: pkg.license } : {}) };
    } catch {
      // Not here: one folder up.
    }
  }
  return null;
}

const iso = (d: Date) => (Number.isNaN(d.getTime()) ? null : d.toISOString());

/**
 * The origin of a database file and its data's date: `buildEpoch`, an
 * MMDB's own build time, first; then the package's release date (the
 * @ip-location-db versions end in YYYYMMDDhh), the download's
 * Last-Modified or fetch time, or the file's modification time.
 */
export function describeOrigin(path: string, buildEpoch: string | null): SourceOrigin {
  const download = readDownloadState(path);
  if (download !== null) {
    const sent = download.lastModified ? iso(new Date(download.lastModified)) : null;
    return { origin: 'download', from: shownUrl(download.url), dataDate: buildEpoch ?? sent ?? download.fetchedAt };
  }
  const pkg = packageOf(path);
  if (pkg !== null) {
    const m = /\.(\d{4})(\d\d)(\d\d)\d*$/.exec(pkg.version);
    const released = m ? iso(new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`)) : null;
    // "SEE LICENSE IN DBIP-LICENSE (CC-BY-4.0)": the identifier in brackets, else the field as it is.
    const licence = pkg.license === undefined ? {} : { licence: /\(([^()]+)\)\s*$/.exec(pkg.license)?.[1] ?? pkg.license };
    return { origin: 'package', from: `${pkg.name}@${pkg.version}`, dataDate: buildEpoch ?? released, ...licence };
  }
  let modified: string | null = null;
  try {
    modified = statSync(path).mtime.toISOString();
  } catch {
    // Gone since it was read: no date.
  }
  return { origin: 'file', from: path, dataDate: buildEpoch ?? modified };
}
