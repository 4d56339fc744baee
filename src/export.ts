/**
 * `iprecord/export`: the compiled data as CSV, MMDB or Parquet files for
 * other engines (docs/exports.md).
 */

export { exportDataset, EXPORT_FORMATS, type ExportFormat, type ExportOptions, type ExportResult } from './export/index.js';
