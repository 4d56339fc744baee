/**
 * What each database schema contributes to a record, in one internal shape
 * per role. Adapters (`adapters/`) map a decoded MMDB record to these.
 */

import type { LocationMember, PlaceMember } from '../../contract/template.js';

/**
 * Place and location members of text an adapter reads as they are, by their names
 * in the record (`RECORD_TEMPLATE`): a member added to the template is
 * read from its source here, in the adapter of the schema that has it.
 */
export type SourcedMembers = Readonly<Partial<Record<Exclude<PlaceMember | LocationMember, 'latitude' | 'longitude'>, string | null>>>;

/** Location facts (geo role). */
export interface GeoFacts {
  readonly countryCode: string | null;
  readonly region: string | null;
  /** ISO 3166-2 subdivision part when the database has it, else matched by name. */
  readonly regionCode: string | null;
  readonly city: string | null;
  readonly postal: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly timeZone: string | null;
  /** Members read as they are (`SourcedMembers`). */
  readonly members?: SourcedMembers;
}

/** Network owner facts (asn role). */
export interface AsnFacts {
  readonly asn: number | null;
  readonly name: string | null;
  readonly domain: string | null;
  /** Mobile network (ISP databases): carrier name and codes. */
  readonly carrier: { readonly name: string | null; readonly mcc: string; readonly mnc: string } | null;
}

/** Threat flags a database asserts (anonymous role: MaxMind Anonymous-IP). */
export interface AnonymousFacts {
  readonly tor: boolean;
  readonly vpn: boolean;
  readonly proxy: boolean;
  readonly hosting: boolean;
}

export type Role = 'geo' | 'asn' | 'anonymous';

export type Schema = 'flat' | 'maxmind-city' | 'maxmind-asn' | 'maxmind-isp' | 'maxmind-anonymous' | 'ipinfo-lite' | 'asn-csv' | 'geo-csv';
