// @ts-nocheck: a one-off generator over an untyped package.
/**
 * Generates src/time/zones.json: every time zone's periods from 2020 on
 * (until when each holds, its offset in minutes east of UTC, the tz
 * database's abbreviation), from one release of the IANA tz database, so
 * that `time_zone` is the same on every runtime whatever tz data its ICU
 * carries. Zones with the same periods (links) share them.
 *
 * Source: the tz database as moment-timezone packs it (a dev dependency,
 * which tracks IANA's releases). Run after updating it:
 * npx tsx scripts/gen-tz-rules.ts
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const moment = require('moment-timezone');
const FROM = Date.UTC(2020, 0, 1);
/** Transitions up to here (the tz database's own tables stop at 2037 where rules repeat). */
const TO = Date.UTC(2038, 0, 1);
const rules: unknown[] = [];
const keys = new Map<string, number>();
const zones: Record<string, number> = {};
for (const name of moment.tz.names().sort()) {
  const zone = moment.tz.zone(name);
  const at = zone.untils.findIndex((u) => u > FROM);
  const end = zone.untils.findIndex((u) => u > TO);
  // Periods from the one in effect in 2020: offsets east (moment's are west), untils in minutes (the last: none).
  const last = end < 0 ? zone.untils.length : end + 1;
  const offsets = zone.offsets.slice(at, last).map((o) => (o === 0 ? 0 : -o));
  const abbrs = zone.abbrs.slice(at, last);
  const untils = zone.untils.slice(at, last - 1).map((u) => u / 60_000);
  if (untils.some((u) => !Number.isInteger(u))) throw new Error(`${name}: a transition off the minute`);
  const rule = { o: offsets, a: abbrs, u: untils };
  const key = JSON.stringify(rule);
  if (!keys.has(key)) keys.set(key, rules.push(rule) - 1);
  zones[name] = keys.get(key);
}
writeFileSync(
  new URL('../src/time/zones.json', import.meta.url),
  JSON.stringify({ tzdata: moment.tz.dataVersion, from: '2020-01-01', to: '2038-01-01', zones, rules }) + '\n',
);
console.log(`tz ${moment.tz.dataVersion}: ${Object.keys(zones).length} zones, ${rules.length} distinct`);
