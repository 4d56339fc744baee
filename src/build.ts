/**
 * `iprecord/build`: building, updating and compiling data (threat feeds,
 * databases, the MMDB writer), apart from the lookup API (`iprecord`) so
 * that a process that only looks addresses up never loads the compiler.
 */

export { MmdbWriter, Typed, type WriterOptions, type WritableValue } from './mmdb/writer.js';
export { compileAsnCsv } from './compile/asn/compile.js';
export { classifyAsn } from './compile/asn/classify.js';
export { buildDataset, buildThreat, type BuildOptions, type BuildResult, type FeedReport } from './compile/feeds/build.js';
export { defaultThreatConfig, parseThreatConfig, readThreatConfig, type FeedConfig, type ThreatConfig } from './compile/feeds/config.js';
export { updateDataset, type UpdateOptions, type UpdateResult, type FeedUpdate } from './compile/feeds/update.js';
export type { SourceUpdate } from './compile/origins/update.js';
export { parseFeed, type FeedFormat, type ParseOptions, type ParsedFeed } from './compile/feeds/parse.js';
export { liteDataset, writeLiteDataset, type LiteResult } from './compile/lite.js';
