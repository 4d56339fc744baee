/**
 * `region_code` and `region_type` from ISO 3166-2.
 *
 * Databases that carry subdivision codes (MaxMind City) are read as they
 * are; databases that carry only a region name (DB-IP Lite) are matched to
 * a subdivision of the same country: first by the normalised name, then by
 * the name without generic words ("Kyiv City" and "Kyiv"), then by the most
 * similar name (Jaro-Winkler at least `FUZZY_THRESHOLD`). The table comes
 * from `scripts/gen-subdivisions.ts`. Answers are cached per (country, name).
 *
 * The table holds one line of text per country (rows `code;type;name;...`
 * joined by `|`, an empty type for none), read on the country's first use:
 * 420 KB of nested JSON arrays cost the package's import about 8 ms, string
 * literals almost nothing.
 */

import SUBDIVISIONS from './subdivisions.json';
import { coreRegion, normalizeRegion } from './normalize.js';

/** Lowest Jaro-Winkler similarity accepted for a fuzzy match. */
export const FUZZY_THRESHOLD = 0.9;

export interface Subdivision {
  /** The subdivision part of the ISO 3166-2 code (`CA` of `US-CA`). */
  readonly code: string;
  /** Its kind, lower case (`state`, `province`, `governorate`), or null. */
  readonly type: string | null;
}

interface CountryIndex {
  readonly byName: Map<string, Subdivision>;
  readonly byCode: Map<string, Subdivision>;
  readonly names: readonly (readonly [string, Subdivision])[];
}

type Row = readonly [code: string, type: string | null, ...names: string[]];

const table = SUBDIVISIONS as Record<string, string | undefined>;

/** One country's rows as the table writes them. */
export function encodeRows(rows: readonly Row[]): string {
  return rows
    .map((row) => {
      for (const f of row) if (f !== null && /[;|]/.test(f)) throw new Error(`separator in subdivision field: ${f}`);
      const [code, type, ...names] = row;
      return [code, type ?? '', ...names].join(';');
    })
    .join('|');
}

/** The rows of one country's line. */
export function decodeRows(line: string): Row[] {
  return line.split('|').map((text) => {
    const [code, type, ...names] = text.split(';');
    return [code, type === '' ? null : type, ...names] as const;
  });
}
const indexes = new Map<string, CountryIndex | null>();
const answers = new Map<string, Subdivision | null>();

function indexOf(cc: string): CountryIndex | null {
  let idx = indexes.get(cc);
  if (idx !== undefined) return idx;
  const line = table[cc];
  if (line === undefined || !Object.hasOwn(table, cc)) {
    indexes.set(cc, null);
    return null;
  }
  const byName = new Map<string, Subdivision>();
  const byCode = new Map<string, Subdivision>();
  const names: [string, Subdivision][] = [];
  for (const [code, type, ...aliases] of decodeRows(line)) {
    const sub: Subdivision = Object.freeze({ code, type });
    byCode.set(code, sub);
    for (const a of aliases) {
      if (!byName.has(a)) byName.set(a, sub);
      names.push([a, sub]);
    }
    // Also each name without generic words, as the matcher sees them now.
    for (const a of aliases) {
      const core = coreRegion(a);
      if (core !== '' && !byName.has(core)) byName.set(core, sub);
    }
  }
  idx = { byName, byCode, names };
  indexes.set(cc, idx);
  return idx;
}

/** The subdivision of country `cc` that a region name denotes, or null. */
export function matchRegion(cc: string, name: string): Subdivision | null {
  const key = cc + '|' + name;
  const cached = answers.get(key);
  if (cached !== undefined) return cached;
  const answer = findRegion(cc, name);
  answers.set(key, answer);
  return answer;
}

function findRegion(cc: string, name: string): Subdivision | null {
  const idx = indexOf(cc);
  if (!idx) return null;
  const full = normalizeRegion(name);
  const core = coreRegion(name);
  const exact = idx.byName.get(full) ?? (core ? idx.byName.get(core) : undefined);
  if (exact) return exact;
  let best: Subdivision | null = null;
  let bestScore = FUZZY_THRESHOLD;
  for (const [alias, sub] of idx.names) {
    const score = Math.max(jaroWinkler(alias, full), core ? jaroWinkler(alias, core) : 0);
    if (score >= bestScore) {
      if (score > bestScore || best === null) best = sub;
      bestScore = score;
    }
  }
  return best;
}

/** The subdivision with this code (subdivision part only), or null. */
export function subdivisionByCode(cc: string, code: string): Subdivision | null {
  return indexOf(cc)?.byCode.get(code) ?? null;
}

/** Whether ISO 3166-2 lists subdivisions for the country. */
export function hasSubdivisions(cc: string): boolean {
  return indexOf(cc) !== null;
}

/** Jaro-Winkler similarity of two strings, 0 to 1. */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  const matchedA = new Uint8Array(la);
  const matchedB = new Uint8Array(lb);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const from = Math.max(0, i - window);
    const to = Math.min(lb, i + window + 1);
    for (let j = from; j < to; j++) {
      if (!matchedB[j] && a.charCodeAt(i) === b.charCodeAt(j)) {
        matchedA[i] = matchedB[j] = 1;
        matches++;
        break;
      }
    }
  }
  if (matches === 0) return 0;
  let transpositions = 0;
  for (let i = 0, k = 0; i < la; i++) {
    if (!matchedA[i]) continue;
    while (!matchedB[k]) k++;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) transpositions++;
    k++;
  }
  const m = matches;
  const jaro = (m / la + m / lb + (m - transpositions / 2) / m) / 3;
  let prefix = 0;
  while (prefix < 4 && prefix < la && prefix < lb && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix++;
  return jaro + prefix * 0.1 * (1 - jaro);
}
