/**
 * Table rows, values and zone names of a dataset being compiled, each
 * stored once and numbered in the order first met. Build time only.
 *
 * Over 300 lines: each table's interning shares one numbering and value store.
 */

import {
  CARRIER_AT,
  COUNTRY_VALUES,
  ESCAPED,
  LOC,
  NET,
  NET_PART,
  NET_TYPED_BY,
  registryWord,
  THR,
  THREAT,
  NO_STRING,
  NO_ZONE,
  TABLE_NAMES,
  TABLES,
  typedByWord,
  ZONE_FROM,
  type TableName,
} from '../dataset/format.js';
import { ASN_STORED, CARRIER_MEMBERS, LOCATION_MEMBERS, PLACE_MEMBERS } from '../contract/template.js';
import { basicThreat, labelledThreat, staleBogon, threatOf } from '../record/threat.js';
import type { Location, NetworkOwner } from './sources.js';
import type { ThreatTree } from './feeds/tree.js';
import { OTHER } from '../dataset/text.js';
import type { Threat } from '../contract/types.js';

/** Records are numbered in 24 bits of a range's ref. */
export const MAX_RECORDS = 1 << 24;

/**
 * Rows of one table, in the order added. `row()` finds a row by its own
 * values (an open-addressing hash over the rows themselves, made on its
 * first call): a table keyed by JSON strings of the values held a million
 * long strings and spent a third of the default compile building, hashing
 * and collecting them.
 */
export class Table {
  rows: Uint32Array;
  count = 0;
  /** Row ids by slot (-1: empty), twice as many slots as rows at least; null until `row()` is first called. */
  private slots: Int32Array | null = null;

  /** An empty table, or one that goes on from the rows of a compiled dataset's (`base`). */
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

  /** Adds a row (its `width` first values); its id. */
  add(values: ArrayLike<number>): number {
    const id = this.count++;
    if (this.rows.length < this.count * this.width) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    const { rows, width } = this;
    for (let i = 0; i < width; i++) rows[id * width + i] = values[i];
    return id;
  }

  /** The id of the row with these values (its `width` first), added when there is none. */
  row(values: ArrayLike<number>): number {
    if (this.slots === null || (this.count + 1) * 2 > this.slots.length) this.index();
    const { rows, width } = this;
    const slots = this.slots as Int32Array;
    const mask = slots.length - 1;
    for (let i = this.slot(values, 0, mask); ; i = (i + 1) & mask) {
      const id = slots[i];
      if (id === -1) return (slots[i] = this.add(values));
      let same = true;
      for (let w = 0; w < width && same; w++) same = rows[id * width + w] === values[w] >>> 0;
      if (same) return id;
    }
  }

  private slot(values: ArrayLike<number>, at: number, mask: number): number {
    let h = 0x811c9dc5;
    for (let w = 0; w < this.width; w++) h = Math.imul(h ^ values[at + w], 0x01000193);
    h ^= h >>> 15;
    return Math.imul(h, 0x2c1b3c6d) & mask;
  }

