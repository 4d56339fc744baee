/**
 * Generates src/time/country-zones.json from the tz database's zone.tab
 * (public domain; Debian's tzdata has it at /usr/share/zoneinfo/zone.tab):
 * per ISO 3166-1 country, its zones with their principal location's
 * coordinates (degrees, 2 decimals). A zone found for an address from its
 * coordinates that is not one of its country's is replaced by the
 * country's zone nearest to them. Run: npx tsx scripts/gen-country-zones.ts [zone.tab]
 */
import { readFileSync, writeFileSync } from 'node:fs';

const path = process.argv[2] ?? '/usr/share/zoneinfo/zone.tab';
/** `+DDMM`/`+DDMMSS` and `+DDDMM`/`+DDDMMSS` to degrees. */
function degrees(text: string, width: 2 | 3): number {
  const sign = text[0] === '-' ? -1 : 1;
  const d = Number(text.slice(1, 1 + width));
  const m = Number(text.slice(1 + width, 3 + width));
  const s = text.length > 3 + width ? Number(text.slice(3 + width, 5 + width)) : 0;
  return Math.round(sign * (d + m / 60 + s / 3600) * 100) / 100;
}
const out: Record<string, [string, number, number][]> = {};
for (const line of readFileSync(path, 'utf8').split('\n')) {
  if (line === '' || line.startsWith('#')) continue;
  const [cc, coords, zone] = line.split('\t');
  const m = /^([+-]\d{4,6})([+-]\d{5,7})$/.exec(coords);
  if (!m) throw new Error(`${path}: cannot read the coordinates of ${zone} (${coords})`);
  (out[cc] ??= []).push([zone, degrees(m[1], 2), degrees(m[2], 3)]);
}
const sorted = Object.fromEntries(
  Object.keys(out)
    .sort()
    .map((cc) => [cc, out[cc]]),
);
writeFileSync(new URL('../src/time/country-zones.json', import.meta.url), JSON.stringify(sorted) + '\n');
console.log(`wrote ${Object.keys(sorted).length} countries, ${Object.values(sorted).flat().length} zones from ${path}`);
