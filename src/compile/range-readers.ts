/** The readers of range CSVs by the role their rows serve. Build time only. */

import { readGeoRows } from './geo-csv.js';
import { readAsnRows, type RangeReader } from './range-csv.js';

export type RangeRole = 'asn' | 'geo';
export const RANGE_READERS: Record<RangeRole, RangeReader<unknown>> = { asn: readAsnRows, geo: readGeoRows };
