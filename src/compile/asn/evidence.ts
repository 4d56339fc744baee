/**
 * What the data says about a network beyond its name, for `asn.type`
 * where the name states nothing (`classify.ts`): how much of its IPv4
 * space the threat feeds' datacenter lists hold, and over how many places
 * its IPv4 addresses spread, as the geo databases locate them.
 *
 * A network whose name states no type is `hosting` when the feeds list at
 * least `HOSTING_SHARE` of its IPv4 addresses as datacenter space (only
 * with feeds compiled in); else when X4BNet's list of datacenter ASNs
 * holds it (`hosting-asns.json`, MIT, shipped; see `HOSTING_ASNS`); else
 * `isp` when at least `ACCESS_PLACES` places
 * (country, region and city) each hold at least `PLACE_SHARE` of them (an
 * access carrier's addresses are located in the towns it serves; a
 * company's, in its offices and often in one city); else `business`. The
 * numbers were chosen on one half of fixtures/reference/networks.tsv
 * (names read by words alone) and are measured on the other half and on
 * networks outside it (fixtures/reference/networks-held-out.tsv;
 * test/integration/asn-type.test.ts). A name that states a type keeps it
 * (the datacenter lists also hold most of some transit carriers' space:
 * Hurricane Electric's), and so does a type the network registry states
 * (`registry.ts`). Build time only.
 */

import { labelledThreat } from '../../record/threat.js';
import { ThreatFlag } from '../../contract/template.js';
import type { ThreatTree } from '../feeds/tree.js';
import type { Location, NetworkOwner } from '../sources.js';
import { namedType } from './classify.js';
import { ACCESS_PLACES, HOSTING_SHARE, PLACE_SHARE } from '../../dataset/layout.js';
import HOSTING_LIST from './hosting-asns.json';

/**
 * X4BNet's datacenter ASNs (lists_vpn, MIT: its licence is kept in the
 * JSON), by number. Used only where the name states no type and the
 * datacenter lists did not decide: on the references it types 3 of 144
 * held-out networks right that the places rule typed wrong, and breaks
 * none (64 of the 66 listed reference networks are hosts; the other two
 * are typed by their names). brianhama's bad-asn-list (MIT) holds 9 AS
 * numbers more and changes no reference's answer, so it is not shipped.
 */
export const HOSTING_ASNS: ReadonlySet<number> = new Set(HOSTING_LIST.asns);

/** Whether `asn` ("AS<n>") is on the shipped list of hosting ASNs. */
export const isHostingAsn = (asn: string): boolean => HOSTING_ASNS.has(Number(asn.slice(2)));

/** Whether an organisation name states no type, so that the data types it. */
export function statesNoType(name: string | null): name is string {
  return name !== null && name !== '' && namedType(name) === null;
}

/** Whether a network whose name states no type is `hosting`: `datacenter` of its `total` IPv4 addresses listed as datacenter space. */
export function hostedBy(datacenter: number, total: number): boolean {
  return total > 0 && datacenter >= HOSTING_SHARE * total;
}

/** Whether the feeds' label lists its ranges as datacenter space (as their threat object says), by label. */
export function datacenterLabels(tree: ThreatTree): (label: number) => boolean {
  const known = new Map<number, boolean>();
  return (label) => {
    let listed = known.get(label);
    if (listed === undefined) known.set(label, (listed = label !== 0 && labelledThreat(tree, label, 0, true).is_datacenter));
    return listed;
  };
}

/** Addresses of each network (by `asn`) in each place, added up over a family's ranges. */
export class PlaceSpread {
  private readonly placeIds = new Map<string, number>();
  private readonly networkIds = new Map<string, number>();
  /** Addresses by network id * 2^24 + place id; place id 0: no place. */
  private readonly addresses = new Map<number, number>();
  private totals: number[] = [];
  private datacenter: number[] = [];
  private spread: Int32Array | null = null;

  /** The place of a location (0: none), by country, region and city. */
  place(location: Location | null): number {
    if (location === null || location.country === null) return 0;
    const key = `${location.country.country_code}\u0000${location.region ?? ''}\u0000${location.city ?? ''}`;
    let id = this.placeIds.get(key);
    if (id === undefined) this.placeIds.set(key, (id = this.placeIds.size + 1));
    return id;
  }

  /** Counts `count` addresses of the network `asn` in `place`, `datacenter` of them listed as datacenter space. */
  add(asn: string, place: number, count: number, datacenter: number): void {
    let id = this.networkIds.get(asn);
    if (id === undefined) {
      this.networkIds.set(asn, (id = this.networkIds.size));
      this.totals.push(0);
      this.datacenter.push(0);
    }
    this.totals[id] += count;
    this.datacenter[id] += datacenter;
    const key = id * 2 ** 24 + place;
    this.addresses.set(key, (this.addresses.get(key) ?? 0) + count);
    this.spread = null;
  }

  /** The places holding at least PLACE_SHARE of the network's counted addresses. */
  places(asn: string): number {
    const id = this.networkIds.get(asn);
    if (id === undefined) return 0;
    if (this.spread === null) {
      const spread = new Int32Array(this.totals.length);
      for (const [key, count] of this.addresses) {
        const network = Math.floor(key / 2 ** 24);
        if (key % 2 ** 24 !== 0 && count >= PLACE_SHARE * this.totals[network]) spread[network]++;
      }
      this.spread = spread;
    }
    return this.spread[id];
  }

  /**
   * The owner with its type weighed against its network's datacenter share
   * and spread, where its name states none, and what was weighed (the share
   * only where `feeds`: datacenter lists were compiled in).
   */
  typed(owner: NetworkOwner, feeds: boolean): NetworkOwner {
    if (owner.typedBy === 'registry' || owner.type !== 'business' || !statesNoType(owner.name)) return owner;
    const id = this.networkIds.get(owner.asn);
    const places = this.places(owner.asn);
    const share = feeds && id !== undefined && this.totals[id] > 0 ? this.datacenter[id] / this.totals[id] : null;
    const weighed = { ...owner, share, places };
    if (id !== undefined && hostedBy(this.datacenter[id], this.totals[id]))
      return { ...weighed, type: 'hosting', typedBy: 'datacenter', flags: owner.flags | ThreatFlag.Datacenter };
    if (isHostingAsn(owner.asn)) return { ...weighed, type: 'hosting', typedBy: 'list', flags: owner.flags | ThreatFlag.Datacenter };
    return places >= ACCESS_PLACES ? { ...weighed, type: 'isp', typedBy: 'places' } : { ...weighed, typedBy: 'default' };
  }
}
