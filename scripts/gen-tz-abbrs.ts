// @ts-nocheck: a one-off generator over an untyped package.
/**
 * Generates src/time/abbreviations.json: for every time zone, the
 * abbreviation the tz database writes for each period the zone has from
 * 2020 on (`PST`/`PDT`, `CET`/`CEST`, `IST`, `AEDT`), keyed by the
 * period's offset and the next other offset, in minutes (`-420>-480`: PDT;
 * `-420>-420`: no change ahead, MST in British Columbia from 2026). The run
 * time finds both from the runtime's own offsets (`time/zone.ts`), so a
 * runtime whose tz data is older or newer than this table's finds the
 * abbreviation of the rules it follows (PDT in summer under the rules
 * before 2026, MST under the rules after; Jordan: EEST until 2022, +03
 * after), or the numeric one, never one that contradicts its offset. Offsets whose
 * tz abbreviation is numeric (`-03`, `+0530`) are left out: they are
 * derived from the offset at run time, as the tz database writes them.
 *
 * Source: the tz database as packed by moment-timezone (install it for this
 * script only: npm i --no-save moment-timezone, or name an installed copy
 * with MOMENT_TIMEZONE=/path/to/moment-timezone). Run: npx tsx scripts/gen-tz-abbrs.ts
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { HORIZON_DAYS, numericAbbreviation } from '../src/time/abbr.js';

const require = createRequire(import.meta.url);
const moment = require(process.env.MOMENT_TIMEZONE ?? 'moment-timezone');
const FROM = Date.UTC(2020, 0, 1);
const out = {};
const names = new Set([...moment.tz.names(), ...Intl.supportedValuesOf('timeZone')]);
for (const name of [...names].sort()) {
  const zone = moment.tz.zone(name);
  if (!zone) continue;
  const map = {};
  const n = zone.untils.length;
  for (let i = 0; i < n; i++) {
    if (zone.untils[i] < FROM) continue;
    const east = -zone.offsets[i];
    // The next other offset, as the run time finds it (periods of the same offset are one to it).
    let j = i + 1;
    while (j < n && -zone.offsets[j] === east) j++;
    const next = j < n ? -zone.offsets[j] : east;
    const start = Math.max(i === 0 ? FROM : zone.untils[i - 1], FROM);
    const change = j < n ? zone.untils[j - 1] : Infinity;
    // Seen from more than HORIZON before the change, the run time finds no next offset.
    const keys = [`${east}>${next}`];
    if (next !== east && change - start > HORIZON_DAYS * 86_400_000) keys.push(`${east}>${east}`);
    // Later periods win: a numeric abbreviation removes what an earlier period of the same key wrote.
    for (const key of keys) {
      if (zone.abbrs[i] === numericAbbreviation(east)) delete map[key];
      else map[key] = zone.abbrs[i];
    }
  }
  if (Object.keys(map).length) out[name] = map;
}
// Zones that share their periods (every US Eastern zone) share one entry: `zones` names its place in `periods`.
const periods = [];
const placeOf = new Map();
const zones = {};
for (const [name, map] of Object.entries(out)) {
  const key = JSON.stringify(map);
  if (!placeOf.has(key)) placeOf.set(key, periods.push(map) - 1);
  zones[name] = placeOf.get(key);
}
writeFileSync(new URL('../src/time/abbreviations.json', import.meta.url), JSON.stringify({ tzdata: moment.tz.dataVersion, periods, zones }) + '\n');
console.log(`tz ${moment.tz.dataVersion}: ${Object.keys(out).length} zones with letter abbreviations, ${periods.length} distinct`);
