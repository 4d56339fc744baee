/**
 * The metadata section of an MMDB file (MaxMind DB format 2.0), read with
 * the same bounded `Decoder` as the data and each member checked, so that
 * a damaged file is refused in the project's words, naming the file.
 */

import { InvalidDatasetError } from '../contract/errors.js';
import { Decoder, type MmdbValue } from './decoder.js';

/** What begins the metadata section. */
export const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
/** The metadata is within this many bytes of the end (the format's limit). */
const METADATA_MAX_SIZE = 128 * 1024;

export interface MmdbMetadata {
  readonly databaseType: string;
  readonly ipVersion: 4 | 6;
  readonly recordSize: 24 | 28 | 32;
  readonly nodeCount: number;
  readonly buildEpoch: Date;
  readonly languages: readonly string[];
  readonly description: Readonly<Record<string, string>>;
}

/** A map of decoded values (not a list, bytes or a scalar). */
const isMap = (v: MmdbValue | undefined): v is { [key: string]: MmdbValue } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);

/**
 * The metadata of an MMDB file, and where its marker begins (the end of the data section).
 * @throws InvalidDatasetError naming the file and what is wrong
 */
export function readMetadata(buf: Buffer, name: string): { metadata: MmdbMetadata; markerAt: number } {
  const markerAt = buf.lastIndexOf(METADATA_MARKER);
  if (markerAt < 0 || markerAt < buf.length - METADATA_MAX_SIZE)
    throw new InvalidDatasetError(`${name} is not an MMDB file: no metadata marker in its last 128 KiB.`);
  const metaStart = markerAt + METADATA_MARKER.length;
  const meta = new Decoder(buf, metaStart, buf.length, name, 'metadata').decode(metaStart);
  if (!isMap(meta)) throw new InvalidDatasetError(`${name}: the MMDB metadata is not a map.`);
  const major = meta.binary_format_major_version;
  if (major !== 2) throw new InvalidDatasetError(`${name}: unsupported MMDB format version ${String(major)}.`);
  const ipVersion = meta.ip_version;
  if (ipVersion !== 4 && ipVersion !== 6) throw new InvalidDatasetError(`${name}: invalid ip_version ${String(ipVersion)}.`);
  const recordSize = meta.record_size;
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32)
    throw new InvalidDatasetError(`${name}: invalid record_size ${String(recordSize)}.`);
  const nodeCount = meta.node_count;
  if (typeof nodeCount !== 'number' || !Number.isSafeInteger(nodeCount) || nodeCount <= 0)
    throw new InvalidDatasetError(`${name}: invalid node_count.`);
  const epoch = meta.build_epoch;
  const buildEpoch = new Date(typeof epoch === 'number' ? epoch * 1000 : NaN);
  if (Number.isNaN(buildEpoch.getTime())) throw new InvalidDatasetError(`${name}: invalid build_epoch.`);
  const description = meta.description;
  const metadata: MmdbMetadata = {
    databaseType: typeof meta.database_type === 'string' ? meta.database_type : '',
    ipVersion,
    recordSize,
    nodeCount,
    buildEpoch,
    languages: Array.isArray(meta.languages) ? meta.languages.map(String) : [],
    description: isMap(description) ? Object.fromEntries(Object.entries(description).map(([k, v]) => [k, String(v)])) : {},
  };
  return { metadata, markerAt };
}
