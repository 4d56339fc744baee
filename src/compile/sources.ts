/**
 * The sources a dataset is compiled from: geo, ASN and Anonymous-IP
 * databases (MMDB files of every supported schema, and the default ASN
 * ranges compiled into one), each record resolved to what it gives a
 * record (region code and type, time zone, country facts, network type,
 * threat flags). Build time only.
 *
 * Over 300 lines: a record's resolution reads every source at once (geo, ASN, Anonymous-IP, registries); the adapters are in geo/ and asn/.
 */

import { statSync } from 'node:fs';
import { readRegular } from '../files/read.js';
import { nameRule } from './asn/classify.js';
import type { TypedBy, ZoneFrom } from '../dataset/layout.js';
import { combineRegistries, readRegistry, type RegistryEntry } from './asn/registry.js';
import { REGISTRY_STATEMENTS, registryName } from '../dataset/registry-statements.js';
import { CountryTable, type CountryFacts } from '../country/facts.js';
import { matchRegion, subdivisionByCode } from '../country/regions.js';
import { InvalidDatasetError } from '../contract/errors.js';
import { flatGeo } from './geo/adapters/flat.js';
import { ipinfoAsn, ipinfoGeo } from './geo/adapters/ipinfo.js';
import { maxmindAnonymous, maxmindAsn, maxmindGeo, maxmindIsp } from './geo/adapters/maxmind.js';
import type { AnonymousFacts, AsnFacts, GeoFacts, Role, Schema, SourcedMembers } from './geo/facts.js';
import { detectSchema, ROLES } from './geo/schema.js';
import type { MmdbValue } from '../mmdb/decoder.js';
import { MmdbFile, type Found } from '../mmdb/reader.js';
import type { IpVersion } from '../ip/parse.js';
import { RangeCsv } from './range-csv.js';
import { readRangeCsvSoon } from './range-csv-thread.js';
import { describeOrigin } from './origins/origin.js';
import type { SourceInfo } from '../dataset/format.js';
import { DEFAULT_FLAG_BASE_URL } from '../contract/template.js';
import { ThreatFlag } from '../contract/template.js';
import { locateZone } from '../time/country-zone.js';
import { PACKAGE_ZONES } from '../time/package-zones.js';
import { ZoneClock } from '../time/zone.js';
import type { Asn, Carrier } from '../contract/types.js';

/** What a geo record gives a record: the members derived here, and those its adapter read as they are (`SourcedMembers`). */
export interface Location extends SourcedMembers {
  readonly city: string | null;
  readonly region: string | null;
  readonly region_code: string | null;
  readonly region_type: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly postal: string | null;
  readonly country: CountryFacts | null;
  readonly zone: string | null;
  /** Where the zone came from. */
  readonly zoneFrom: ZoneFrom;
}

/** What an ASN record gives a record: `asn` but its route, `carrier`, and the threat flags its network type asserts. */
export interface NetworkOwner {
  readonly asn: string;
  readonly name: string | null;
  readonly domain: string | null;
  readonly type: Asn['type'];
  readonly carrier: Carrier | null;
  readonly flags: number;
  /** The registry's statement that typed it (`dataset/registry-statements.ts`) where one did (`typedBy` registry: the data does not weigh it again). */
  readonly statement?: number;
  /** How its type was decided, the share of its IPv4 addresses on the datacenter lists (null: not weighed) and the places they spread over (`asn/evidence.ts`). */
  readonly typedBy: TypedBy;
  readonly share: number | null;
  readonly places: number;
}

/** A database a dataset was compiled from, as `info()` describes it. */
export interface DatabaseInfo extends SourceInfo {
  readonly role: Role;
  readonly schema: Schema;
}

/**
 * A database to read: an MMDB file, or ASN range CSVs (a path ending in
 * `.csv`, or several files under one name: the default data's two).
 */
export type SourceFile = string | { readonly path: string; readonly csv: readonly string[] };

/** What the compiler walks: an MMDB file, or ranges read from CSV (`range-csv.ts`). */
export interface NetworkFile {
  forEachNetwork(version: IpVersion, fn: (words: Uint32Array, prefix: number, offset: number) => void): void;
  find(version: IpVersion, words: ArrayLike<number>, out: Found): number;
}

type Adapter<T> = (v: MmdbValue) => T | null;

const ADAPTERS: Record<Role, Partial<Record<Schema, Adapter<unknown>>>> = {
  geo: { flat: flatGeo, 'maxmind-city': maxmindGeo, 'ipinfo-lite': ipinfoGeo },
  asn: { 'maxmind-asn': maxmindAsn, 'maxmind-isp': maxmindIsp, 'ipinfo-lite': ipinfoAsn },
  anonymous: { 'maxmind-anonymous': maxmindAnonymous },
};

/** One opened database of a role, with its schema's adapter. */
export interface Database<T> {
  readonly file: NetworkFile;
  readonly info: DatabaseInfo;
  /** What the record at a data offset gives (null: nothing). */
  readonly at: (offset: number) => T | null;
}

