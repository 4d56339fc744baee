// @ts-nocheck: a one-off generator over an untyped package.
/**
 * Generates src/time/abbreviations.json: for every time zone, the
 * abbreviation the tz database writes for each UTC offset the zone uses from
 * 2020 on (`PST`/`PDT`, `CET`/`CEST`, `IST`, `AEDT`). Offsets whose tz
 * abbreviation is numeric (`-03`, `+0530`) are left out: they are derived
 * from the offset at run time, the same way the tz database writes them.
 *
 * Source: the tz database as packed by moment-timezone (install it for this
 * script only: npm i --no-save moment-timezone). Run: npx tsx scripts/gen-tz-abbrs.ts
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { numericAbbreviation } from '../src/time/abbr.js';

const require = createRequire(import.meta.url);
const moment = require('moment-timezone');
const FROM = Date.UTC(2020, 0, 1);
const out = {};
const names = new Set([...moment.tz.names(), ...Intl.supportedValuesOf('timeZone')]);
for (const name of [...names].sort()) {
  const zone = moment.tz.zone(name);
  if (!zone) continue;
  const map = {};
  for (let i = 0; i < zone.untils.length; i++) {
    if (zone.untils[i] < FROM) continue;
    const east = -zone.offsets[i];
    const abbr = zone.abbrs[i];
    if (abbr !== numericAbbreviation(east)) map[east] = abbr;
  }
  if (Object.keys(map).length) out[name] = map;
}
writeFileSync(new URL('../src/time/abbreviations.json', import.meta.url), JSON.stringify({ tzdata: moment.tz.dataVersion, zones: out }) + '\n');
console.log(`tz ${moment.tz.dataVersion}: ${Object.keys(out).length} zones with letter abbreviations`);
