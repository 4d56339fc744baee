/**
 * Where a configuration's databases are read from when a dataset is
 * compiled: paths as they are, URLs from their last good download
 * (`update.ts`). Kept apart from the downloads, which need the compiler to
 * check what they fetch: this is on the path of every build.
 */

import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { DatasetSources } from '../../dataset/locate.js';
import type { Role } from '../geo/facts.js';
import { isUrl, type SourcesConfig } from '../feeds/config.js';

/** Where the last good download of a role's `index`-th URL is kept. */
export function sourcePath(dir: string, role: Role | 'networks', index: number, url: string): string {
  const name = basename(new URL(url).pathname).replace(/\.gz$/i, '') || 'download';
  return join(dir, 'sources', `${role}-${index}-${name}`);
}

/**
 * The local files a build compiles: paths as they are; each URL's last
 * good download in `dir`. A geo or ASN list with a URL not downloaded yet
 * gives null (the installed default data stands in); such an Anonymous-IP
 * or network registry URL is left out.
 */
export function localSources(s: SourcesConfig, dir: string | null): DatasetSources {
  const local = (role: Role | 'networks', list: readonly string[] | null): string[] | null => {
    if (list === null) return null;
    // A path stands as it is (a missing one is an error when compiled); a URL by its download, if there is one.
    const files = list
      .map((entry, i) => (!isUrl(entry) ? entry : dir === null ? null : sourcePath(dir, role, i, entry)))
      .map((f, i) => (f !== null && (!isUrl(list[i]) || existsSync(f)) ? f : null));
    const present = files.filter((f): f is string => f !== null);
    return present.length === files.length || role === 'anonymous' || role === 'networks' ? present : null;
  };
  const networks = local('networks', s.networks) ?? [];
  return {
    geo: local('geo', s.geo),
    asn: local('asn', s.asn),
    anonymous: local('anonymous', s.anonymous) ?? [],
    ...(networks.length === 0 ? {} : { networks }),
  };
}