  /** The slots made again for twice the rows there are, every row in them. */
  private index(): void {
    let size = 1 << 10;
    while (size < (this.count + 1) * 4) size *= 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let id = 0; id < this.count; id++) {
      let i = this.slot(this.rows, id * this.width, mask);
      while (slots[i] !== -1) i = (i + 1) & mask;
      slots[i] = id;
    }
    this.slots = slots;
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

/** A number as the two words of its float64 (little-endian, as the file); -0 as 0, as its JSON text. */
const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
function numberWords(v: number | null | undefined): Uint32Array {
  f64[0] = v == null ? NaN : v + 0;
  return f64Words;
}

/** Starts and ends of text, by the ids of the values they were made for. */
class Slices {
  private pairs = new Uint32Array(1 << 12);
  set(id: number, start: number, end: number): void {
    if (id * 2 >= this.pairs.length) {
      const grown = new Uint32Array(this.pairs.length * 2);
      grown.set(this.pairs);
      this.pairs = grown;
    }
    this.pairs[id * 2] = start;
    this.pairs[id * 2 + 1] = end;
  }
  copy(id: number, out: Uint32Array, at: number): void {
    out[at] = this.pairs[id * 2];
    out[at + 1] = this.pairs[id * 2 + 1];
  }
}

/**
 * The JSON text of the tables' values, each once, in the two parts of
 * `dataset/text.ts`. Strings are found by themselves and numbers by their
 * float64, so that the JSON text of a value is made only when it is new.
 */
export class TextPool {
  /** Values of ASCII only, and the others (after those of a compiled dataset's text: `base`). */
  readonly ascii: string[] = [];
  readonly other: string[] = [];
  private asciiUnits: number;
  private otherUnits: number;
  /** Starts of JSON texts given whole (`add`, `known`). */
  private readonly starts = new Map<string, number>();
  /** String values by themselves, and numbers by their float64: ids in their slices. */
  private readonly strings = new Map<string, number>();
  private readonly stringSlices = new Slices();
  private readonly numbers = new Table(2);
  private readonly numberSlices = new Slices();
  private readonly scratch = new Uint32Array(2);

  constructor(base?: { asciiBytes: number; otherUnits: number }) {
    this.asciiUnits = base?.asciiBytes ?? 0;
    this.otherUnits = base?.otherUnits ?? 0;
  }

  /** A value's start and end (ESCAPED set for a string with escapes; null: NO_STRING twice). */
  slice(value: unknown): [number, number] {
    this.put(value, this.scratch, 0);
    return [this.scratch[0], this.scratch[1]];
  }

  /** Writes a value's start and end at `out[at]` and `out[at + 1]` (as `slice`). */
  put(value: unknown, out: Uint32Array, at: number): void {
    if (typeof value === 'string') {
      let id = this.strings.get(value);
      if (id === undefined) {
        const json = JSON.stringify(value);
        id = this.strings.size;
        this.strings.set(value, id);
        this.stringSlices.set(id, ...this.text(json, json.length !== value.length + 2));
      }
      this.stringSlices.copy(id, out, at);
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      const known = this.numbers.count;
      const id = this.numbers.row(numberWords(value));
      if (id === known) this.numberSlices.set(id, ...this.text(JSON.stringify(value + 0), false));
      this.numberSlices.copy(id, out, at);
    } else if (value === null || value === undefined || typeof value === 'number') {
      out[at] = out[at + 1] = NO_STRING;
    } else {
      const [start, end] = this.add(JSON.stringify(value));
      out[at] = start;
      out[at + 1] = end;
    }
  }

  /** Makes JSON text of the base's text at `start` known, so that it is not stored again. */
  known(json: string, start: number): void {
    this.starts.set(json, start);
  }

  /** JSON text's start and end (ESCAPED set when `escaped`). */
  add(json: string, escaped = false): [number, number] {
    const start = this.starts.get(json);
    if (start !== undefined) return [start, (start + json.length + (escaped ? ESCAPED : 0)) >>> 0];
    const slice = this.text(json, escaped);
    this.starts.set(json, slice[0]);
    return slice;
  }

  /** Stores JSON text; its start and end. */
  private text(json: string, escaped: boolean): [number, number] {
    let start: number;
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
    return [start, (start + json.length + (escaped ? ESCAPED : 0)) >>> 0];
  }
}

/** Rows, values and zones, each stored once. */
export class Interner {
  readonly text = new TextPool();
  readonly zones = new Texts();
  readonly tables = Object.fromEntries(TABLE_NAMES.map((t) => [t, new Table(TABLES[t].length)])) as Record<TableName, Table>;
  /** Country rows by code, and threat rows by label, flags and staleness (`threat()`). */
  private readonly countryIds = new Map<string, number>();
  private readonly threatIds = new Map<number, number>();
  /** The row being made (as wide as the widest). */
  private readonly row = new Uint32Array(Math.max(...TABLE_NAMES.map((t) => TABLES[t].length)));