/** The geo, ASN and Anonymous-IP databases of a dataset, in order of priority. */
export class Sources {
  readonly geo: readonly Database<Location>[];
  readonly asn: readonly Database<NetworkOwner>[];
  readonly anonymous: readonly Database<number>[];
  /** The network registries read (`asn/registry.ts`). */
  readonly registries: readonly SourceInfo[];
  private readonly countries: CountryTable;
  private readonly clock = new ZoneClock(PACKAGE_ZONES);

  /**
   * Reads the databases.
   * @throws InvalidDatasetError when a file cannot be read or its schema cannot serve its role
   */
  constructor(
    files: {
      readonly geo: readonly SourceFile[];
      readonly asn: readonly SourceFile[];
      readonly anonymous: readonly SourceFile[];
      readonly networks?: readonly string[];
    },
    flagBaseUrl = DEFAULT_FLAG_BASE_URL,
  ) {
    this.countries = new CountryTable(flagBaseUrl);
    this.geo = files.geo.map((f) => resolved(openDatabase(f, 'geo'), (facts) => this.location(facts)));
    const read = (files.networks ?? []).map((path) => readRegistry(path));
    const registry = combineRegistries(read);
    this.registries = (files.networks ?? []).map((path, i) => {
      const st = statSync(path);
      const info: SourceInfo = {
        role: 'networks',
        path,
        schema: read[i].kind,
        databaseType: registryName(read[i].kind, read[i].tag),
        buildEpoch: st.mtime.toISOString(),
        ipVersion: 6,
        nodeCount: read[i].networks,
        bytes: st.size,
        ...describeOrigin(path, null),
      };
      return info;
    });
    this.asn = files.asn.map((f) => resolved(openDatabase(f, 'asn'), (facts) => networkOwner(facts, registry)));
    this.anonymous = files.anonymous.map((f) => resolved(openDatabase(f, 'anonymous'), anonymousFlags));
  }

  /** Every database, geo first, then the network registries. */
  databases(): SourceInfo[] {
    return [...[...this.geo, ...this.asn, ...this.anonymous].map((d) => d.info), ...this.registries];
  }

  private location(facts: GeoFacts): Location {
    const cc = facts.countryCode;
    const country = cc === null ? null : this.countries.get(cc);
    let regionCode: string | null = null;
    let regionType: string | null = null;
    if (cc !== null) {
      const sub =
        facts.regionCode !== null ? subdivisionByCode(cc, facts.regionCode) : facts.region !== null ? matchRegion(cc, facts.region) : null;
      regionCode = facts.regionCode ?? sub?.code ?? null;
      regionType = sub?.type ?? null;
    }
    return {
      ...facts.members,
      city: facts.city,
      region: facts.region,
      region_code: regionCode,
      region_type: regionType,
      latitude: facts.latitude,
      longitude: facts.longitude,
      postal: facts.postal,
      country,
      // The database's zone, else the one at the coordinates, kept within the country (`time/country-zone.ts`).
      ...locateZone(facts.timeZone, facts.latitude, facts.longitude, cc, (z) => this.clock.isValid(z)),
    };
  }
}

/**
 * What an ASN record gives: the type the network registries state (a weak
 * statement only where the name states none: `registry-statements.ts`),
 * else its name's (`asn/classify.ts`); its domain, else the registries'.
 */
function networkOwner(facts: AsnFacts, registry: ReadonlyMap<number, RegistryEntry>): NetworkOwner | null {
  if (facts.asn === null) return null;
  const entry = registry.get(facts.asn);
  const stated = entry === undefined ? null : REGISTRY_STATEMENTS[entry.statement];
  const named = nameRule(facts.name);
  const registered = stated !== null && (!stated.weak || named === null || named.rule === 'default') ? stated : null;
  const type = registered?.type ?? named?.type ?? null;
  const carrier = facts.carrier === null ? null : { ...facts.carrier };
  const typedBy: TypedBy = registered !== null ? 'registry' : (named?.rule ?? 'none');
  const owner = {
    asn: `AS${facts.asn}`,
    name: facts.name,
    domain: facts.domain ?? entry?.domain ?? null,
    type,
    carrier,
    flags: type === 'hosting' ? ThreatFlag.Datacenter : 0,
    typedBy,
    share: null,
    places: 0,
  };
  return registered === null ? owner : { ...owner, statement: entry!.statement };
}

function isCsv(f: SourceFile): boolean {
  return typeof f !== 'string' || /\.csv$/i.test(f);
}

/** What each role's records say, before they are resolved. */
interface RoleFacts {
  geo: GeoFacts;
  asn: AsnFacts;
  anonymous: AnonymousFacts;
}

/** A database of a role, opened: what its record at a data offset says. */
export interface FactsDatabase<R extends Role> {
  readonly file: NetworkFile;
  readonly info: DatabaseInfo;
  readonly facts: (offset: number) => RoleFacts[R] | null;
}

/** The largest MMDB file the format can address (its records are 32 bits at most). */
const MAX_MMDB_BYTES = 2 ** 32;

/** What each role's databases hold, in words. */
const ROLE_DATA: Readonly<Record<Role, string>> = {
  geo: 'location data (geo)',
  asn: 'network owner data (asn)',
  anonymous: 'anonymity data (anonymous)',
};

