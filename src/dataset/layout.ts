/**
 * The compiled dataset: every static value of every record, for the whole
 * address space, in one file that is mapped (or read) and answered from
 * without parsing. `src/compile/` writes it; the engine reads it. The
 * format is written down in `docs/dataset-format.md`; this module is its
 * statement in code.
 */

import type { ThreatMeta } from './threat-meta.js';
import type { ZoneTable } from '../time/zone.js';
import { ASN_STORED, CARRIER_MEMBERS, PLACE_MEMBERS, type AsnMember, type CarrierMember, type PlaceMember } from '../record/template.js';

export const DATASET_MAGIC = 'IPRDSET4';
export const DATASET_FORMAT_VERSION = 4;
export const HEADER = 80;
/** Where the header keeps the checksum of the bytes after it. */
export const CRC_AT = 68;
/** Index blocks: an address's first 20 bits. */
export const INDEX_SHIFT = 12;
export const INDEX_WORDS = (1 << 20) + 1;

/**
 * A family's index over its ranges, whose first words (`top`) ascend: for
 * each block of an address's first 20 bits, the number of ranges that
 * start before it (the last word: all of them). What the compiler writes
 * and the whole-file check expects: one pass over the ranges, the blocks
 * filled between them.
 */
export function rangeIndex(count: number, top: (range: number) => number): Uint32Array {
  const index = new Uint32Array(INDEX_WORDS);
  let block = 0;
  for (let r = 0; r < count; r++) {
    const b = top(r) >>> INDEX_SHIFT;
    if (b >= block) {
      index.fill(r, block, b + 1);
      block = b + 1;
    }
  }
  index.fill(count, block);
  return index;
}

export const NO_ZONE = 0xffffffff;
/** A string column's null. */
export const NO_STRING = 0xffffffff;
/** Set in a string's end: its JSON text has escapes (else it is the string in quotes). */
export const ESCAPED = 0x80000000;
/** Route prefix of a range whose record has no network (no `asn.route`). */
export const NO_ROUTE = 255;

/**
 * The tables after the ranges: rows of this many words. A word names a row
 * of the table named (`zones` may be NO_ZONE); `text` and `end` are a
 * value's JSON text (a string quoted, a number, a boolean, an array or an
 * object), the start and end of its slice of the text (`text.ts`; a start
 * of NO_STRING: null; ESCAPED set in the end: a string with escapes);
 * `f64` pairs are a number (NaN: null); `pad` is zero. Every value is
 * stored once, as JSON text; a row holds every value a record reads of it.
 *
 * - records: a range's location, network and threat
 * - locations: latitude and longitude as float64 (what records as objects
 *   read: the one value kept in a second form), country, zone, place,
 *   postal code, latitude and longitude as text
 * - places: the record's place members (`PLACE_MEMBERS`: city, region,
 *   region_code, region_type)
 * - countries: `COUNTRY_VALUES` in order (`flag` is made from the code)
 * - networks: the members of `asn` but its route (`ASN_STORED`: asn, name,
 *   domain, type), then the carrier's (name, mcc, mnc); no `asn`: no
 *   network; no mcc: no carrier
 * - threats: the threat object and its form without is_vpn and scores,
 *   then the threat flags of single sources (what a build merging threat
 *   feeds into the dataset combines with their labels: `compile/merge.ts`)
 */
const TEXT = ['text', 'end'] as const;
/** The values of a country row, in its order. */
export const COUNTRY_VALUES = ['is_eu', 'country_name', 'country_code', 'continent_name', 'continent_code', 'calling_code', 'emoji_flag', 'emoji_unicode', 'languages', 'currency'] as const;
export const TABLES = {
  records: ['locations', 'networks', 'threats'],
  locations: ['f64', 'f64', 'f64', 'f64', 'countries', 'zones', 'places', ...TEXT, ...TEXT, ...TEXT, 'pad'],
  places: PLACE_MEMBERS.flatMap(() => TEXT) as readonly ('text' | 'end')[],
  countries: COUNTRY_VALUES.flatMap(() => TEXT),
  networks: [...ASN_STORED, ...CARRIER_MEMBERS].flatMap(() => TEXT) as readonly ('text' | 'end')[],
  threats: [...TEXT, ...TEXT, 'flags'],
} as const;
export type TableName = keyof typeof TABLES;
/** Row widths, in words. */
export const RECORD = TABLES.records.length;
export const LOCATION = TABLES.locations.length;
export const PLACE = TABLES.places.length;
export const COUNTRY = TABLES.countries.length;
export const NETWORK = TABLES.networks.length;
export const THREAT = TABLES.threats.length;
/** Where a location row holds each value (latitude and longitude as float64 at words 0 and 2). */
export const LOC = { country: 4, zone: 5, place: 6, postal: 7, latitude: 9, longitude: 11 } as const;
/** Where a place row holds each member's text: the record's place members in order (`PLACE_MEMBERS`). */
export const PL = Object.freeze(Object.fromEntries(PLACE_MEMBERS.map((k, i) => [k, i * 2]))) as Readonly<Record<PlaceMember, number>>;
/** Where a network row holds each member of `asn` it stores (`ASN_STORED`), and then each of the carrier's. */
export const NET = Object.freeze(Object.fromEntries(ASN_STORED.map((k, i) => [k, i * 2]))) as Readonly<Record<Exclude<AsnMember, 'route'>, number>>;
export const CARRIER_AT = Object.freeze(Object.fromEntries(CARRIER_MEMBERS.map((k, i) => [k, (ASN_STORED.length + i) * 2]))) as Readonly<Record<CarrierMember, number>>;
/** Where a country row holds each value (`COUNTRY_VALUES`). */
export const CTY = Object.fromEntries(COUNTRY_VALUES.map((k, i) => [k, i * 2])) as Record<(typeof COUNTRY_VALUES)[number], number>;
/** Where a threat row holds its object, its basic form and its flags. */
export const THR = { object: 0, basic: 2, flags: 4 } as const;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/** The counts of a dataset's header, in order. */
export interface Counts {
  readonly v4: number;
  readonly v6: number;
  readonly rows: Readonly<Record<TableName, number>>;
  /** The text's ASCII part, in bytes; its other part, in UTF-16 code units and in UTF-8 bytes. */
  readonly asciiBytes: number;
  readonly otherUnits: number;
  readonly otherBytes: number;
  readonly metaBytes: number;
}

