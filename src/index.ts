/**
 * `iprecord`: the lookup API, its types and errors. Building and updating
 * data are `iprecord/build`, exports `iprecord/export`, the HTTP server
 * `iprecord/server`, the engine over bytes alone `iprecord/bytes`: importing
 * this never loads the compiler.
 */

export { open, openSync, Engine } from './engine/engine.js';
export { lookup, tryLookup, field, threat, bulk, defaultEngine } from './engine/default.js';
// The API `iprecord/bytes` has, the engine over bytes included (a dataset fetched or embedded opens here too).
export * from './bytes.js';
export { ExportError } from './contract/errors.js';

export type { LookupOptions, AnswerOptions, EngineInfo, ListState, FeedState, Selector } from './engine/engine.js';
export type { OpenOptions, SharedFile, SharedFiles } from './engine/options.js';
export type { DatabaseInfo } from './dataset/layout.js';
export type { AsnTypeEvidence, DamagedHistory, Explanation, ListEvidence } from './evidence/explain.js';
export type { CountryAgreement } from './evidence/compare.js';
