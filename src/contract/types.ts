/**
 * The record of CONTRACT.md: keys in the contract's order, snake_case as on
 * the wire. Unknown values are null; `carrier` is present only for mobile
 * networks.
 */

export interface Language {
  readonly name: string;
  readonly native: string;
  readonly code: string;
}

export interface Currency {
  readonly name: string;
  readonly code: string;
  readonly symbol: string;
  readonly native: string;
  readonly plural: string;
}

export interface TimeZone {
  name: string;
  abbr: string;
  offset: string;
  is_dst: boolean;
  current_time: string;
}

export type AsnType = 'isp' | 'hosting' | 'business' | 'education' | 'government';

export interface Asn {
  /** `AS<number>`. */
  readonly asn: string;
  readonly name: string | null;
  readonly domain: string | null;
  /** CIDR of the matched network, `8.8.8.0/24`. */
  readonly route: string;
  readonly type: AsnType | null;
}

export interface Carrier {
  readonly name: string | null;
  readonly mcc: string;
  readonly mnc: string;
}

export interface Blocklist {
  readonly name: string;
  readonly site: string;
  readonly type: string;
}

export interface Scores {
  readonly vpn_score: number;
  readonly proxy_score: number;
  readonly threat_score: number;
  readonly trust_score: number;
}

/** The threat object. `is_vpn` and `scores` are left out with the `basicThreat` option (the service's plans below Business). */
export interface Threat {
  readonly is_tor: boolean;
  readonly is_vpn?: boolean;
  readonly is_icloud_relay: boolean;
  readonly is_proxy: boolean;
  readonly is_datacenter: boolean;
  readonly is_anonymous: boolean;
  readonly is_known_attacker: boolean;
  readonly is_known_abuser: boolean;
  readonly is_threat: boolean;
  readonly is_bogon: boolean;
  readonly blocklists: readonly Blocklist[];
  readonly scores?: Scores;
}

export interface IpRecord {
  ip: string;
  is_eu: boolean | null;
  city: string | null;
  region: string | null;
  region_code: string | null;
  region_type: string | null;
  country_name: string | null;
  country_code: string | null;
  continent_name: string | null;
  continent_code: string | null;
  latitude: number | null;
  longitude: number | null;
  postal: string | null;
  calling_code: string | null;
  flag: string | null;
  emoji_flag: string | null;
  emoji_unicode: string | null;
  asn: Asn | null;
  carrier?: Carrier;
  languages: readonly Language[] | null;
  currency: Currency | null;
  time_zone: TimeZone | null;
  threat: Threat;
  count: string;
}

/** A selectable field name (CONTRACT.md). */
export type FieldName = keyof IpRecord;

/** The `fields` option: names in a list, or in text separated by commas (`'ip,city'`). */
export type Fields = string | readonly string[];

type Trim<S extends string> = S extends ` ${infer T}` ? Trim<T> : S extends `${infer T} ` ? Trim<T> : S;
type Named<S extends string> = S extends `${infer A},${infer B}` ? Trim<A> | Named<B> : Trim<S>;

/**
 * The record a lookup answers with `fields` of type `F`: the fields named
 * (in a list or text known to the compiler), else the whole record;
 * `Partial<IpRecord>` when the names are known only at run time.
 */
export type RecordOf<F extends Fields | undefined> = [F] extends [undefined]
  ? IpRecord
  : F extends readonly (infer K extends string)[]
    ? string extends K
      ? Partial<IpRecord>
      : Pick<IpRecord, Extract<K, FieldName>>
    : F extends string
      ? string extends F
        ? Partial<IpRecord>
        : Pick<IpRecord, Extract<Named<F>, FieldName>>
      : never;

/** A bulk entry that failed: the service's `{ message }`, plus `code` and `status`. */
export interface BulkError {
  readonly message: string;
  readonly code: string;
  readonly status: number;
}
