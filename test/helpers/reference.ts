/**
 * The oracle of the compiled dataset: a record assembled the plain way,
 * per address, from the sources themselves: each database's tree walked
 * (`MmdbFile.find`), what its record gives resolved as the compiler
 * resolves it (`compile/sources.ts`), the threat feeds' label looked up,
 * the object built in CONTRACT.md's key order and given to
 * `JSON.stringify`. No partition, no index, no dataset. Network types are
 * weighed against each network's IPv4 spread over places, counted here
 * over pieces cut at every network's edges and looked up one by one.
 */

import { Sources, type SourceFile } from '../../src/compile/sources.js';
import { specialTable } from '../../src/ip/special.js';
import { invalidIpMessage, privateIpMessage, reservedIpMessage } from '../../src/contract/errors.js';
import { parseIp } from '../../src/ip/address.js';
import { carriesIpv4 } from '../../src/ip/embedded.js';
import { formatCidr, formatIp } from '../../src/ip/format.js';
import { classify, SpecialKind } from '../../src/ip/special.js';
import type { Found } from '../../src/mmdb/reader.js';
import { basicThreat, labelledThreat, threatOf } from '../../src/record/threat.js';
import { ThreatFlag } from '../../src/contract/template.js';
import type { ThreatTree } from '../../src/compile/feeds/tree.js';
import { ZoneClock } from '../../src/time/zone.js';
import { PACKAGE_ZONES } from '../../src/time/package-zones.js';
import { datacenterLabels, PlaceSpread } from '../../src/compile/asn/evidence.js';

const special = specialTable();

type Database<T> = { file: { find: (v: 4 | 6, w: ArrayLike<number>, f: Found) => number }; at: (o: number) => T | null };

/** What the first database with a record at the address gives (`found`: where it was found). */
function first<T>(
  dbs: readonly Database<T>[],
  version: 4 | 6,
  words: ArrayLike<number>,
  found: Found = { offset: -1, prefix: 0 },
): T | null {
  for (const db of dbs) {
    db.file.find(version, words, found);
    const value = found.offset < 0 ? null : db.at(found.offset);
    if (value !== null) return value;
  }
  return null;
}

export class Reference {
  private readonly sources: Sources;
  private readonly clock = new ZoneClock(PACKAGE_ZONES);
  private readonly spread: PlaceSpread;

  constructor(
    files: { geo: readonly SourceFile[]; asn: readonly SourceFile[]; anonymous?: readonly SourceFile[]; networks?: readonly string[] },
    private readonly threat: ThreatTree | null,
    flagBaseUrl?: string,
  ) {
    this.sources = new Sources(
      { geo: files.geo, asn: files.asn, anonymous: files.anonymous ?? [], networks: files.networks ?? [] },
      flagBaseUrl,
    );
    this.spread = this.spreadOf();
  }

  /** Each network's IPv4 addresses by place and datacenter listing, the plain way: IPv4 cut at every network's and feed range's edges, each piece looked up. */
  private spreadOf(): PlaceSpread {
    const cuts = new Set<number>([0]);
    for (const db of [...this.sources.geo, ...this.sources.asn])
      db.file.forEachNetwork(4, (words, prefix) => {
        cuts.add(words[3]);
        cuts.add(words[3] + 2 ** (32 - prefix));
      });
    this.threat?.forEachRange(4, (lo, hi) => {
      cuts.add(lo[3]);
      cuts.add(hi[3] + 1);
    });
    const points = [...cuts].filter((c) => c < 2 ** 32).sort((x, y) => x - y);
    const spread = new PlaceSpread();
    const listed = this.threat === null ? () => false : datacenterLabels(this.threat);
    points.forEach((from, i) => {
      const words = [0, 0, 0, from];
      const owner = first(this.sources.asn, 4, words);
      const count = (i + 1 < points.length ? points[i + 1] : 2 ** 32) - from;
      if (owner !== null)
        spread.add(owner.asn, spread.place(first(this.sources.geo, 4, words)), count, listed(this.threat?.find(4, words) ?? 0) ? count : 0);
    });
    return spread;
  }

  /** The record's JSON text at `now` (milliseconds), or `error: ` and the message the engine gives. */
  json(ip: string, count: string, basic: boolean, now: number): string {
    const parsed = parseIp(ip);
    if (parsed === null) return `error: ${invalidIpMessage(ip)}`;
    // IPv6 that carries IPv4 answers as the IPv4 address (docs/decisions.md).
    const a = parsed.version === 6 && carriesIpv4(parsed.words) ? { version: 4 as const, words: [0, 0, 0, parsed.words[3]] } : parsed;
    const text = formatIp(a.version, a.words);
    const kind = classify(special, a.version, a.words);
    if (kind === SpecialKind.Private) return `error: ${privateIpMessage(text)}`;
    if (kind === SpecialKind.Reserved) return `error: ${reservedIpMessage(text)}`;
    const found: Found = { offset: -1, prefix: 0 };
    const geo = first(this.sources.geo, a.version, a.words);
    const named = first(this.sources.asn, a.version, a.words, found);
    const owner = named === null ? null : this.spread.typed(named, this.threat !== null);
    const route = owner === null ? null : formatCidr(a.version, a.words, found.prefix);
    let flags = (owner?.flags ?? 0) | (kind === SpecialKind.Unallocated ? ThreatFlag.Bogon : 0);
    for (const db of this.sources.anonymous) {
      db.file.find(a.version, a.words, found);
      if (found.offset >= 0) flags |= db.at(found.offset) ?? 0;
    }
    const label = this.threat?.find(a.version, a.words) ?? 0;
    const tree = this.threat;
    const full = tree === null || label === 0 ? threatOf(flags) : labelledThreat(tree, label, flags, owner !== null);
    const c = geo?.country ?? null;
    const v = <T>(x: T | undefined) => x ?? null;
    return JSON.stringify({
      ip: text,
      is_eu: v(c?.is_eu),
      city: v(geo?.city),
      region: v(geo?.region),
      region_code: v(geo?.region_code),
      region_type: v(geo?.region_type),
      country_name: v(c?.country_name),
      country_code: v(c?.country_code),
      continent_name: v(c?.continent_name),
      continent_code: v(c?.continent_code),
      latitude: v(geo?.latitude),
      longitude: v(geo?.longitude),
      postal: v(geo?.postal),
      calling_code: v(c?.calling_code),
      flag: v(c?.flag),
      emoji_flag: v(c?.emoji_flag),
      emoji_unicode: v(c?.emoji_unicode),
      asn: owner === null ? null : { asn: owner.asn, name: owner.name, domain: owner.domain, route, type: owner.type },
      ...(owner?.carrier ? { carrier: owner.carrier } : {}),
      languages: v(c?.languages),
      currency: v(c?.currency),
      time_zone: geo?.zone ? this.clock.timeZone(geo.zone, now) : null,
      threat: basic ? basicThreat(full) : full,
      count,
    });
  }
}
