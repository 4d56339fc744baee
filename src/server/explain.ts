/**
 * `GET /explain/<ip>` as a server answers it: the engine's explanation
 * with every file named by its name alone, so that a key holder learns
 * nothing of the server's file system.
 */

import { basename, isAbsolute } from 'node:path';
import type { Explanation } from '../evidence/explain.js';

/** A path by its file name; anything else (a package, a URL) as it is. */
const named = (where: string): string => (isAbsolute(where) ? basename(where) : where);

export function publicExplanation(e: Explanation): Explanation {
  const { databases, timeZones, threat } = e.sources;
  return {
    ...e,
    sources: {
      ...e.sources,
      databases: databases.map((d) => ({ ...d, path: named(d.path), from: named(d.from) })),
      timeZones: { ...timeZones, source: named(timeZones.source), from: named(timeZones.from), to: named(timeZones.to) },
      threat: threat === null ? null : { ...threat, path: named(threat.path) },
    },
  };
}
