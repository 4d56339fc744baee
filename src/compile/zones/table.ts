/**
 * The zone table a dataset carries: the rules of the zones its records
 * name, from the release `zoneSource()` chooses (the system's zoneinfo when
 * newer than the package's table; `time/zoneinfo.ts`).
 */

import { join } from 'node:path';
import type { ZoneRules, ZoneTable } from '../../time/zone.js';
import { PACKAGE_ZONES } from '../../time/package-zones.js';
import { readRegular } from '../../files/read.js';
import { zoneSource } from '../../time/zoneinfo.js';
import { zoneRules } from './tzif.js';

/** A zone file's largest size: the biggest of the tz database, fat, is under 4 KiB. */
const MAX_ZONE_FILE_BYTES = 64 * 1024;

/** Epoch seconds of an ISO date. */
const seconds = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000;

/**
 * The rules of these zones from the chosen release. A zone whose file in a
 * zoneinfo directory cannot be read (missing, not a regular file, too
 * large, damaged, a rule out of range) takes the package's rules for that
 * zone, named in the table (`fromPackage`) and in a process warning (code
 * IPRECORD_ZONEINFO); a directory that cannot be read at all, or a zone the
 * package lacks too, gives way to the package's table whole. A build
 * never fails or waits for one zone.
 */
export function zoneTable(names: readonly string[], source = zoneSource()): ZoneTable {
  if (source.source !== 'package') {
    try {
      const failed: string[] = [];
      const table = readZoneinfo(source.source, source.tzdata, names, (name, why) => {
        const i = PACKAGE_ZONES.zones[name];
        if (i === undefined) throw why;
        failed.push(`${name} (${why.message})`);
        return PACKAGE_ZONES.rules[i];
      });
      if (failed.length > 0)
        process.emitWarning(
          `the zoneinfo in ${source.source} (tz ${source.tzdata}) cannot be read for ${failed.length} zones, which follow the package's tz ${PACKAGE_ZONES.tzdata}: ${failed.join('; ')}`,
          {
            code: 'IPRECORD_ZONEINFO',
          },
        );
      return table;
    } catch (e) {
      process.emitWarning(
        `the zoneinfo in ${source.source} (tz ${source.tzdata}) cannot be read, ${(e as Error).message}: the package's tz ${PACKAGE_ZONES.tzdata} is used`,
        {
          code: 'IPRECORD_ZONEINFO',
        },
      );
    }
  }
  return subset(PACKAGE_ZONES, names);
}

/**
 * Reads the rules of these zones from a zoneinfo directory's TZif files, over the package table's span.
 * `instead` answers the rules of a zone whose file cannot be read (or throws); without it, that zone is an error.
 * @throws Error for a zone without a readable file and no `instead`
 */
export function readZoneinfo(
  dir: string,
  tzdata: string,
  names: readonly string[],
  instead?: (name: string, why: Error) => ZoneRules,
): ZoneTable {
  const { from, to } = PACKAGE_ZONES;
  const read = new Map<string, ZoneRules>();
  const fromPackage: string[] = [];
  for (const name of names) {
    if (!/^[A-Za-z0-9_+-]+(\/[A-Za-z0-9_+-]+)*$/.test(name)) throw new Error(`${name} is not a zone file name`);
    try {
      read.set(name, zoneRules(readRegular(join(dir, name), MAX_ZONE_FILE_BYTES), seconds(from), seconds(to)));
    } catch (e) {
      const path = join(dir, name);
      const message = (e as Error).message;
      const why = new Error(message.startsWith(path) ? message : `${path}: ${message}`, { cause: e });
      if (instead === undefined) throw why;
      read.set(name, instead(name, why));
      fromPackage.push(name);
    }
  }
  return shared({ tzdata, source: dir, from, to, ...(fromPackage.length === 0 ? {} : { fromPackage }) }, read);
}

/** A table's rules of these zones alone. */
function subset(table: ZoneTable, names: readonly string[]): ZoneTable {
  const { tzdata, source, from, to } = table;
  return shared({ tzdata, source, from, to }, new Map(names.map((n) => [n, table.rules[table.zones[n]]])));
}

/** A table of these rules, zones with the same periods sharing them, in the order of the names given. */
function shared(release: Omit<ZoneTable, 'zones' | 'rules'>, byName: ReadonlyMap<string, ZoneRules>): ZoneTable {
  const rules: ZoneRules[] = [];
  const at = new Map<string, number>();
  const zones: Record<string, number> = {};
  for (const [name, r] of byName) {
    if (r === undefined) throw new Error(`no rules for zone ${name}`);
    const key = JSON.stringify(r);
    let i = at.get(key);
    if (i === undefined) at.set(key, (i = rules.push(r) - 1));
    zones[name] = i;
  }
  return { ...release, zones, rules };
}
