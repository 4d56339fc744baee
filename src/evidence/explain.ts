/**
 * `Engine.explain()`: an address's record with the evidence behind it that
 * the loaded data holds: the sources its location, network and time zone
 * came from, and each threat list that holds the address (or held it in
 * the last 90 days), with the list's range that holds it, when the list
 * first and last held it, and the day of its latest download (the build's
 * `seen.bin`, `evidence/seen.ts`).
 */

import { kindOf, REGISTRY_STATEMENTS, registryName, statementText } from '../dataset/registry-statements.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  ACCESS_PLACES,
  type Dataset,
  HOSTING_SHARE,
  LOC,
  LOCATION,
  NET_TYPED_BY,
  NETWORK,
  PLACE_SHARE,
  readTypedBy,
  RECORD,
  type TypedBy,
  ZONE_FROM,
  type ZoneFrom,
  findRange,
} from '../dataset/format.js';
import type { Compared, CountryAgreement } from './compare.js';
import { dayText, type DamagedHistory, seenHistory } from './seen.js';
import { SEEN_FILE } from '../dataset/store.js';
import type { Category } from '../contract/template.js';
import type { DatabaseInfo } from '../dataset/layout.js';
import type { ZoneRulesInfo } from '../time/zone.js';
import { parseIp } from '../ip/address.js';
import { carriesIpv4 } from '../ip/embedded.js';
import { formatIp } from '../ip/format.js';
import { fromBigInt, rangeToCidrs } from '../ip/ranges.js';
import type { IpRecord } from '../contract/types.js';

/** A threat list that holds the address, or held it in the last 90 days. */
export interface ListEvidence {
  readonly name: string;
  readonly categories: readonly Category[];
  /** Whether the list's latest download holds the address (false: an earlier one did, within 90 days). */
  readonly listed: boolean;
  /** The list's range that holds the address: one CIDR block, or `first - last`. */
  readonly range: string;
  /** The day (`YYYY-MM-DD`, UTC) of the first download of the list that held it, as far back as the builds kept it. */
  readonly first_seen: string;
  /** The day of the last download of the list that held it. */
  readonly last_seen: string;
  /** The day of the list's latest download. */
  readonly downloaded: string;
}

/** How the record's `asn.type` was decided (`compile/asn/evidence.ts`). */
export interface AsnTypeEvidence {
  readonly type: string | null;
  /**
   * `registry`: the network registry states it; `brand`: the name is a
   * known brand's; `name`: a word of the name states it; `datacenter`: the
   * datacenter lists hold half or more of its IPv4 addresses (`hosting`);
   * `list`: X4BNet's list of datacenter ASNs, shipped, holds it
   * (`hosting`); `places`: its IPv4 addresses spread over four places or
   * more (`isp`); `default`: none of these (`business`); `none`: no name
   * to type it by.
   */
  readonly rule: TypedBy;
  /** The share of the network's IPv4 addresses on the datacenter lists (0 to 1) where it was weighed, else null. */
  readonly datacenter_share: number | null;
  /** The places (country, region and city) each holding 0.5 % of its IPv4 addresses or more, where they were weighed, else null. */
  readonly places: number | null;
  /** The same, in words. */
  readonly evidence: string;
}

export type { DamagedHistory } from './seen.js';

export interface Explanation {
  readonly ip: string;
  /** What `lookup(ip)` answers. */
  readonly record: IpRecord;
  /** How `asn.type` was decided; null without a network. */
  readonly asn_type: AsnTypeEvidence | null;
  /**
   * Where the zone of `time_zone` came from: `data` (the location
   * database's), `coordinates` (the zone at the location's coordinates),
   * `country` (the country's only zone), `nearby` (a zone of the country
   * found around coordinates just outside it), `nearest` (the country's
   * zone whose main place is nearest); null without a zone.
   */
  readonly time_zone: { readonly name: string; readonly from: ZoneFrom } | null;
  /**
   * The country of each location database given to `open()` as `compare`,
   * and whether it is the record's (null where either gives none); null
   * when none is given.
   */
  readonly agreement: readonly CountryAgreement[] | null;
  /** The location and network databases the record comes from, and the time zone rules it follows. */
  readonly sources: {
    readonly databases: readonly DatabaseInfo[];
    readonly timeZones: ZoneRulesInfo;
    readonly threat: ExplainedInfo['threat'];
    /** Where the country's facts and the region's code come from (`FACT_SOURCES`). */
    readonly facts: typeof FACT_SOURCES;
  };
  /**
   * The threat lists that hold the address, or held it in the last 90 days;
   * null when the data keeps no such record (no threat feeds, or a build
   * made before `seen.bin`).
   */
  readonly lists: readonly ListEvidence[] | null;
}

