/**
 * `iprecord`: the lookup API, its types and errors. Building and updating
 * data are `iprecord/build`, exports `iprecord/export`, the HTTP server
 * `iprecord/server`: importing this never loads the compiler.
 */

export { open, openSync, Engine } from './engine/engine.js';
export { lookup, tryLookup, field, threat, bulk, defaultEngine } from './engine/default.js';
export {
  IprecordError,
  InvalidIpError,
  PrivateIpError,
  ReservedIpError,
  InvalidFieldError,
  InvalidBulkError,
  InvalidDatasetError,
  InvalidOptionsError,
  ExportError,
  ClosedError,
  isIprecordError,
} from './contract/errors.js';
export { FIELD_NAMES, isFieldName } from './record/fields.js';
export { canonicalIp } from './ip/address.js';

export type { LookupOptions, AnswerOptions, EngineInfo, ListState, FeedState, Selector } from './engine/engine.js';
export type { Selected, PathValue } from './record/select.js';
export type { OpenOptions, SharedFile, SharedFiles } from './engine/options.js';
export type { DatabaseInfo } from './dataset/layout.js';
export type { AsnTypeEvidence, DamagedHistory, Explanation, ListEvidence } from './evidence/explain.js';
export type { CountryAgreement } from './evidence/compare.js';
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
