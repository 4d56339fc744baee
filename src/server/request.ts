/**
 * A request's target as the API reads it: the operation of its path
 * (`/`, `/<ip>`, `/<field>`, `/<ip>/<field>`, `/bulk`, ...), its query
 * (`api-key`, `fields`, `callback`), the host and absolute-form targets.
 */

import { parseIp } from '../ip/index.js';
import { isFieldName, selectsNothing } from '../record/fields.js';

/** What a request asks for, once its target is parsed. */
export const enum Op {
  Lookup,
  Field,
  Bulk,
  Health,
  Flag,
  Explain,
}

export interface Route {
  op: Op;
  /** The address in the path; null for the caller's own. */
  ip: string | null;
  /** The field (Field), or the flag file name (Flag). */
  name: string;
}

export interface Query {
  key: string | null;
  fields: string | null;
  callback: string | null;
}

export const NO_QUERY: Query = { key: null, fields: null, callback: null };

/** The path and query of an absolute-form target (`http://host/8.8.8.8?x`), or null. */
export function absolutePath(target: string): string | null {
  const m = /^https?:\/\/[^/?#]*/i.exec(target);
  if (m === null) return null;
  const rest = target.slice(m[0].length);
  return rest === '' || rest.charCodeAt(0) === 63 /* ? */ ? '/' + rest : rest;
}

export function hostName(host: string | undefined): string {
  if (host === undefined) return '';
  const h = host.toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

function decodeSegment(s: string): string {
  if (s.indexOf('%') < 0) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The operation of a path (`/`, `/<ip>`, `/<field>`, `/<ip>/<field>`, ...), or null (404). */
export function parsePath(path: string): Route | null {
  if (path === '/' || path === '') return { op: Op.Lookup, ip: null, name: '' };
  const parts = path.slice(1).split('/');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length > 2 || parts.some((p) => p === '')) return null;
  const first = decodeSegment(parts[0]);
  if (parts.length === 1) {
    if (first === 'bulk') return { op: Op.Bulk, ip: null, name: '' };
    if (first === 'healthz') return { op: Op.Health, ip: null, name: '' };
    if (isFieldName(first)) return { op: Op.Field, ip: null, name: first };
    return { op: Op.Lookup, ip: first, name: '' };
  }
  if (first === 'flags') return { op: Op.Flag, ip: null, name: decodeSegment(parts[1]) };
  // Outside the service's API: the evidence behind an address's record (`Engine.explain`).
  if (first === 'explain') return { op: Op.Explain, ip: decodeSegment(parts[1]), name: '' };
  const name = decodeSegment(parts[1]);
  // `/<ip>/<unknown>` is a field error; `/<unknown>/<anything else>` (`/euro/8.8.8.8`) no path of the API.
  if (!isFieldName(name) && parseIp(first) === null) return null;
  return { op: Op.Field, ip: first, name };
}

/** `api-key`, `fields` and `callback` (the first of each); a `fields` that names no field (`fields=`) is none. */
export function parseQuery(text: string): Query {
  if (text === '') return NO_QUERY;
  const params = new URLSearchParams(text);
  const fields = params.get('fields');
  return {
    key: params.get('api-key'),
    fields: fields === null || selectsNothing(fields) ? null : fields,
    callback: params.get('callback'),
  };
}
