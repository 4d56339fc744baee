/**
 * The package's own zone table: the tz release iprecord was published
 * with (`zones.json`, 47 kB), for the compiler and the zoneinfo choice. Not
 * in `zone.ts`, so that what reads a dataset's own table (every engine,
 * `iprecord/bytes`) does not carry it.
 */

import ZONES from './zones.json';
import type { ZoneTable } from './zone.js';

export const PACKAGE_ZONES: ZoneTable = Object.freeze({ ...(ZONES as Omit<ZoneTable, 'source'>), source: 'package' });
