/**
 * Table rows, values and zone names of a dataset being compiled, each
 * stored once and numbered in the order first met. Build time only.
 */

import { COUNTRY_VALUES, ESCAPED, NO_STRING, NO_ZONE, TABLE_NAMES, TABLES, type TableName } from '../dataset/format.js';
import { basicThreat, labelledThreat, staleBogon, threatOf } from '../record/threat.js';
import type { Location, NetworkOwner } from './sources.js';
import type { ThreatTree } from './feeds/tree.js';
import { OTHER } from '../dataset/text.js';

/** Records are numbered in 24 bits of a range's ref. */
export const MAX_RECORDS = 1 << 24;

/** Rows of one table, each stored once. */
export class Table {
  rows: Uint32Array;
  count = 0;
  private readonly ids = new Map<string | number, number>();
  /** An empty table, or one that goes on from the rows of a compiled dataset's (`base`, found by other means than a key). */
  constructor(
    private readonly width: number,
    base?: Uint32Array,
  ) {
    this.rows = new Uint32Array(Math.max((base?.length ?? 0) * 2, width * 1024));
    if (base !== undefined) {
      this.rows.set(base);
      this.count = base.length / width;
    }
  }

  /** The id of the row with this key, or -1. */
  find(key: string | number): number {
    return this.ids.get(key) ?? -1;
  }

  /** Adds a row under a new key (null: found by other means); its id. */
  add(key: string | number | null, ...values: number[]): number {
    const id = this.count++;
    if (this.rows.length < this.count * this.width) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows.set(values, id * this.width);
    if (key !== null) this.ids.set(key, id);
    return id;
  }
}

/**
 * Ids by three whole numbers (a record's location, network and threat): an
 * open-addressing hash table over typed arrays. A Map keyed by their
 * combination held a million boxed numbers and allocated one per lookup
 * of the ten million ranges: a third of the default compile was GC.
 */
export class TripleIndex {
  private keys = new Int32Array(3 << 16);
  private ids = new Int32Array(1 << 16).fill(-1);
  private count = 0;

  private static slot(a: number, b: number, c: number, mask: number): number {
    let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77) ^ Math.imul(c, 0xc2b2ae3d);
    h ^= h >>> 15;
    return Math.imul(h, 0x2c1b3c6d) & mask;
  }

  /** The id of (a, b, c), or -1. */
  find(a: number, b: number, c: number): number {
    const { keys, ids } = this;
    const mask = ids.length - 1;
    for (let i = TripleIndex.slot(a, b, c, mask); ids[i] !== -1; i = (i + 1) & mask) {
      if (keys[i * 3] === a && keys[i * 3 + 1] === b && keys[i * 3 + 2] === c) return ids[i];
    }
    return -1;
  }

  /** Adds (a, b, c), not yet present, with its id. */
  add(a: number, b: number, c: number, id: number): void {
    if (++this.count * 2 > this.ids.length) this.grow();
    const { keys, ids } = this;
    const mask = ids.length - 1;
    let i = TripleIndex.slot(a, b, c, mask);
    while (ids[i] !== -1) i = (i + 1) & mask;
    keys[i * 3] = a;
    keys[i * 3 + 1] = b;
    keys[i * 3 + 2] = c;
    ids[i] = id;
  }

  private grow(): void {
    const { keys, ids } = this;
    this.keys = new Int32Array(keys.length * 2);
    this.ids = new Int32Array(ids.length * 2).fill(-1);
    this.count = 1;
    for (let i = 0; i < ids.length; i++) if (ids[i] !== -1) this.add(keys[i * 3], keys[i * 3 + 1], keys[i * 3 + 2], ids[i]);
  }
}

/** Texts numbered in the order first met, each once. */
class Texts {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.list.push(text) - 1;
      this.ids.set(text, id);
    }
    return id;
  }
}

/** The JSON text of the tables' values, each once, in the two parts of `dataset/text.ts`. */
export class TextPool {
  /** Values of ASCII only, and the others (after those of a compiled dataset's text: `base`). */
  readonly ascii: string[] = [];
  readonly other: string[] = [];
  private asciiUnits: number;
  private otherUnits: number;
  private readonly starts = new Map<string, number>();

  constructor(base?: { asciiBytes: number; otherUnits: number }) {
    this.asciiUnits = base?.asciiBytes ?? 0;
    this.otherUnits = base?.otherUnits ?? 0;
  }

  /** A value's start and end (ESCAPED set for a string with escapes; null: NO_STRING twice). */
  slice(value: unknown): [number, number] {
    if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return [NO_STRING, NO_STRING];
    // -0 is written as 0, as JSON.stringify writes it.
    const json = JSON.stringify(typeof value === 'number' ? value + 0 : value);
    return this.add(json, typeof value === 'string' && json.length !== value.length + 2);
  }

