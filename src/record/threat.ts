/**
 * The threat object from the flags the loaded data can assert. With the
 * embedded default data these are `is_bogon` (IANA registries) and
 * `is_datacenter` (ASN classification); an Anonymous-IP database adds Tor,
 * VPN and proxy flags. A flag no loaded source covers stays false.
 *
 * Scores (integers 0..100), from the flags alone:
 * - `vpn_score`: 90 when `is_vpn`; 10 for a datacenter network (where
 *   commercial VPN exits live); else 0.
 * - `proxy_score`: 90 when `is_proxy` or `is_tor`; else 0.
 * - `threat_score`: 90 when `is_known_attacker`, 70 when `is_known_abuser`,
 *   25 when `is_bogon`; else 0.
 * - `trust_score`: 100 minus the highest of the three.
 * An address that no source lists has 0, 0, 0 and trust 100.
 */

import type { Scores, Threat } from '../types.js';

export const enum ThreatFlag {
  Bogon = 1,
  Datacenter = 2,
  Tor = 4,
  Vpn = 8,
  Proxy = 16,
  Relay = 32,
  Attacker = 64,
  Abuser = 128,
}

const EMPTY_LISTS: readonly never[] = Object.freeze([]);
const cache = new Map<number, Threat>();

export function scoresOf(flags: number): Scores {
  const vpn = flags & ThreatFlag.Vpn ? 90 : flags & ThreatFlag.Datacenter ? 10 : 0;
  const proxy = flags & (ThreatFlag.Proxy | ThreatFlag.Tor) ? 90 : 0;
  const threat = flags & ThreatFlag.Attacker ? 90 : flags & ThreatFlag.Abuser ? 70 : flags & ThreatFlag.Bogon ? 25 : 0;
  return Object.freeze({ vpn_score: vpn, proxy_score: proxy, threat_score: threat, trust_score: 100 - Math.max(vpn, proxy, threat) });
}

/** The frozen threat object of a flag set (one per set, shared). */
export function threatOf(flags: number): Threat {
  let t = cache.get(flags);
  if (t === undefined) {
    const tor = (flags & ThreatFlag.Tor) !== 0;
    const proxy = (flags & ThreatFlag.Proxy) !== 0;
    const attacker = (flags & ThreatFlag.Attacker) !== 0;
    const abuser = (flags & ThreatFlag.Abuser) !== 0;
    t = Object.freeze({
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
      blocklists: EMPTY_LISTS,
      scores: scoresOf(flags),
    });
    cache.set(flags, t);
  }
  return t;
}
