/**
 * The record's template: its members in CONTRACT.md's order and where
 * each value comes from. The dataset stores the static values, each once
 * (`dataset/layout.ts`); records as objects (`record/objects.ts`) and as
 * JSON text and UTF-8 bytes (`record/render.ts`, one writer for both)
 * follow this order, and `test/unit/record/template.test.ts` checks each
 * output's members against it.
 *
 * Sources: a table of the dataset (a static value of the range's row of
 * it), `lookup` (written per lookup: the address, the count), `clock`
 * (the location's zone, with the time and offset of the moment).
 * Members partly per lookup: `flag` (the base URL, an option of `open()`,
 * before the country's path), `asn.route` (the address masked to the
 * range's prefix), `threat` (its basic form per option).
 */

export const RECORD_TEMPLATE = {
  ip: 'lookup',
  is_eu: 'countries',
  city: 'places',
  region: 'places',
  region_code: 'places',
  region_type: 'places',
  country_name: 'countries',
  country_code: 'countries',
  continent_name: 'countries',
  continent_code: 'countries',
  latitude: 'locations',
  longitude: 'locations',
  postal: 'locations',
  calling_code: 'countries',
  flag: 'countries',
  emoji_flag: 'countries',
  emoji_unicode: 'countries',
  asn: 'networks',
  carrier: 'networks',
  languages: 'countries',
  currency: 'countries',
  time_zone: 'clock',
  threat: 'threats',
  count: 'lookup',
} as const;

export type RecordMember = keyof typeof RECORD_TEMPLATE;

/** The record's members in order. */
export const RECORD_MEMBERS = Object.freeze(Object.keys(RECORD_TEMPLATE)) as readonly RecordMember[];
/** The members a place row of the dataset holds, in the record's order (`dataset/layout.ts` lays its row out by them). */
export const PLACE_MEMBERS = Object.freeze(RECORD_MEMBERS.filter((k) => RECORD_TEMPLATE[k] === 'places')) as readonly PlaceMember[];
export type PlaceMember = { [K in RecordMember]: (typeof RECORD_TEMPLATE)[K] extends 'places' ? K : never }[RecordMember];
/** The members a location row of the dataset holds, in the record's order. */
export const LOCATION_MEMBERS = Object.freeze(
  RECORD_MEMBERS.filter((k) => RECORD_TEMPLATE[k] === 'locations'),
) as readonly LocationMember[];
export type LocationMember = { [K in RecordMember]: (typeof RECORD_TEMPLATE)[K] extends 'locations' ? K : never }[RecordMember];
/** The members of `asn` (`route` per lookup) and of `carrier`. */
export const ASN_MEMBERS = ['asn', 'name', 'domain', 'route', 'type'] as const;
export const CARRIER_MEMBERS = ['name', 'mcc', 'mnc'] as const;
/** The flags of the threat object, in its key order (then `blocklists` and `scores`). */
export const THREAT_FLAGS = [
  'is_tor',
  'is_vpn',
  'is_icloud_relay',
  'is_proxy',
  'is_datacenter',
  'is_anonymous',
  'is_known_attacker',
  'is_known_abuser',
  'is_threat',
  'is_bogon',
] as const;
export type AsnMember = (typeof ASN_MEMBERS)[number];
export type CarrierMember = (typeof CARRIER_MEMBERS)[number];
/** The members of `asn` a network row of the dataset holds (all but `route`), in order; then it holds the carrier's. */
export const ASN_STORED = Object.freeze(ASN_MEMBERS.filter((k) => k !== 'route')) as readonly Exclude<AsnMember, 'route'>[];

/** The JSON text before a member's value: `,"key":` (the first member's: `{"key":`). */
export function memberText(key: string, first = false): string {
  return (first ? '{' : ',') + JSON.stringify(key) + ':';
}

/** Where `flag` points by default: the flag's path is put after it (an option of `open()`, `flagBaseUrl`). */
export const DEFAULT_FLAG_BASE_URL = 'https://flagcdn.com/w320';

/** `flag` after its base URL, for a country code. */
export function flagPath(countryCode: string): string {
  return `/${countryCode.toLowerCase()}.png`;
}

/**
 * The runs of members a country's row gives (consecutive in the template),
 * each as the members' JSON text with `value(key)` the JSON text of each,
 * and the key of the member after it (`,"city":`); `flag` splits its run
 * in two: up to its value, which is `null` with no country code, else `"`
 * and the base URL goes between the two.
 */
export function countryRuns(value: (key: RecordMember) => string, countryCode: string | null): string[] {
  const runs: string[] = [];
  let run: string | null = null;
  for (const key of RECORD_MEMBERS) {
    if (RECORD_TEMPLATE[key] !== 'countries') {
      if (run !== null) runs.push(run + memberText(key));
      run = null;
      continue;
    }
    run = (run ?? '') + memberText(key);
    if (key !== 'flag') run += value(key);
    else if (countryCode === null) {
      runs.push(run + 'null');
      run = '';
    } else {
      runs.push(run + '"');
      run = JSON.stringify(flagPath(countryCode)).slice(1);
    }
  }
  if (run !== null) runs.push(run);
  return runs;
}

/** Categories, as bits of a flags mask. */
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

/** Category names, in bit order (`ThreatFlag` 1, 2, 4, ...). */
export const CATEGORIES = ['bogon', 'datacenter', 'tor', 'vpn', 'proxy', 'icloud_relay', 'attacker', 'abuser'] as const;
export type Category = (typeof CATEGORIES)[number];

/** The flag bit of a category. */
export function categoryFlag(c: Category): number {
  return 1 << CATEGORIES.indexOf(c);
}
