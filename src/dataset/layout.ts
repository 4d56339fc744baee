/**
 * The compiled dataset: every static part of every record, for the whole
 * address space, in one file that is mapped (or read) and answered from
 * without parsing. `src/compile/` writes it; the engine reads it.
 *
 * The IPv4 and IPv6 spaces are each one partition into ranges, each
 * range with one static record and the prefix length of the ASN network
 * it lies in (`asn.route` is the address masked to it). A static record is
 * a row of fragment ids: pieces of the record's JSON text, fully resolved
 * and rendered when the dataset was compiled, each stored once however
 * many records use it.
 *
 * File layout (little-endian; every section a multiple of 8 bytes, read as
 * typed arrays):
 *
 *     0  magic "IPRDSET2" (8 bytes)    8  u32 format version
 *    12  u32 counts: IPv4 ranges R4, IPv6 ranges R6, then the rows of each
 *        table (records, locations, places, countries, networks, threats),
 *        fragments F, fragment bytes, the text's ASCII bytes, its other
 *        part's length in UTF-16 code units and in bytes, metadata bytes:
 *        14 words to 68
 *    68  u32 CRC-32 of bytes 80..end   72  reserved (zeros) to 80
 *    80  IPv4 index: 2^20 + 1 × u32 (first range starting in each block of 4 096 addresses)
 *        IPv4 starts: R4 × u32;  IPv4 refs: R4 × u32 (record << 8 | route prefix)
 *        IPv6 index: 2^20 + 1 × u32 (by the first 20 bits)
 *        IPv6 starts: R6 × 4 u32;  IPv6 refs: R6 × u32
 *        the tables, rows of u32 (`TABLES`): records, locations, places,
 *          countries, networks, threats
 *        fragment offsets: F + 1 × u32 into the fragment bytes
 *        fragment bytes (UTF-8 JSON text; see compile/fragments.ts)
 *        text: every string and number of the tables as JSON text, each
 *          once: values of ASCII only, then the others in UTF-8 (`text.ts`)
 *        metadata: JSON (zones, sources, build time), padded with spaces.
 *
 * Every section starts at a multiple of 8 bytes. Records as JSON copy
 * fragments; records as objects read the same values from the tables'
 * numbers and slices of the text, without parsing.
 */

import type { ThreatMeta } from './threat-meta.js';

export const DATASET_MAGIC = 'IPRDSET2';
export const DATASET_FORMAT_VERSION = 2;
export const HEADER = 80;
/** Where the header keeps the checksum of the bytes after it. */
export const CRC_AT = 68;
/** Index blocks: an address's first 20 bits. */
export const INDEX_SHIFT = 12;
export const INDEX_WORDS = (1 << 20) + 1;

export const NO_ZONE = 0xffffffff;
/** A string column's null. */
export const NO_STRING = 0xffffffff;
/** Set in a string's end: its JSON text has escapes (else it is the string in quotes). */
export const ESCAPED = 0x80000000;
/** Route prefix of a range whose record has no network (no `asn.route`). */
export const NO_ROUTE = 255;

/**
 * The tables after the ranges: rows of this many words. A word names a row
 * of the table named (`zones` may be null: NO_ZONE); `text` and `end` are
 * a value's JSON text (a string quoted, a number), the start and end of
 * its slice of the text (`text.ts`; a start of NO_STRING: null; ESCAPED
 * set in the end: a string with escapes); `f64` pairs are a number (NaN:
 * null); `pad` is zero. A row holds every value a record as an object
 * reads of it: no value needs a read of another section.
 *
 * - records: a range's location, network and threat
 * - locations: latitude and longitude, country, place and point
 *   fragments, zone, place row, postal code, latitude and longitude as text
 * - places: city, region, region code, region type
 * - countries: fragments before the city, after the region, before the
 *   flag's base URL, after it, and the facts (`compile/fragments.ts`)
 * - networks: fragments before and after the route, then `asn`, name,
 *   domain, type, and the carrier's name, mcc and mnc (no mcc: no carrier)
 * - threats: the object and its form without is_vpn and scores, then the
 *   threat flags of single sources (what a build merging threat feeds
 *   into the dataset combines with their labels: `compile/merge.ts`)
 */
const TEXT = ['text', 'end'] as const;
export const TABLES = {
  records: ['locations', 'networks', 'threats'],
  locations: ['f64', 'f64', 'f64', 'f64', 'countries', 'fragments', 'fragments', 'zones', 'places', ...TEXT, ...TEXT, ...TEXT, 'pad'],
  places: [...TEXT, ...TEXT, ...TEXT, ...TEXT],
  countries: ['fragments', 'fragments', 'fragments', 'fragments', 'fragments'],
  networks: ['fragments', 'fragments', ...TEXT, ...TEXT, ...TEXT, ...TEXT, ...TEXT, ...TEXT, ...TEXT],
  threats: ['fragments', 'fragments', 'flags'],
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
export const LOC = { country: 4, placeFragment: 5, pointFragment: 6, zone: 7, place: 8, postal: 9, latitude: 11, longitude: 13 } as const;
/** Where a place row holds each text. */
export const PL = { city: 0, region: 2, regionCode: 4, regionType: 6 } as const;
/** Where a network row holds each value: the fragments before and after the route, then texts. */
export const NET = { head: 0, tail: 1, asn: 2, name: 4, domain: 6, type: 8, carrierName: 10, mcc: 12, mnc: 14 } as const;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/** The counts of a dataset's header, in order. */
export interface Counts {
  readonly v4: number;
  readonly v6: number;
  readonly rows: Readonly<Record<TableName, number>>;
  readonly fragments: number;
  readonly fragmentBytes: number;
  /** The text's ASCII part, in bytes; its other part, in UTF-16 code units and in UTF-8 bytes. */
  readonly asciiBytes: number;
  readonly otherUnits: number;
  readonly otherBytes: number;
  readonly metaBytes: number;
}

const COUNT_WORDS = 8 + TABLE_NAMES.length;

/** The header's count words. */
export function countWords(c: Counts): number[] {
  return [c.v4, c.v6, ...TABLE_NAMES.map((t) => c.rows[t]), c.fragments, c.fragmentBytes, c.asciiBytes, c.otherUnits, c.otherBytes, c.metaBytes];
}

/** The counts of a header (at least HEADER bytes). */
export function readCounts(buf: Buffer): Counts {
  const w = Array.from({ length: COUNT_WORDS }, (_, i) => buf.readUInt32LE(12 + i * 4));
  const rows = Object.fromEntries(TABLE_NAMES.map((t, i) => [t, w[2 + i]])) as Record<TableName, number>;
  const [fragments, fragmentBytes, asciiBytes, otherUnits, otherBytes, metaBytes] = w.slice(2 + TABLE_NAMES.length);
  return { v4: w[0], v6: w[1], rows, fragments, fragmentBytes, asciiBytes, otherUnits, otherBytes, metaBytes };
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
    fragmentOffsets: next((c.fragments + 1) * 4),
    fragments: next(c.fragmentBytes),
    ascii: next(c.asciiBytes),
    other: next(c.otherBytes),
    meta: next(c.metaBytes),
  };
  return { ...sections, size: at };
}

export interface DatasetMeta {
  readonly zones: readonly string[];
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
  readonly role: 'geo' | 'asn' | 'anonymous';
  /** The file, or the package the data came from. */
  readonly path: string;
  readonly schema: string;
  readonly databaseType: string;
  readonly buildEpoch: string;
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
