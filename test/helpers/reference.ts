/**
 * The oracle of the compiled dataset: a record assembled the plain way,
 * per address, from the sources themselves: each database's tree walked
 * (`MmdbFile.find`), what its record gives resolved as the compiler
 * resolves it (`compile/sources.ts`), the threat feeds' label looked up,
 * the object built in CONTRACT.md's key order and given to
 * `JSON.stringify`. No partition, no index, no dataset.
 */

import { Sources, type SourceFile } from '../../src/compile/sources.js';
import { specialTable } from '../../src/ip/special.js';
import { invalidIpMessage, privateIpMessage, reservedIpMessage } from '../../src/errors.js';
import { parseIp } from '../../src/ip/address.js';
import { carriesIpv4 } from '../../src/ip/embedded.js';
import { formatCidr, formatIp } from '../../src/ip/format.js';
import { classify, SpecialKind } from '../../src/ip/special.js';
import type { Found } from '../../src/mmdb/reader.js';
import { basicThreat, labelledThreat, threatOf, ThreatFlag } from '../../src/record/threat.js';
import type { ThreatTree } from '../../src/compile/feeds/tree.js';
import { ZoneClock } from '../../src/time/zone.js';

const special = specialTable();

export class Reference {
  private readonly sources: Sources;
  private readonly clock = new ZoneClock();

  constructor(
    files: { geo: readonly SourceFile[]; asn: readonly SourceFile[]; anonymous?: readonly SourceFile[] },
    private readonly threat: ThreatTree | null,
    flagBaseUrl?: string,
  ) {
    this.sources = new Sources({ geo: files.geo, asn: files.asn, anonymous: files.anonymous ?? [] }, flagBaseUrl);
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
    const first = <T>(dbs: readonly { file: { find: (v: 4 | 6, w: ArrayLike<number>, f: Found) => number }; at: (o: number) => T | null }[]) => {
      for (const db of dbs) {
        db.file.find(a.version, a.words, found);
        const value = found.offset < 0 ? null : db.at(found.offset);
        if (value !== null) return value;
      }
      return null;
    };
    const geo = first(this.sources.geo);
    const owner = first(this.sources.asn);
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
