/**
 * Fragments, table rows and zone names of a dataset being compiled, each
 * stored once and numbered in the order first met. Build time only.
 */

import { NO_ZONE, TABLE_NAMES, TABLES, type TableName } from '../dataset/format.js';
import { basicThreat, buildThreat, threatOf } from '../record/threat.js';
import type { Location } from './sources.js';
import type { ThreatTree } from '../threat/tree.js';
import { countryPieces, locationPieces } from './fragments.js';

/** Records are numbered in 24 bits of a range's ref. */
const MAX_RECORDS = 1 << 24;
/** A record's key: (location * NETWORKS + network) * THREATS + threat, below 2^53 (a text past THREATS threats). */
const LOCATIONS = 2 ** 21;
const NETWORKS = 2 ** 20;
const THREATS = 2 ** 12;

/** Rows of one table, each stored once. */
class Table {
  rows: Uint32Array;
  count = 0;
  private readonly ids = new Map<string | number, number>();
  constructor(private readonly width: number) {
    this.rows = new Uint32Array(width * 1024);
  }

  /** The id of the row with this key, or -1. */
  find(key: string | number): number {
    return this.ids.get(key) ?? -1;
  }

  /** Adds a row under a new key; its id. */
  add(key: string | number, ...values: number[]): number {
    const id = this.count++;
    if (this.rows.length < this.count * this.width) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows.set(values, id * this.width);
    this.ids.set(key, id);
    return id;
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

/** Fragments, rows and zones, each stored once. */
export class Interner {
  readonly fragments = new Texts();
  readonly zones = new Texts();
  readonly tables = Object.fromEntries(TABLE_NAMES.map((t) => [t, new Table(TABLES[t].length)])) as Record<TableName, Table>;

  fragment(text: string): number {
    return this.fragments.id(text);
  }

  zone(name: string | null): number {
    return name === null ? NO_ZONE : this.zones.id(name);
  }

  /** A location's row (its country's row made when new); null: no location. */
  location(part: Location | null): number {
    const country = part?.country ?? null;
    const code = country?.country_code ?? '';
    const { countries, locations } = this.tables;
    let c = countries.find(code);
    if (c < 0) c = countries.add(code, ...countryPieces(country).map((t) => this.fragment(t)));
    const [place, point] = locationPieces(part).map((t) => this.fragment(t));
    const zone = this.zone(part?.zone ?? null);
    const key = `${c},${place},${point},${zone}`;
    const id = locations.find(key);
    return id >= 0 ? id : locations.add(key, c, place, point, zone);
  }

  network(head: string, tail: string): number {
    const [h, t] = [this.fragment(head), this.fragment(tail)];
    const id = this.tables.networks.find(`${h},${t}`);
    return id >= 0 ? id : this.tables.networks.add(`${h},${t}`, h, t);
  }

  /** The threat row of a threat feeds' label (0: none) with the flags single sources assert (ASN type, registry, Anonymous-IP). */
  threat(tree: ThreatTree | null, label: number, flags: number): number {
    const key = label * 256 + flags;
    const id = this.tables.threats.find(key);
    if (id >= 0) return id;
    const t = tree === null || label === 0 ? threatOf(flags) : buildThreat({ counts: tree.counts(label), hits: tree.hits(label) }, flags, tree.blocklists(label));
    return this.tables.threats.add(key, this.fragment(JSON.stringify(t)), this.fragment(JSON.stringify(basicThreat(t))), flags);
  }

  /** @throws Error past MAX_RECORDS */
  record(location: number, network: number, threat: number): number {
    if (location >= LOCATIONS || network >= NETWORKS) throw new Error('too many distinct locations or networks for one dataset');
    const key = threat < THREATS ? (location * NETWORKS + network) * THREATS + threat : `${location},${network},${threat}`;
    const records = this.tables.records;
    const id = records.find(key);
    if (id >= 0) return id;
    if (records.count >= MAX_RECORDS) throw new Error('too many distinct records for one dataset');
    return records.add(key, location, network, threat);
  }
}
