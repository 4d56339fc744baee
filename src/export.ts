/**
 * `iprecord/export`: the compiled data as CSV, MMDB or Parquet files for
 * other engines (docs/exports.md).
 */

export {
  exportDataset,
  EXPORT_FORMATS,
  EXPORT_SCHEMAS,
  type ExportFormat,
  type ExportOptions,
  type ExportResult,
  type ExportSchema,
} from './export/index.js';
