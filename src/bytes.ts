/**
 * `iprecord/bytes`: the lookup API over a dataset's bytes, for runtimes
 * without a file system or Node's built-ins (Cloudflare Workers, Deno
 * Deploy, edge functions, browsers). Its build imports no Node module and
 * no Buffer: only Uint8Array, DataView, TextDecoder and TextEncoder.
 * docs/runtimes.md shows it in a Worker and in a page.
 */

export { openBytes, BytesEngine } from './engine/bytes.js';
export type { BytesOptions, BytesInfo, DatasetBytes, AnswerOptions, LookupOptions, Selector } from './engine/bytes.js';
export {
  IprecordError,
  InvalidIpError,
  PrivateIpError,
  ReservedIpError,
  InvalidFieldError,
  InvalidBulkError,
  InvalidDatasetError,
  InvalidOptionsError,
  ClosedError,
  isIprecordError,
} from './contract/errors.js';
export { FIELD_NAMES, isFieldName } from './record/fields.js';
export { canonicalIp } from './ip/address.js';
export type { Selected, PathValue } from './record/select.js';
export type { IprecordErrorCode } from './contract/errors.js';
export type {
  IpRecord,
  Asn,
  AsnType,
  Carrier,
  Blocklist,
  Scores,
  Threat,
  Currency,
  Language,
  TimeZone,
  FieldName,
  Fields,
  RecordOf,
  BulkError,
} from './contract/types.js';
