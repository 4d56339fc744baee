/**
 * `iprecord`: the lookup API, its types and errors. Building and updating
 * data are `iprecord/build`, exports `iprecord/export`, the HTTP server
 * `iprecord/server`: importing this never loads the compiler.
 */

export { open, openSync, Engine } from './engine.js';
export { lookup, tryLookup, field, threat, bulk, defaultEngine } from './default-engine.js';
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
} from './errors.js';
export { FIELD_NAMES, isFieldName } from './record/fields.js';
export { canonicalIp } from './ip/address.js';

export type { LookupOptions, AnswerOptions, EngineInfo, ListState, FeedState, Selector } from './engine.js';
export type { Selected, PathValue } from './dataset/select.js';
export type { OpenOptions, SharedFile, SharedFiles } from './options.js';
export type { DatabaseInfo } from './snapshot.js';
export type { AsnTypeEvidence, Explanation, ListEvidence } from './explain.js';
export type { CountryAgreement } from './compare.js';
export type { IprecordErrorCode } from './errors.js';
export type { IpRecord, Asn, AsnType, Carrier, Blocklist, Scores, Threat, Currency, Language, TimeZone, FieldName, Fields, RecordOf, BulkError } from './types.js';
