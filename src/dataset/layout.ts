/**
 * The compiled dataset: every static value of every record, for the whole
 * address space, in one file that is mapped (or read) and answered from
 * without parsing. `src/compile/` writes it; the engine reads it. The
 * format is written down in `docs/dataset-format.md`; this module is its
 * statement in code.
 *
 * Over 300 lines: every section and word of the format stated in one place, as docs/dataset-format.md states it.
 */

import type { ThreatMeta } from './threat-meta.js';
import type { ZoneTable } from '../time/zone.js';
import {
  ASN_STORED,
  CARRIER_MEMBERS,
  LOCATION_MEMBERS,
  PLACE_MEMBERS,
  type AsnMember,
  type CarrierMember,
  type LocationMember,
  type PlaceMember,
} from '../contract/template.js';

/** The magic's first seven bytes, the same in every version; its eighth is the version's digit. */
export const MAGIC_PREFIX = 'IPRDSET';
export const DATASET_FORMAT_VERSION = 9;
export const DATASET_MAGIC = `${MAGIC_PREFIX}${DATASET_FORMAT_VERSION}`;
export const HEADER = 80;
/** Where the header keeps its packing flags (`PACKED`), the checksum of the bytes after it, the index bits and the fine IPv6 starts' count. */
export const FLAGS_AT = 64;
export const CRC_AT = 68;
export const BITS_AT = 72;
export const FINE_AT = 76;

/**
 * How a file is packed (its header's flags): as a lite dataset is, for a
 * file that goes over a network and is read whole into memory. `v6`: IPv6
 * starts of two words (the address's first 64 bits) with a fine section of
 * the few whose last 64 bits are not zero (a range of a /96, a /128);
 * `parts`: no parts section, the parts rendered at open. A reader unpacks
 * both at open (`format.ts`), and answers from the unpacked arrays.
 */
export const PACKED = { v6: 1, parts: 2 } as const;
/** The most index blocks a family has: by an address's first 20 bits. */
export const MAX_INDEX_BITS = 20;

/**
 * The bits of an address a family's index blocks are by: as many blocks
 * as ranges (rounded up to a power of two), at least 2 and at most 2^20.
 * The default data's families have millions of ranges (2^20 blocks, 4 MiB
 * each); a dataset of a few ranges has an index of a few words.
 */
export function indexBits(ranges: number): number {
  return Math.min(MAX_INDEX_BITS, Math.max(1, 32 - Math.clz32(ranges - 1)));
}

/** Ranges a block of a packed file's index holds on average (`compactIndexBits`). */
export const COMPACT_BLOCK = 16;

/** The index bits of a packed file's family: a block per `COMPACT_BLOCK` ranges (a quarter of a cache line's scan more, a sixteenth of the index). */
export function compactIndexBits(ranges: number): number {
  return Math.max(1, indexBits(Math.ceil(ranges / COMPACT_BLOCK)));
}

/**
 * A family's index over its ranges, whose first words (`top`) ascend: for
 * each block (an address's first `indexBits(count)` bits), the number of
 * ranges that start before it (the last word: all of them). What the
 * compiler writes and the whole-file check expects: one pass over the
 * ranges, the blocks filled between them.
 */