/**
 * Opens a database for a role: an MMDB file of a schema that can serve it,
 * or (ASN only) range CSVs.
 * @throws InvalidDatasetError when it cannot be read or its schema cannot serve the role
 */
export function openDatabase<R extends Role>(source: SourceFile, role: R): FactsDatabase<R> {
  if (isCsv(source)) {
    if (role === 'geo') return rangeCsv(source, 'geo', 'geo ranges', (file, offset) => file.owners[offset]) as FactsDatabase<R>;
    if (role !== 'asn')
      throw new InvalidDatasetError(`${typeof source === 'string' ? source : source.path}: CSV files can serve as geo or ASN data only.`);
    return rangeCsv(source, 'asn', 'ASN ranges (start,end,asn,organisation)', (file, offset) => ({
      asn: file.owners[offset].asn,
      name: file.owners[offset].name,
      domain: null,
      carrier: null,
    })) as FactsDatabase<R>;
  }
  const path = source as string;
  let buf: Buffer;
  try {
    buf = readRegular(path, MAX_MMDB_BYTES);
  } catch (e) {
    throw new InvalidDatasetError(`Cannot read database ${path}: ${(e as Error).message}`, { cause: e });
  }
  const file = new MmdbFile(buf, path);
  const schema = detectSchema(file, path);
  const adapter = ADAPTERS[role][schema] as Adapter<RoleFacts[R]> | undefined;
  if (adapter === undefined || !ROLES[schema].includes(role)) {
    const serves = ROLES[schema];
    throw new InvalidDatasetError(
      `${path} (database_type "${file.metadata.databaseType}") holds ${serves.map((r) => ROLE_DATA[r]).join(' and ')}, not ${ROLE_DATA[role]}: give it as ${serves.map((r) => `"${r}"`).join(' or ')}.`,
    );
  }
  const m = file.metadata;
  const buildEpoch = m.buildEpoch.toISOString();
  const info: DatabaseInfo = {
    role,
    path,
    schema,
    databaseType: m.databaseType,
    buildEpoch,
    ipVersion: m.ipVersion,
    nodeCount: m.nodeCount,
    bytes: file.size,
    ...describeOrigin(path, buildEpoch),
  };
  return { file, info, facts: (offset) => adapter(file.decode(offset)) };
}

/** A database whose facts are resolved to what they give a record. */
function resolved<R extends Role, T>(db: FactsDatabase<R>, resolve: (facts: RoleFacts[R]) => T | null): Database<T> {
  return {
    get file() {
      return db.file;
    },
    get info() {
      return db.info;
    },
    at: (offset) => {
      const facts = db.facts(offset);
      return facts === null ? null : resolve(facts);
    },
  };
}

/**
 * Range CSV files of a role as a database, read on another thread when
 * large (`range-csv-thread.ts`): its file and info are there when first
 * asked for.
 * @throws InvalidDatasetError (when first asked for) when they cannot be read or hold no rows
 */
function rangeCsv<R extends 'geo' | 'asn'>(
  source: SourceFile,
  role: R,
  what: string,
  facts: (file: RangeCsv<RoleFacts[R]>, offset: number) => RoleFacts[R],
): FactsDatabase<R> {
  const path = typeof source === 'string' ? source : source.path;
  const files = typeof source === 'string' ? [source] : source.csv;
  const reading = readRangeCsvSoon<RoleFacts[R]>(files, role);
  let opened: { file: RangeCsv<RoleFacts[R]>; info: DatabaseInfo } | undefined;
  const open = () => {
    if (opened !== undefined) return opened;
    let file: RangeCsv<RoleFacts[R]>;
    try {
      file = new RangeCsv(reading.parts());
    } catch (e) {
      throw new InvalidDatasetError(`Cannot read ${what} ${path}: ${(e as Error).message}`, { cause: e });
    }
    if (file.rows === 0) throw new InvalidDatasetError(`${path}: no ${what} in it.`);
    const info: DatabaseInfo = {
      role,
      path,
      schema: role === 'geo' ? 'geo-csv' : 'asn-csv',
      databaseType: role === 'geo' ? 'Geo ranges (CSV)' : 'ASN ranges (CSV)',
      buildEpoch: file.modified.toISOString(),
      ipVersion: 6,
      nodeCount: file.rows,
      bytes: file.bytes,
      ...describeOrigin(files[0], null),
    };
    return (opened = { file, info });
  };
  // Files read already (small ones) are checked now: their errors are thrown here.
  if (reading.read) open();
  return {
    get file() {
      return open().file;
    },
    get info() {
      return open().info;
    },
    facts: (offset) => facts(open().file, offset),
  };
}

function anonymousFlags(facts: AnonymousFacts): number {
  return (
    (facts.tor ? ThreatFlag.Tor : 0) |
    (facts.vpn ? ThreatFlag.Vpn : 0) |
    (facts.proxy ? ThreatFlag.Proxy : 0) |
    (facts.hosting ? ThreatFlag.Datacenter : 0)
  );
}
