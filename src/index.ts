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
export { MmdbWriter, Typed } from './mmdb/writer.js';
export { compileAsnCsv } from './compile/asn/compile.js';
export { classifyAsn } from './compile/asn/classify.js';

export type { LookupOptions, AnswerOptions, EngineInfo, ListState, FeedState, Selector } from './engine.js';
export type { Selected, PathValue } from './dataset/select.js';
export { buildDataset, buildThreat, type BuildOptions, type BuildResult, type FeedReport } from './compile/feeds/build.js';
export { defaultThreatConfig, parseThreatConfig, readThreatConfig, type FeedConfig, type ThreatConfig } from './compile/feeds/config.js';
export { updateDataset, type UpdateOptions, type UpdateResult, type FeedUpdate } from './compile/feeds/update.js';
export type { SourceUpdate } from './compile/origins/update.js';
export { exportDataset, EXPORT_FORMATS, type ExportFormat, type ExportOptions, type ExportResult } from './export/index.js';
export { parseFeed, type FeedFormat, type ParseOptions, type ParsedFeed } from './compile/feeds/parse.js';
export type { OpenOptions, SharedFile, SharedFiles } from './options.js';
export type { DatabaseInfo } from './snapshot.js';
export type { IprecordErrorCode } from './errors.js';
export type { WriterOptions, WritableValue } from './mmdb/writer.js';
export type { IpRecord, Asn, AsnType, Carrier, Blocklist, Scores, Threat, Currency, Language, TimeZone, FieldName, Fields, RecordOf, BulkError } from './types.js';