/**
 * Where the record's facts that no database gives come from, as the
 * compiler tables them (`country/facts.ts`, `country/regions.ts`).
 */
export const FACT_SOURCES = {
  country:
    'country_name, continent, calling_code and languages: the countries-list package (MIT), but where src/country/facts.ts decides otherwise with its reasons; emoji_flag: the regional indicator symbols of the code',
  is_eu: "the European Union's list of its 27 members (european-union.europa.eu)",
  currency:
    "the country's currency by countries-list; its names and symbols from the Common-Currency data set (the currency-list package, MIT), else CLDR as Node's Intl gives it (scripts/gen-currencies.ts)",
  region_code:
    "the first-level subdivision of ISO 3166-2 whose name (Debian's iso-codes 4.20.1, LGPL-2.1) is the region's (scripts/gen-subdivisions.ts)",
} as const;

/** Where a build's seen.bin is: its build directory's, else beside its threat.bin. */
export function seenPath(build: string | null, threatPath: string | null): string | null {
  if (build !== null) return join(build, SEEN_FILE);
  return threatPath === null ? null : join(dirname(threatPath), SEEN_FILE);
}

/** What an explanation reads of the engine's `info()` (its `EngineInfo` has these members). */
export interface ExplainedInfo {
  readonly databases: readonly DatabaseInfo[];
  readonly timeZones: ZoneRulesInfo;
  /** The compiled threat feeds in use, when any. */
  readonly threat: { readonly path: string; readonly builtAt: string } | null;
  readonly feeds: readonly { readonly name: string; readonly categories: readonly Category[] }[];
}

/**
 * The explanation of `record`, the answer for `ip` from `ds`, from what
 * `info` says is loaded, the build's seen.bin at `seen` and the location
 * databases `compared`.
 */
export function explainRecord(
  ip: string,
  record: IpRecord,
  ds: Dataset,
  info: ExplainedInfo,
  seen: string | null,
  compared: Compared | null,
  damaged: DamagedHistory = 'warn',
): Explanation {
  const sources = { databases: info.databases, timeZones: info.timeZones, threat: info.threat, facts: FACT_SOURCES };
  const a = parseIp(ip)!;
  // IPv4 in IPv6 forms (::a.b.c.d, 64:ff9b::a.b.c.d) is looked up as IPv4, and so are the lists.
  const v4 = a.version === 4 || carriesIpv4(a.words);
  const version = v4 ? 4 : 6;
  const rec = (findRange(ds, version, a.words) >>> 8) * RECORD;
  const zone =
    record.time_zone === null
      ? null
      : { name: record.time_zone.name, from: ZONE_FROM[ds.locations[ds.records[rec] * LOCATION + LOC.zoneFrom]] ?? 'none' };
  const typed = readTypedBy(ds.networks[ds.records[rec + 1] * NETWORK + NET_TYPED_BY]);
  const asnType = (lists: readonly ListEvidence[] | null) => (record.asn === null ? null : typeEvidence(record.asn, typed, info, lists));
  const agreement = compared === null ? null : compared.countries(version, a.words, record.country_code);
  const explained = (lists: readonly ListEvidence[] | null): Explanation => ({
    ip,
    record,
    asn_type: asnType(lists),
    time_zone: zone,
    agreement,
    sources,
    lists,
  });
  // No feeds, or a build made before seen.bin: no history kept.
  if (seen === null || info.threat === null || !existsSync(seen)) return explained(null);
  const address = v4
    ? BigInt(a.words[3])
    : (BigInt(a.words[0]) << 96n) | (BigInt(a.words[1]) << 64n) | (BigInt(a.words[2]) << 32n) | BigInt(a.words[3]);
  const held = seenHistory(seen, version, address, damaged);
  if (held === null) return explained(null);
  const categories = new Map(info.feeds.map((f) => [f.name, f.categories]));
  // The lists of this build: one left out of the configuration keeps its days in seen.bin, but holds nothing now.
  const lists = held
    .filter((s) => categories.has(s.list))
    .map((s): ListEvidence => ({
      name: s.list,
      categories: categories.get(s.list) ?? [],
      listed: s.last === s.latest,
      range: rangeText(version, s.start, s.end),
      first_seen: dayText(s.first),
      last_seen: dayText(s.last),
      downloaded: dayText(s.latest),
    }));
  return explained(lists);
}

