/**
 * The threat object: flags, blocklists and scores from the evidence that
 * the loaded data holds for an address.
 *
 * Evidence is, per category, the number of sources that list the address
 * (threat feeds of `threat.bin`; the ASN classification and an
 * Anonymous-IP database count as one source each; the IANA registries as
 * one bogon source), and the highest hit count of a feed that has them
 * (ipsum: on how many blocklists the address is). A flag no loaded source
 * covers stays false.
 *
 * Scores (integers 0..100; docs/decisions.md states the same rules):
 * - `vpn_score`: with n VPN sources, 80 + 5 (n - 1); else 10 on a
 *   datacenter network (where commercial VPN exits live); else 0.
 * - `proxy_score`: with n Tor sources 85 + 5 (n - 1), with n proxy sources
 *   75 + 5 (n - 1): the higher; else 0.
 * - `threat_score`: the highest of 70 + 5 (n - 1) for n attacker sources,
 *   50 + 5 (n - 1) for n abuser sources, 10 per hit, and 25 for a bogon;
 *   plus 10 when both attacker and abuser sources list the address.
 * - `trust_score`: 100 minus the highest of the three.
 * Each is capped at 100. An address that no source lists has 0, 0, 0 and
 * trust 100; more evidence never lowers vpn, proxy or threat scores.
 */

import type { Blocklist, Scores, Threat } from '../contract/types.js';
import { ThreatFlag, CATEGORIES } from '../contract/template.js';

/**
 * Evidence for one address: sources per category (index = bit position),
 * the highest hit count, and the categories of every listing feed (a feed
 * an aggregator includes flags its categories without counting: `flags`
 * may hold more than `counts` shows).
 */
export interface Evidence {
  readonly counts: ArrayLike<number>;
  readonly hits: number;
  readonly flags?: number;
}

const EMPTY_LISTS: readonly Blocklist[] = Object.freeze([]);

const more = (base: number, n: number) => (n <= 0 ? 0 : Math.min(100, base + 5 * (n - 1)));

/** Sources of a category: its count, plus one when `extra` has the flag. */
function count(e: Evidence, extra: number, bit: number): number {
  return (e.counts[bit] ?? 0) + ((extra >>> bit) & 1);
}

/** Scores from evidence plus flags of single sources (`extra`). */
export function scoresOf(e: Evidence, extra: number): Scores {
  const vpnN = count(e, extra, 3);
  const vpn = vpnN > 0 ? more(80, vpnN) : count(e, extra, 1) > 0 ? 10 : 0;
  const proxy = Math.max(more(85, count(e, extra, 2)), more(75, count(e, extra, 4)));
  const attackers = count(e, extra, 6);
  const abusers = count(e, extra, 7);
  let threat = Math.max(more(70, attackers), more(50, abusers), Math.min(100, 10 * e.hits), count(e, extra, 0) > 0 ? 25 : 0);
  if (attackers > 0 && abusers > 0) threat = Math.min(100, threat + 10);
  return Object.freeze({ vpn_score: vpn, proxy_score: proxy, threat_score: threat, trust_score: 100 - Math.max(vpn, proxy, threat) });
}

const NO_EVIDENCE: Evidence = { counts: [], hits: 0 };

/** The frozen threat object of evidence, single-source flags and blocklists. */
export function buildThreat(e: Evidence, extra: number, blocklists: readonly Blocklist[]): Threat {
  let listed = e.flags ?? 0;
  for (let bit = 0; bit < CATEGORIES.length; bit++) if ((e.counts[bit] ?? 0) > 0) listed |= 1 << bit;
  // Private relay egress is relay, not datacenter: neither its hosts' network type (Akamai, Fastly) nor their
  // published ranges (Cloudflare's) make it one, nor add to its scores.
  if ((listed & ThreatFlag.Relay) !== 0) {
    extra &= ~ThreatFlag.Datacenter;
    listed &= ~ThreatFlag.Datacenter;
    e = { ...e, counts: Array.from(CATEGORIES, (c, bit) => (c === 'datacenter' ? 0 : (e.counts[bit] ?? 0))) };
  }
  const flags = extra | listed;
  const tor = (flags & ThreatFlag.Tor) !== 0;
  const proxy = (flags & ThreatFlag.Proxy) !== 0;
  const attacker = (flags & ThreatFlag.Attacker) !== 0;
  const abuser = (flags & ThreatFlag.Abuser) !== 0;
  return Object.freeze({
    is_tor: tor,
    is_vpn: (flags & ThreatFlag.Vpn) !== 0,
    is_icloud_relay: (flags & ThreatFlag.Relay) !== 0,
    is_proxy: proxy,
    is_datacenter: (flags & ThreatFlag.Datacenter) !== 0,
    is_anonymous: tor || proxy,
    is_known_attacker: attacker,
    is_known_abuser: abuser,
    is_threat: attacker || abuser,
    is_bogon: (flags & ThreatFlag.Bogon) !== 0,
    blocklists:
      blocklists.length === 0
        ? EMPTY_LISTS
        : Object.freeze(blocklists.map((b) => Object.freeze({ name: b.name, site: b.site, type: b.type }))),
    scores: scoresOf(e, extra),
  });
}

/** What a feed label gives (`ThreatTree`'s). */
export interface LabelSource {
  counts(label: number): number[];
  hits(label: number): number;
  flags(label: number): number;
  blocklists(label: number): Blocklist[];
}

/**
 * Whether a label's bogon listing is out of date at addresses the network
 * data routes: a bogon list (a full-bogons snapshot) says unallocated, the
 * routing says announced. The IANA registries' ranges come as flags and
 * stay.
 */
export const staleBogon = (tree: LabelSource, label: number, routed: boolean): boolean =>
  routed && (tree.flags(label) & ThreatFlag.Bogon) !== 0;

/** The frozen threat object of a feed label (not 0) with single-source flags, the label's bogon listing left out where `staleBogon`. */
export function labelledThreat(tree: LabelSource, label: number, extra: number, routed: boolean): Threat {
  const counts = tree.counts(label);
  let flags = tree.flags(label);
  if (staleBogon(tree, label, routed)) {
    counts[CATEGORIES.indexOf('bogon')] = 0;
    flags &= ~ThreatFlag.Bogon;
  }
  return buildThreat({ counts, hits: tree.hits(label), flags }, extra, tree.blocklists(label));
}

const cache = new Map<number, Threat>();

/** The shared threat object of single-source flags alone (no threat feeds loaded). */
export function threatOf(flags: number): Threat {
  let t = cache.get(flags);
  if (t === undefined) {
    t = buildThreat(NO_EVIDENCE, flags, EMPTY_LISTS);
    cache.set(flags, t);
  }
  return t;
}

const basic = new WeakMap<Threat, Threat>();

/**
 * The threat object without `is_vpn` and `scores` (the service's shape for
 * plans below Business), shared per threat object.
 */
export function basicThreat(t: Threat): Threat {
  let b = basic.get(t);
  if (b === undefined) {
    const { is_vpn: _vpn, scores: _scores, ...rest } = t;
    b = Object.freeze(rest) as Threat;
    basic.set(t, b);
  }
  return b;
}