const COUNT_WORDS = 6 + TABLE_NAMES.length;

/** The header's count words. */
export function countWords(c: Counts): number[] {
  return [c.v4, c.v6, ...TABLE_NAMES.map((t) => c.rows[t]), c.asciiBytes, c.otherUnits, c.otherBytes, c.metaBytes];
}

/** The counts of a header (at least HEADER bytes). */
export function readCounts(buf: Buffer): Counts {
  const w = Array.from({ length: COUNT_WORDS }, (_, i) => buf.readUInt32LE(12 + i * 4));
  const rows = Object.fromEntries(TABLE_NAMES.map((t, i) => [t, w[2 + i]])) as Record<TableName, number>;
  const [asciiBytes, otherUnits, otherBytes, metaBytes] = w.slice(2 + TABLE_NAMES.length);
  return { v4: w[0], v6: w[1], rows, asciiBytes, otherUnits, otherBytes, metaBytes };
}

/** Bytes padded to a multiple of 8 (in doubles: a header's counts may be anything). */
export const pad8 = (n: number): number => Math.ceil(n / 8) * 8;

/** Where each section of a file with these counts starts, in bytes, and the file's size. */
export function layout(c: Counts) {
  let at = HEADER;
  const next = (bytes: number) => {
    const start = at;
    at += pad8(bytes);
    return start;
  };
  const sections = {
    index4: next(INDEX_WORDS * 4),
    starts4: next(c.v4 * 4),
    refs4: next(c.v4 * 4),
    index6: next(INDEX_WORDS * 4),
    starts6: next(c.v6 * 16),
    refs6: next(c.v6 * 4),
    ...(Object.fromEntries(TABLE_NAMES.map((t) => [t, next(c.rows[t] * TABLES[t].length * 4)])) as Record<TableName, number>),
    ascii: next(c.asciiBytes),
    other: next(c.otherBytes),
    meta: next(c.metaBytes),
  };
  return { ...sections, size: at };
}

export interface DatasetMeta {
  readonly zones: readonly string[];
  /** The rules of those zones, from one tz database release (`time/zone.ts`). */
  readonly timeZones: ZoneTable;
  readonly builtAt: string;
  /** What the dataset was compiled from, in a form that tells when to compile again (`dataset/locate.ts`). */
  readonly key: string;
  /** The databases it was compiled from. */
  readonly sources: readonly SourceInfo[];
  /** The threat feeds compiled in (`iprecord build`), as threat.bin describes them. */
  readonly threat?: ThreatMeta;
}

/** A database a dataset was compiled from. */
export interface SourceInfo {
  /** `networks`: a network registry (PeeringDB's network objects), for `asn.type`. */
  readonly role: 'geo' | 'asn' | 'anonymous' | 'networks';
  /** The file, or the package the data came from. */
  readonly path: string;
  readonly schema: string;
  readonly databaseType: string;
  readonly buildEpoch: string;
  /** 6 for a database whose tree holds both families (and for a network registry, which is of neither). */
  readonly ipVersion: 4 | 6;
  readonly nodeCount: number;
  readonly bytes: number;
  /** The installed default data package, a download by `iprecord update`, or a file of the user's (`compile/origins/origin.ts`). */
  readonly origin: 'package' | 'download' | 'file';
  /** The package and version, the URL, or the path. */
  readonly from: string;
  /** When the data was made, as far as it says. */
  readonly dataDate: string | null;
}