/** What a network row's `typedBy` word says, in words. */
function typeEvidence(
  asn: NonNullable<IpRecord['asn']>,
  typed: ReturnType<typeof readTypedBy>,
  info: ExplainedInfo,
  held: readonly ListEvidence[] | null,
): AsnTypeEvidence {
  const weighed = typed.rule === 'datacenter' || typed.rule === 'places' || typed.rule === 'default' || typed.rule === 'list';
  const percent = (x: number) => `${Math.round(x * 100)} %`;
  const here = (held ?? []).filter((l) => l.listed && l.categories.includes('datacenter')).map((l) => l.name);
  const lists =
    (typed.share !== null
      ? `${percent(typed.share)} of its IPv4 addresses on the datacenter lists (${percent(HOSTING_SHARE)} makes a network hosting)`
      : info.threat !== null
        ? `less than ${percent(HOSTING_SHARE)} of its IPv4 addresses on the datacenter lists`
        : 'no datacenter lists compiled in to weigh') + (here.length === 0 ? '' : `; this address on ${here.join(', ')}`);
  const spread = `its IPv4 addresses spread over ${typed.places} place${typed.places === 1 ? '' : 's'} holding ${PLACE_SHARE * 100} % of them or more each (${ACCESS_PLACES} make an access carrier)`;
  // The registry file that made the statement: of its kind (and, for a bgp.tools tag list, of its tag).
  const said = REGISTRY_STATEMENTS[typed.statement] ?? null;
  const name = said === null ? null : registryName(kindOf(said), said.field === 'tag' ? said.value : undefined);
  const registry = info.databases.find((d) => d.role === 'networks' && (name === null || d.databaseType === name));
  const evidence = {
    none: 'no organisation name to type it by',
    registry: `${statementText(typed.statement)} states it (${registry?.from ?? 'a network registry'})`,
    brand: `its name, ${JSON.stringify(asn.name)}, is a known brand's`,
    name: `a word of its name, ${JSON.stringify(asn.name)}, states it`,
    datacenter: `no word of its name states a type; ${lists}`,
    places: `no word of its name states a type; ${spread}; ${lists}`,
    default: `no word of its name states a type; ${spread}; ${lists}`,
    list: `no word of its name states a type; ${lists}; X4BNet's list of datacenter ASNs holds ${asn.asn} (lists_vpn, shipped)`,
  }[typed.rule];
  return {
    type: asn.type,
    rule: typed.rule,
    datacenter_share: weighed ? typed.share : null,
    places: weighed ? typed.places : null,
    evidence,
  };
}

/** A range as its one CIDR block, else `first - last`. */
function rangeText(version: 4 | 6, start: bigint, end: bigint): string {
  const from = { version, words: fromBigInt(version, start) } as const;
  const to = { version, words: fromBigInt(version, end) } as const;
  const cidrs = rangeToCidrs(from, to);
  return cidrs.length === 1
    ? `${formatIp(version, cidrs[0].words)}/${cidrs[0].prefix}`
    : `${formatIp(version, from.words)} - ${formatIp(version, to.words)}`;
}
