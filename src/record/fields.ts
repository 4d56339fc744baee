/**
 * Field names and the `fields` parameter: a comma-separated list, answered
 * in the order requested, each name at most once.
 */

import { InvalidFieldError } from '../contract/errors.js';
import type { FieldName } from '../contract/types.js';
import { RECORD_MEMBERS } from '../contract/template.js';

/** Selectable field names: the record's members in its key order (CONTRACT.md), as the template lists them. */
export const FIELD_NAMES: readonly FieldName[] = RECORD_MEMBERS;

const KNOWN: ReadonlySet<string> = new Set(FIELD_NAMES);

/** Whether a name is a selectable field. */
export function isFieldName(name: unknown): name is FieldName {
  return typeof name === 'string' && KNOWN.has(name);
}

const parsed = new Map<string, readonly FieldName[] | null>();
/** Distinct `fields` strings kept parsed. */
const FIELDS_CACHE_SIZE = 1024;

/**
 * Parses a `fields` value: a comma-separated string or an array of names.
 * Blank entries are ignored; a repeated name counts once. A value that
 * names no field (`''`, as the service's Python client sends `fields=`, or
 * only commas and spaces) selects nothing: null, the full record.
 * @throws InvalidFieldError naming the first unknown field.
 */
export function parseFields(fields: string | readonly string[]): readonly FieldName[] | null {
  if (typeof fields === 'string') {
    const hit = parsed.get(fields);
    if (hit) return hit;
    const list = resolve(fields.split(','));
    if (parsed.size >= FIELDS_CACHE_SIZE) parsed.clear();
    parsed.set(fields, list);
    return list;
  }
  if (!Array.isArray(fields)) throw new InvalidFieldError(fields);
  // A list given before, found by its names (an array written in the call is a new one each time, with the same
  // strings): no text is made of it.
  const seen = fields.length > 0 && typeof fields[0] === 'string' ? parsedLists.get(fields[0]) : undefined;
  if (seen !== undefined) for (const s of seen) if (sameNames(s.names, fields)) return s.list;
  // A list is its text: the same cached list for both, so that what is compiled for it (`fieldSelection`, kept by list) is compiled once.
  let text = '';
  for (let i = 0; i < fields.length; i++) {
    const name: unknown = fields[i];
    if (typeof name !== 'string' || name.includes(',')) return resolve(fields);
    text = i === 0 ? name : `${text},${name}`;
  }
  const list = parseFields(text);
  if (fields.length > 0) {
    if (listCount >= FIELDS_CACHE_SIZE) {
      parsedLists.clear();
      listCount = 0;
    }
    const entry = { names: Object.freeze([...fields]) as readonly string[], list };
    const same = parsedLists.get(fields[0]);
    if (same === undefined) parsedLists.set(fields[0], [entry]);
    else same.push(entry);
    listCount++;
  }
  return list;
}

/** Lists of names parsed (`parseFields`), by their first name; at most FIELDS_CACHE_SIZE of them. */
const parsedLists = new Map<string, { readonly names: readonly string[]; readonly list: readonly FieldName[] | null }[]>();
let listCount = 0;

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function resolve(names: readonly unknown[]): readonly FieldName[] | null {
  const out: FieldName[] = [];
  for (const raw of names) {
    const name = typeof raw === 'string' ? raw.trim() : raw;
    if (name === '') continue;
    if (!isFieldName(name)) throw new InvalidFieldError(name);
    if (!out.includes(name)) out.push(name);
  }
  return out.length === 0 ? null : Object.freeze(out);
}

/** Whether a `fields` text names no field (empty, or only commas and white space): the full record. */
export function selectsNothing(fields: string): boolean {
  return fields.split(',').every((name) => name.trim() === '');
}