  zone(name: string | null): number {
    return name === null ? NO_ZONE : this.zones.id(name);
  }

  /** A location's row (its country's and place's rows made when new); null: no location. */
  location(part: Location | null): number {
    const { text, row } = this;
    const { countries, locations, places } = this.tables;
    const country = part?.country ?? null;
    const code = country?.country_code ?? '';
    let c = this.countryIds.get(code);
    if (c === undefined) {
      COUNTRY_VALUES.forEach((k, i) => text.put(country === null ? null : country[k], row, i * 2));
      c = countries.add(row);
      this.countryIds.set(code, c);
    }
    for (let i = 0; i < PLACE_MEMBERS.length; i++) text.put(part?.[PLACE_MEMBERS[i]], row, i * 2);
    const p = places.row(row);
    row.set(numberWords(part?.latitude), 0);
    row.set(numberWords(part?.longitude), 2);
    row[4] = c;
    row[5] = this.zone(part?.zone ?? null);
    row[6] = p;
    for (const k of LOCATION_MEMBERS) text.put(part?.[k], row, LOC[k]);
    // The parts: rendered when the file is written.
    row.fill(0, LOC.part, LOC.zoneFrom);
    row[LOC.zoneFrom] = ZONE_FROM.indexOf(part?.zoneFrom ?? 'none');
    return locations.row(row);
  }

  /** A network owner's row; null: no network. */
  network(n: NetworkOwner | null): number {
    for (const k of ASN_STORED) this.text.put(n?.[k], this.row, NET[k]);
    for (const k of CARRIER_MEMBERS) this.text.put(n?.carrier?.[k], this.row, CARRIER_AT[k]);
    this.row.fill(0, NET_PART.head, NET_TYPED_BY);
    this.row[NET_TYPED_BY] =
      n === null ? 0 : n.typedBy === 'registry' ? registryWord(n.statement ?? 0) : typedByWord(n.typedBy, n.share, n.places);
    return this.tables.networks.row(this.row);
  }

  /** A threat part: the feeds' label and the flags the data sets; `routed`: the network data has a route there (`staleBogon`). */
  threat(tree: ThreatTree | null, label: number, flags: number, routed: boolean): number {
    const stale = tree !== null && label !== 0 && staleBogon(tree, label, routed);
    const key = (label * 256 + flags) * 2 + (stale ? 1 : 0);
    let id = this.threatIds.get(key);
    if (id === undefined) {
      const t = tree === null || label === 0 ? threatOf(flags) : labelledThreat(tree, label, flags, routed);
      id = this.tables.threats.add(threatRow(this.text, t, flags));
      this.threatIds.set(key, id);
    }
    return id;
  }

  /** @throws Error past MAX_RECORDS */
  record(location: number, network: number, threat: number): number {
    return recordRow(this.tables.records, location, network, threat, this.row);
  }
}

/** A threat row of a threat object (its text and its basic form's), with the flags single sources set; its parts zero (rendered when the file is written). */
export function threatRow(text: TextPool, t: Threat, flags: number): Uint32Array {
  const row = new Uint32Array(THREAT);
  row.set(text.add(JSON.stringify(t)), THR.object);
  row.set(text.add(JSON.stringify(basicThreat(t))), THR.basic);
  row[THR.flags] = flags;
  return row;
}

/**
 * The id of the record row of a location, network and threat, added when new (`scratch`: three words at least).
 * @throws Error past MAX_RECORDS
 */
export function recordRow(records: Table, location: number, network: number, threat: number, scratch: Uint32Array): number {
  scratch[0] = location;
  scratch[1] = network;
  scratch[2] = threat;
  const id = records.row(scratch);
  if (id >= MAX_RECORDS) throw new Error('too many distinct records for one dataset');
  return id;
}