  /** Makes JSON text of the base's text at `start` known, so that it is not stored again. */
  known(json: string, start: number): void {
    this.starts.set(json, start);
  }

  /** JSON text's start and end (ESCAPED set when `escaped`). */
  add(json: string, escaped = false): [number, number] {
    let start = this.starts.get(json);
    if (start === undefined) {
      if (/^[\x00-\x7f]*$/.test(json)) {
        start = this.asciiUnits;
        this.ascii.push(json);
        this.asciiUnits += json.length;
      } else {
        start = OTHER + this.otherUnits;
        this.other.push(json);
        this.otherUnits += json.length;
      }
      if (this.asciiUnits >= OTHER || this.otherUnits >= ESCAPED - OTHER) throw new Error('too much text for one dataset');
      this.starts.set(json, start);
    }
    return [start, (start + json.length + (escaped ? ESCAPED : 0)) >>> 0];
  }
}

/** A number as the two words of its float64 (little-endian, as the file). */
const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
function numberWords(v: number | null | undefined): [number, number] {
  // -0 is written as 0 in the JSON text: the same here.
  f64[0] = v == null ? NaN : v + 0;
  return [f64Words[0], f64Words[1]];
}

/** Rows, values and zones, each stored once. */
export class Interner {
  readonly text = new TextPool();
  readonly zones = new Texts();
  readonly tables = Object.fromEntries(TABLE_NAMES.map((t) => [t, new Table(TABLES[t].length)])) as Record<TableName, Table>;
  private readonly records = new TripleIndex();

  zone(name: string | null): number {
    return name === null ? NO_ZONE : this.zones.id(name);
  }

  /** A location's row (its country's and place's rows made when new); null: no location. */
  location(part: Location | null): number {
    const country = part?.country ?? null;
    const { countries, locations, places } = this.tables;
    // Most source records repeat a location: found by its values, before any is stored.
    const key = part === null ? '' : JSON.stringify([country?.country_code, part.city, part.region, part.region_code, part.region_type, part.latitude, part.longitude, part.postal, part.zone]);
    const id = locations.find(key);
    if (id >= 0) return id;
    const { text } = this;
    const code = country?.country_code ?? '';
    let c = countries.find(code);
    if (c < 0) c = countries.add(code, ...COUNTRY_VALUES.flatMap((k) => text.slice(country === null ? null : country[k])));
    const placeValues = [part?.city, part?.region, part?.region_code, part?.region_type].flatMap((v) => text.slice(v ?? null));
    const placeKey = placeValues.join(',');
    let p = places.find(placeKey);
    if (p < 0) p = places.add(placeKey, ...placeValues);
    const [latitude, longitude] = [part?.latitude ?? null, part?.longitude ?? null];
    const values = [part?.postal ?? null, latitude, longitude].flatMap((v) => text.slice(v));
    return locations.add(key, ...numberWords(latitude), ...numberWords(longitude), c, this.zone(part?.zone ?? null), p, ...values, 0);
  }

  /** A network owner's row; null: no network. */
  network(n: NetworkOwner | null): number {
    const values = [n?.asn, n?.name, n?.domain, n?.type, n?.carrier?.name, n?.carrier?.mcc, n?.carrier?.mnc].flatMap((v) => this.text.slice(v ?? null));
    const key = values.join(',');
    const id = this.tables.networks.find(key);
    return id >= 0 ? id : this.tables.networks.add(key, ...values);
  }

  /** A threat part: the feeds' label and the flags the data sets; `routed`: the network data has a route there (`staleBogon`). */
  threat(tree: ThreatTree | null, label: number, flags: number, routed: boolean): number {
    const stale = tree !== null && label !== 0 && staleBogon(tree, label, routed);
    const key = (label * 256 + flags) * 2 + (stale ? 1 : 0);
    const id = this.tables.threats.find(key);
    if (id >= 0) return id;
    const t = tree === null || label === 0 ? threatOf(flags) : labelledThreat(tree, label, flags, routed);
    return this.tables.threats.add(key, ...this.text.add(JSON.stringify(t)), ...this.text.add(JSON.stringify(basicThreat(t))), flags);
  }
  /** @throws Error past MAX_RECORDS */
  record(location: number, network: number, threat: number): number {
    const found = this.records.find(location, network, threat);
    if (found >= 0) return found;
    const records = this.tables.records;
    if (records.count >= MAX_RECORDS) throw new Error('too many distinct records for one dataset');
    const id = records.add(null, location, network, threat);
    this.records.add(location, network, threat, id);
    return id;
  }
}
