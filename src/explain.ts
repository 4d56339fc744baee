/**
 * `Engine.explain()`: an address's record with the evidence behind it that
 * the loaded data holds: the sources its location, network and time zone
 * came from, and each threat list that holds the address (or held it in
 * the last 90 days), with the list's range that holds it, when the list
 * first and last held it, and the day of its latest download (the build's
 * `seen.bin`, `dataset/seen.ts`).
 */

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { dayText, seenAt } from './dataset/seen.js';
import { SEEN_FILE } from './dataset/store.js';
import type { EngineInfo } from './info.js';
import type { Category } from './record/threat.js';
import type { DatabaseInfo } from './snapshot.js';
import { parseIp } from './ip/address.js';
import { carriesIpv4 } from './ip/embedded.js';
import { formatIp } from './ip/format.js';
import { fromBigInt, rangeToCidrs } from './ip/ranges.js';
import type { IpRecord } from './types.js';

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

export interface Explanation {
  readonly ip: string;
  /** What `lookup(ip)` answers. */
  readonly record: IpRecord;
  /** The location and network databases the record comes from, and the time zone rules it follows. */
  readonly sources: { readonly databases: readonly DatabaseInfo[]; readonly timeZones: EngineInfo['timeZones']; readonly threat: EngineInfo['threat'] };
  /**
   * The threat lists that hold the address, or held it in the last 90 days;
   * null when the data keeps no such record (no threat feeds, or a build
   * made before `seen.bin`).
   */
  readonly lists: readonly ListEvidence[] | null;
}

/** Where a build's seen.bin is: its build directory's, else beside its threat.bin. */
export function seenPath(build: string | null, threatPath: string | null): string | null {
  if (build !== null) return join(build, SEEN_FILE);
  return threatPath === null ? null : join(dirname(threatPath), SEEN_FILE);
}

/** The explanation of `record`, the answer for `ip`, from what `info` says is loaded and the build's seen.bin at `seen`. */
export function explainRecord(ip: string, record: IpRecord, info: EngineInfo, seen: string | null): Explanation {
  const sources = { databases: info.databases, timeZones: info.timeZones, threat: info.threat };
  let bytes: Buffer;
  try {
    if (seen === null || info.threat === null) throw new Error('no feeds');
    bytes = readFileSync(seen);
  } catch {
    return { ip, record, sources, lists: null };
  }
  const a = parseIp(ip)!;
  // IPv4 in IPv6 forms (::a.b.c.d, 64:ff9b::a.b.c.d) is looked up as IPv4, and so are the lists.
  const v4 = a.version === 4 || carriesIpv4(a.words);
  const address = v4 ? BigInt(a.words[3]) : (BigInt(a.words[0]) << 96n) | (BigInt(a.words[1]) << 64n) | (BigInt(a.words[2]) << 32n) | BigInt(a.words[3]);
  const version = v4 ? 4 : 6;
  const categories = new Map(info.feeds.map((f) => [f.name, f.categories]));
  const lists = seenAt(bytes, version, address, seen!).map((s): ListEvidence => ({
    name: s.list,
    categories: categories.get(s.list) ?? [],
    listed: s.last === s.latest,
    range: rangeText(version, s.start, s.end),
    first_seen: dayText(s.first),
    last_seen: dayText(s.last),
    downloaded: dayText(s.latest),
  }));
  return { ip, record, sources, lists };
}

/** A range as its one CIDR block, else `first - last`. */
function rangeText(version: 4 | 6, start: bigint, end: bigint): string {
  const from = { version, words: fromBigInt(version, start) } as const;
  const to = { version, words: fromBigInt(version, end) } as const;
  const cidrs = rangeToCidrs(from, to);
  return cidrs.length === 1 ? `${formatIp(version, cidrs[0].words)}/${cidrs[0].prefix}` : `${formatIp(version, from.words)} - ${formatIp(version, to.words)}`;
}
