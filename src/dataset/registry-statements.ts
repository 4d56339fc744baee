/**
 * What a network registry can say of a network's kind, each statement
 * numbered once and for all: a network row typed by a registry keeps the
 * statement's number in its `typedBy` word (`layout.ts`, from bit 16), so
 * that `explain()` names the registry, the field and the value that
 * decided (0: a registry, not said which, as datasets before the number).
 *
 * A weak statement yields to a type the network's name states (by a
 * brand or a word: `compile/asn/classify.ts`): bgp.tools tags services
 * that many kinds of network run (its government tag holds research
 * networks such as Jisc and ESnet; its server-hosting tag carriers such as
 * Cogent and Chinanet). New statements are added at the end.
 */

import type { AsnType } from '../contract/types.js';

export interface RegistryStatement {
  readonly registry: 'PeeringDB' | 'bgp.tools';
  /** The field that says it: PeeringDB's `info_type`, bgp.tools' AS list `class` or a tag list's name. */
  readonly field: 'info_type' | 'class' | 'tag';
  readonly value: string;
  /** What the registry calls it, where its value is a code (bgp.tools' tags). */
  readonly label?: string;
  readonly type: AsnType;
  readonly weak: boolean;
}

const pdb = (value: string, type: AsnType): RegistryStatement => ({ registry: 'PeeringDB', field: 'info_type', value, type, weak: false });
const cls = (value: string, type: AsnType): RegistryStatement => ({ registry: 'bgp.tools', field: 'class', value, type, weak: false });
const tag = (value: string, label: string, type: AsnType, weak: boolean): RegistryStatement => ({
  registry: 'bgp.tools',
  field: 'tag',
  value,
  label,
  type,
  weak,
});

/** Every statement, by number (0: none said). */
export const REGISTRY_STATEMENTS: readonly (RegistryStatement | null)[] = [
  null,
  pdb('Cable/DSL/ISP', 'isp'),
  pdb('NSP', 'isp'),
  pdb('Content', 'hosting'),
  pdb('Educational/Research', 'education'),
  pdb('Government', 'government'),
  pdb('Enterprise', 'business'),
  pdb('Non-Profit', 'business'),
  cls('Eyeball', 'isp'),
  cls('Carrier', 'isp'),
  cls('Content', 'hosting'),
  tag('uni', 'Academic', 'education', false),
  tag('dsl', 'Home ISP', 'isp', false),
  tag('mobile', 'Mobile Data/Carrier', 'isp', false),
  tag('satnet', 'Satellite Internet', 'isp', false),
  tag('biznet', 'Business Broadband', 'isp', false),
  tag('cdn', 'Content Delivery Network', 'hosting', true),
  tag('vpsh', 'Server Hosting', 'hosting', true),
  tag('ddosm', 'DDoS Mitigation', 'hosting', true),
  tag('vpn', 'VPN Host', 'hosting', true),
  tag('gov', 'Government', 'government', true),
  tag('corp', 'Corporate/Enterprise', 'business', true),
];

/** The kinds of registry file (`compile/asn/registry.ts` reads each). */
export type RegistryKind = 'peeringdb-net' | 'bgptools-asns' | 'bgptools-tag' | 'ipinfo-lite-csv';

/** The kind of file that makes a statement. */
export function kindOf(s: RegistryStatement): RegistryKind {
  return s.registry === 'PeeringDB' ? 'peeringdb-net' : s.field === 'class' ? 'bgptools-asns' : 'bgptools-tag';
}

/** What a registry file is, in words (`info()`'s database type); `tag`: a bgp.tools tag list's. */
export function registryName(kind: RegistryKind, tag = ''): string {
  return {
    'peeringdb-net': 'Network registry (PeeringDB network objects)',
    'bgptools-asns': "Network registry (bgp.tools' AS classes)",
    'bgptools-tag': `Network registry (bgp.tools' tag ${JSON.stringify(tag)})`,
    'ipinfo-lite-csv': "Network registry (IPinfo Lite's AS domains)",
  }[kind];
}

/** The number of a registry's statement, or 0 when it states no type. */
export function statementOf(registry: RegistryStatement['registry'], field: RegistryStatement['field'], value: string): number {
  const i = REGISTRY_STATEMENTS.findIndex((s) => s !== null && s.registry === registry && s.field === field && s.value === value);
  return i < 0 ? 0 : i;
}

/**
 * The order bgp.tools' statements of one network are taken in, the first
 * it makes deciding: academic before any class (a research network is
 * often classed a carrier); the classes and the access tags before the
 * hosting tags, so that a hosting tag never overrides an access class;
 * the government and corporate tags last.
 */
export const BGP_TOOLS_ORDER: readonly number[] = [
  statementOf('bgp.tools', 'tag', 'uni'),
  statementOf('bgp.tools', 'class', 'Eyeball'),
  statementOf('bgp.tools', 'class', 'Carrier'),
  statementOf('bgp.tools', 'tag', 'dsl'),
  statementOf('bgp.tools', 'tag', 'mobile'),
  statementOf('bgp.tools', 'tag', 'satnet'),
  statementOf('bgp.tools', 'tag', 'biznet'),
  statementOf('bgp.tools', 'class', 'Content'),
  statementOf('bgp.tools', 'tag', 'cdn'),
  statementOf('bgp.tools', 'tag', 'vpsh'),
  statementOf('bgp.tools', 'tag', 'ddosm'),
  statementOf('bgp.tools', 'tag', 'vpn'),
  statementOf('bgp.tools', 'tag', 'gov'),
  statementOf('bgp.tools', 'tag', 'corp'),
];

/** A statement in words: `PeeringDB's info_type "NSP"`, `bgp.tools' tag "vpsh" (Server Hosting)`. */
export function statementText(n: number): string {
  const s = REGISTRY_STATEMENTS[n];
  if (s === null || s === undefined) return 'a network registry';
  return `${s.registry}'${s.registry.endsWith('s') ? '' : 's'} ${s.field} ${JSON.stringify(s.value)}${s.label === undefined ? '' : ` (${s.label})`}`;
}
