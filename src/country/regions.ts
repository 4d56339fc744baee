/**
 * `region_code` and `region_type` from ISO 3166-2.
 *
 * Databases that carry subdivision codes (MaxMind City) are read as they
 * are; databases that carry only a region name (DB-IP Lite) are matched to
 * a first-level subdivision of the same country: by the normalised name;
 * else by the name without generic words ("Kyiv City" and "Kyiv") when one
 * subdivision's names alone reduce to it; else by the most similar name
 * (Jaro-Winkler above `FUZZY_THRESHOLD`) when it is one subdivision's. The
 * table comes from `scripts/gen-subdivisions.ts` (Debian's iso-codes); a
 * row with the code '' holds names that denote no subdivision. Answers are
 * cached per (country, name).
 *
 * The table holds one line of text per country (rows `code;type;name;...`
 * joined by `|`, an empty type for none), read on the country's first use:
 * nested JSON arrays cost the package's import milliseconds, string
 * literals almost nothing.
 */

import SUBDIVISIONS from './subdivisions.json';
import { coreRegion, normalizeRegion } from './normalize.js';

/** Jaro-Winkler similarity a fuzzy match must exceed. */
export const FUZZY_THRESHOLD = 0.9;

export interface Subdivision {
  /** The subdivision part of the ISO 3166-2 code (`CA` of `US-CA`). */
  readonly code: string;
  /** Its kind, lower case (`state`, `province`, `governorate`), or null. */
  readonly type: string | null;
}

interface CountryIndex {
  /** Each normalised name: its subdivision (the first given it). */
  readonly byName: Map<string, Subdivision>;
  /** Each name without generic words: its subdivision, or null when names of two reduce to it ("almaty" of Almaty and of Almaty oblysy). */
  readonly byCore: Map<string, Subdivision | null>;
  readonly byCode: Map<string, Subdivision>;
  readonly names: readonly (readonly [string, Subdivision])[];
}

type Row = readonly [code: string, type: string | null, ...names: string[]];

const table = SUBDIVISIONS as Record<string, string | undefined>;

/** ISO 3166-2's subdivision types that are not English or not singular, as `region_type` writes them. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  Land: 'state',
  'Islands, groups of islands': 'island group',
  'Group of islands (20 inhabited islands)': 'island group',
  'Chain (of islands)': 'island chain',
  'Autonomous city in north africa': 'autonomous city',
};

/** `region_type` for an ISO 3166-2 subdivision type ("Land" is a German state): English, singular, lower case. */
export function subdivisionType(iso: string): string {
  return Object.hasOwn(TYPE_NAMES, iso) ? TYPE_NAMES[iso] : iso.toLowerCase();
}

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
  const byCore = new Map<string, Subdivision | null>();
  const byCode = new Map<string, Subdivision>();
  const names: [string, Subdivision][] = [];
  for (const [code, type, ...aliases] of decodeRows(line)) {
    const sub: Subdivision = Object.freeze({ code, type });
    byCode.set(code, sub);
    for (const a of aliases) {
      if (!byName.has(a)) byName.set(a, sub);
      names.push([a, sub]);
      const core = coreRegion(a);
      if (core === '') continue;
      const seen = byCore.get(core);
      byCore.set(core, seen === undefined || seen === sub ? sub : null);
    }
  }
  idx = { byName, byCore, byCode, names };
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
  const sub = findRow(cc, name);
  // The row of names that denote no subdivision (a city of several, a city-state's whole).
  return sub === null || sub.code === '' ? null : sub;
}

/**
 * The row a name denotes: the one with that name; else the one whose names
 * alone reduce to the same without generic words; else the most similar
 * name's, if one subdivision's alone is the most similar.
 */
function findRow(cc: string, name: string): Subdivision | null {
  const idx = indexOf(cc);
  if (!idx) return null;
  const full = normalizeRegion(name);
  const core = coreRegion(name);
  const exact = idx.byName.get(full) ?? (core ? idx.byCore.get(core) : undefined);
  if (exact !== undefined) return exact;
  let best: Subdivision | null = null;
  let bestScore = FUZZY_THRESHOLD;
  for (const [alias, sub] of idx.names) {
    const score = Math.max(jaroWinkler(alias, full), core ? jaroWinkler(alias, core) : 0);
    if (score > bestScore) {
      best = sub;
      bestScore = score;
    } else if (score === bestScore && best !== sub) best = null;
  }
  return best;
}

/** The subdivision with this code (subdivision part only), or null. */
export function subdivisionByCode(cc: string, code: string): Subdivision | null {
  return code === '' ? null : (indexOf(cc)?.byCode.get(code) ?? null);
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
