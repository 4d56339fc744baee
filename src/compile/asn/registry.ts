/**
 * A network registry (`sources.networks`): what each network's operator
 * says it is, read from PeeringDB's network objects, as its API answers
 * them (`https://www.peeringdb.com/api/net`: `{ "data": [...] }`) or as a
 * whole dump holds them (`{ "net": { "data": [...] } }`, CAIDA's daily
 * PeeringDB dumps). Each object's `asn` and `info_type` (or, where that is
 * not disclosed, the first of `info_types` that names a type):
 *
 * | PeeringDB | `asn.type` |
 * |---|---|
 * | Cable/DSL/ISP, NSP | isp |
 * | Content | hosting |
 * | Educational/Research | education |
 * | Government | government |
 * | Enterprise, Non-Profit | business |
 * | Network Services, Route Server, Route Collector, Not Disclosed | (the name and the data decide) |
 *
 * A network the registry types keeps that type whatever its name or the
 * data say (`evidence.ts`). Build time only.
 */

import { readRegular, withoutBom } from '../../files/read.js';
import { InvalidDatasetError } from '../../contract/errors.js';
import type { AsnType } from '../../contract/types.js';

const TYPES: Readonly<Record<string, AsnType>> = {
  'Cable/DSL/ISP': 'isp',
  NSP: 'isp',
  Content: 'hosting',
  'Educational/Research': 'education',
  Government: 'government',
  Enterprise: 'business',
  'Non-Profit': 'business',
};

/** The type a PeeringDB network object states, or null. */
function typeOf(net: Record<string, unknown>): AsnType | null {
  const stated = typeof net.info_type === 'string' ? TYPES[net.info_type] : undefined;
  if (stated !== undefined) return stated;
  if (Array.isArray(net.info_types)) for (const t of net.info_types) if (typeof t === 'string' && TYPES[t] !== undefined) return TYPES[t];
  return null;
}

/**
 * The largest registry file read: PeeringDB's network objects are about
 * 60 MB, a whole CAIDA dump of every object type a few times that; parsed,
 * JSON takes several times its size in memory.
 */
export const MAX_REGISTRY_BYTES = 256 * 1024 * 1024;

/**
 * The types the registry files state, by ASN (a later file wins), and how
 * many network objects they hold. A file is read as a regular file of at
 * most `MAX_REGISTRY_BYTES`, a byte order mark first or not.
 * @throws InvalidDatasetError when a file is too large or not JSON of PeeringDB network objects
 */
export function readRegistry(paths: readonly string[]): { types: Map<number, AsnType>; networks: number } {
  const types = new Map<number, AsnType>();
  let networks = 0;
  for (const path of paths) {
    let doc: unknown;
    try {
      doc = JSON.parse(withoutBom(readRegular(path, MAX_REGISTRY_BYTES).toString('utf8')));
    } catch (e) {
      throw new InvalidDatasetError(`${path}: cannot be read as a network registry (PeeringDB's JSON): ${(e as Error).message}`, {
        cause: e,
      });
    }
    const root = doc as { data?: unknown; net?: { data?: unknown } } | null;
    const list = root?.data ?? root?.net?.data;
    if (!Array.isArray(list))
      throw new InvalidDatasetError(
        `${path}: not a network registry: expected PeeringDB's network objects ({ "data": [...] } or { "net": { "data": [...] } }).`,
      );
    for (const net of list) {
      const asn = (net as { asn?: unknown } | null)?.asn;
      if (!Number.isInteger(asn) || (asn as number) < 0 || (asn as number) > 0xffffffff) continue;
      networks++;
      const type = typeOf(net as Record<string, unknown>);
      if (type !== null) types.set(asn as number, type);
    }
  }
  return { types, networks };
}