export function rangeIndex(count: number, bits: number, top: (range: number) => number): Uint32Array {
  const shift = 32 - bits;
  const index = new Uint32Array((1 << bits) + 1);
  let block = 0;
  for (let r = 0; r < count; r++) {
    const b = top(r) >>> shift;
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
/** Set in a part's end: the part has bytes outside ASCII (its text is decoded as UTF-8, not byte by byte). */
export const PART_UTF8 = 0x80000000;
/** Route prefix of a range whose record has no network (no `asn.route`). */
export const NO_ROUTE = 255;

/**
 * The tables after the ranges: rows of this many words. A word names a row
 * of the table named (`zones` may be NO_ZONE); `text` and `end` are a
 * value's JSON text (a string quoted, a number, a boolean, an array or an
 * object), the start and end of its slice of the text (`text.ts`; a start
 * of NO_STRING: null; ESCAPED set in the end: a string with escapes);
 * `f64` pairs are a number (NaN: null); `pad` is zero; `part` and
 * `partEnd` are the start and end, in bytes, of the row's part of a
 * record's JSON, rendered by the compiler (`parts.ts`) in the parts
 * section (each starts at a multiple of 8; PART_UTF8 set in the end: not
 * ASCII). Every value is stored once, as
 * JSON text; a row holds every value a record reads of it.
 *
 * - records: a range's location, network and threat
 * - locations: latitude and longitude as float64 (what records as objects
 *   read: the one value kept in a second form), country, zone, place,
 *   latitude, longitude and postal code as text (`LOCATION_MEMBERS`' order),
 *   then their part and its place's part (a read less than through the
 *   place's row), then where its zone came from (`zoneFrom`: `ZONE_FROM`)
 * - places: the record's place members (`PLACE_MEMBERS`: city, region,
 *   region_code, region_type)
 * - countries: `COUNTRY_VALUES` in order (`flag` is made from the code)
 * - networks: the members of `asn` but its route (`ASN_STORED`: asn, name,
 *   domain, type), then the carrier's (name, mcc, mnc); no `asn`: no
 *   network; no mcc: no carrier; then the parts of `asn` before and after
 *   its `route`, and the `carrier` member; then how its type was decided
 *   (`typedBy`: `TYPED_BY`)
 * - threats: the threat object and its form without is_vpn and scores,
 *   then the threat flags of single sources (what a build merging threat
 *   feeds into the dataset combines with their labels: `compile/merge.ts`),
 *   then the parts of each form
 */
const TEXT = ['text', 'end'] as const;
const PART = ['part', 'partEnd'] as const;
/** The values of a country row, in its order. */
export const COUNTRY_VALUES = [
  'is_eu',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'calling_code',
  'emoji_flag',
  'emoji_unicode',
  'languages',
  'currency',
] as const;
export const TABLES = {
  records: ['locations', 'networks', 'threats'],
  locations: [
    'f64',
    'f64',
    'f64',
    'f64',
    'countries',
    'zones',
    'places',
    ...LOCATION_MEMBERS.flatMap(() => TEXT),
    ...PART,
    ...PART,
    'zoneFrom',
  ] as readonly string[],
  places: PLACE_MEMBERS.flatMap(() => TEXT) as readonly ('text' | 'end')[],
  countries: COUNTRY_VALUES.flatMap(() => TEXT),
  networks: [...[...ASN_STORED, ...CARRIER_MEMBERS].flatMap(() => TEXT), ...PART, ...PART, ...PART, 'typedBy'] as readonly string[],
  threats: [...TEXT, ...TEXT, 'flags', ...PART, ...PART],
} as const;
export type TableName = keyof typeof TABLES;
/** Row widths, in words. */
export const RECORD = TABLES.records.length;
export const LOCATION = TABLES.locations.length;
export const PLACE = TABLES.places.length;
export const COUNTRY = TABLES.countries.length;
export const NETWORK = TABLES.networks.length;
export const THREAT = TABLES.threats.length;
/** Where a location row holds each value (latitude and longitude as float64 at words 0 and 2; the text of `LOCATION_MEMBERS` in order from word 7), its part and its place's. */
export const LOC = {
  country: 4,
  zone: 5,
  place: 6,
  ...(Object.fromEntries(LOCATION_MEMBERS.map((k, i) => [k, 7 + i * 2])) as Record<LocationMember, number>),
  part: 7 + LOCATION_MEMBERS.length * 2,
  placePart: 9 + LOCATION_MEMBERS.length * 2,
  zoneFrom: 11 + LOCATION_MEMBERS.length * 2,
} as const;

/** Where a location's zone came from (its row's `zoneFrom` word, an index into `ZONE_FROM`, `time/country-zone.ts`). */
export { ZONE_FROM, type ZoneFrom } from '../time/zone-from.js';

/**
 * How a network's `asn.type` was decided (its row's `typedBy` word: the
 * rule's index in the low byte; the share of its IPv4 addresses on the
 * datacenter lists in percent in the next, 255 where none were compiled
 * in or it was not weighed; the places its addresses spread over from bit
 * 16, capped at 65 535; for the registry, the number of its statement
 * there instead: `registry-statements.ts`): no type (no network, or no
 * name); a network registry; a brand's name; a word of its name; the
 * datacenter lists; the places; none of them (`business`); the shipped
 * list of hosting ASNs (`compile/asn/hosting-asns.json`, added last, so
 * the numbers of the others stay). See `compile/asn/evidence.ts`.
 */
export const TYPED_BY = ['none', 'registry', 'brand', 'name', 'datacenter', 'places', 'default', 'list'] as const;
export type TypedBy = (typeof TYPED_BY)[number];
/** Places a network whose name states no type must spread over to count as an access carrier (`isp`). */
export const ACCESS_PLACES = 4;
/** The least share of a network's IPv4 addresses a place must hold to count. */
export const PLACE_SHARE = 0.005;
/** The least share of a network's IPv4 addresses on the feeds' datacenter lists that makes it `hosting`. */
export const HOSTING_SHARE = 0.5;
/** The share byte of a `typedBy` word where no share was weighed. */
export const NO_SHARE = 255;

/** A network row's `typedBy` word. */
export function typedByWord(rule: TypedBy, share: number | null, places: number): number {
  const percent = share === null ? NO_SHARE : Math.min(100, Math.round(share * 100));
  return (TYPED_BY.indexOf(rule) | (percent << 8) | (Math.min(places, 0xffff) << 16)) >>> 0;
}

/** A network row's `typedBy` word for a registry's statement (its number: `registry-statements.ts`). */
export const registryWord = (statement: number): number => typedByWord('registry', null, statement);

/** What a network row's `typedBy` word says: its rule, share and places, and the registry's statement (0 but for the registry). */
export function readTypedBy(word: number): { rule: TypedBy; share: number | null; places: number; statement: number } {
  const percent = (word >>> 8) & 255;
  const rule = TYPED_BY[word & 255] ?? 'none';
  const high = word >>> 16;
  const share = percent === NO_SHARE ? null : percent / 100;
  return rule === 'registry' ? { rule, share, places: 0, statement: high } : { rule, share, places: high, statement: 0 };
}
/** Where a place row holds each member's text: the record's place members in order (`PLACE_MEMBERS`). */
export const PL = Object.freeze(Object.fromEntries(PLACE_MEMBERS.map((k, i) => [k, i * 2]))) as Readonly<Record<PlaceMember, number>>;
/** Where a network row holds each member of `asn` it stores (`ASN_STORED`), and then each of the carrier's. */
export const NET = Object.freeze(Object.fromEntries(ASN_STORED.map((k, i) => [k, i * 2]))) as Readonly<
  Record<Exclude<AsnMember, 'route'>, number>
>;
export const CARRIER_AT = Object.freeze(Object.fromEntries(CARRIER_MEMBERS.map((k, i) => [k, (ASN_STORED.length + i) * 2]))) as Readonly<
  Record<CarrierMember, number>
>;
/** Where a network row holds its parts: `asn` up to its route's value, `asn` after it, the `carrier` member (empty without one). */
const NET_PARTS_AT = (ASN_STORED.length + CARRIER_MEMBERS.length) * 2;
export const NET_PART = { head: NET_PARTS_AT, tail: NET_PARTS_AT + 2, carrier: NET_PARTS_AT + 4 } as const;
/** Where a network row holds its `typedBy` word. */
export const NET_TYPED_BY = NET_PARTS_AT + 6;
/** Where a country row holds each value (`COUNTRY_VALUES`). */
export const CTY = Object.fromEntries(COUNTRY_VALUES.map((k, i) => [k, i * 2])) as Record<(typeof COUNTRY_VALUES)[number], number>;
/** Where a threat row holds its object, its basic form and its flags, and the parts of each form. */
export const THR = { object: 0, basic: 2, flags: 4, objectPart: 5, basicPart: 7 } as const;
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
  /** The rendered parts, in bytes. */
  readonly partsBytes: number;
  readonly metaBytes: number;
  /** The packing flags (`PACKED`). */
  readonly packed: number;
  /** Each family's index bits (1 to MAX_INDEX_BITS). */
  readonly bits4: number;
  readonly bits6: number;
  /** IPv6 starts in the fine section (packed `v6`: those whose last 64 bits are not zero). */
  readonly fine6: number;
}

const COUNT_WORDS = 7 + TABLE_NAMES.length;

/** The header's count words. */
export function countWords(c: Counts): number[] {
  return [c.v4, c.v6, ...TABLE_NAMES.map((t) => c.rows[t]), c.asciiBytes, c.otherUnits, c.otherBytes, c.partsBytes, c.metaBytes];
}

/** The counts of a header (at least HEADER bytes). */
export function readCounts(buf: Uint8Array): Counts {
  const w = Array.from({ length: COUNT_WORDS }, (_, i) => readU32(buf, 12 + i * 4));
  const rows = Object.fromEntries(TABLE_NAMES.map((t, i) => [t, w[2 + i]])) as Record<TableName, number>;
  const [asciiBytes, otherUnits, otherBytes, partsBytes, metaBytes] = w.slice(2 + TABLE_NAMES.length);
  const bits = readU32(buf, BITS_AT);
  return {
    v4: w[0],
    v6: w[1],
    rows,
    asciiBytes,
    otherUnits,
    otherBytes,
    partsBytes,
    metaBytes,
    packed: readU32(buf, FLAGS_AT),
    bits4: bits & 255,
    bits6: (bits >>> 8) & 255,
    fine6: readU32(buf, FINE_AT),
  };
}

/** The header's words but the magic, the version and the checksum: where each goes, and its value. */
export function headerWords(c: Counts): [at: number, word: number][] {
  return [
    ...countWords(c).map((v, i): [number, number] => [12 + i * 4, v]),
    [FLAGS_AT, c.packed],
    [BITS_AT, c.bits4 | (c.bits6 << 8)],
    [FINE_AT, c.fine6],
  ];
}

/** The little-endian word at byte `at`. */
export function readU32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
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
    index4: next(((1 << c.bits4) + 1) * 4),
    starts4: next(c.v4 * 4),
    refs4: next(c.v4 * 4),
    index6: next(((1 << c.bits6) + 1) * 4),
    starts6: next(c.v6 * (c.packed & PACKED.v6 ? 8 : 16)),
    fine6: next(c.fine6 * 12),
    refs6: next(c.v6 * 4),
    ...(Object.fromEntries(TABLE_NAMES.map((t) => [t, next(c.rows[t] * TABLES[t].length * 4)])) as Record<TableName, number>),
    ascii: next(c.asciiBytes),
    other: next(c.otherBytes),
    parts: next(c.partsBytes),
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
  /** `lite`: a dataset of `iprecord export --format lite` (countries, networks and threats; no places, coordinates or zones). Absent: full. */
  readonly edition?: 'lite';
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
  /** The data's licence, where its package states one (`CC-BY-4.0`). */
  readonly licence?: string;
}

/** A database the dataset in use was compiled from, for `info()`. */
export interface DatabaseInfo extends SourceInfo {
  /** When the dataset was read (a reload keeps the bytes of a file that did not change). */
  readonly readAt: string;
}
