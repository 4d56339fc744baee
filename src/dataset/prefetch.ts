/**
 * Reads, ahead of writing them, what the records of many addresses are
 * written from (`iprecord enrich`'s rows, `POST /bulk`): on addresses not
 * seen before each level of a record (the range, the record's row, its
 * location and network rows, their parts) is a read from memory that waits
 * on the one before it. One address at a time those waits add up; here
 * each level is read for every address of the group before the next
 * level, so the reads of one level are in flight together, and the
 * records are then written from the processor's cache. What is read is
 * thrown away: the records are written as for any address.
 */

import { parseIpInto } from '../ip/parse.js';
import { LOC, LOCATION, NET_PART, NETWORK, PLACE, RECORD, THR, THREAT, type Dataset } from './format.js';

/** Addresses read ahead together. */
export const GROUP = 64;

const words = new Uint32Array(4);
/** The group's addresses: an IPv4 address in its last word, the version apart. */
const addresses = new Uint32Array(GROUP * 4);
const versions = new Uint8Array(GROUP);
const firsts = new Uint32Array(GROUP);
const refs = new Uint32Array(GROUP);
let kept = 0;

/**
 * Reads ahead the records of `ips[from]` up to `ips[to]` (at most GROUP
 * of them; what is not an address, or not a string, is passed over): their
 * ranges and rows, and the parts of whole records (`parts`: false for
 * chosen fields, which read the rows' values, not the parts).
 */
export function prefetch(ds: Dataset, ips: readonly unknown[], from: number, to: number, parts: boolean): void {
  let n = 0;
  for (let i = from; i < to && n < GROUP; i++) {
    const ip = ips[i];
    if (typeof ip !== 'string' || ip === '') continue;
    const version = parseIpInto(ip, words);
    if (version === 0) continue;
    versions[n] = version;
    addresses.set(words, n * 4);
    n++;
  }
  let sum = 0;
  // The index's word of each address's block, then the first start it names, then the range.
  for (let k = 0; k < n; k++)
    firsts[k] = versions[k] === 4 ? ds.index4[addresses[k * 4 + 3] >>> ds.shift4] : ds.index6[addresses[k * 4] >>> ds.shift6];
  for (let k = 0; k < n; k++) sum += versions[k] === 4 ? ds.starts4[firsts[k]] : ds.starts6[firsts[k] * 4];
  let m = 0;
  for (let k = 0; k < n; k++) {
    let ref: number;
    if (versions[k] === 4) ref = ds.find4(addresses[k * 4 + 3]);
    else {
      for (let j = 0; j < 4; j++) words[j] = addresses[k * 4 + j];
      ref = ds.find6(words);
    }
    // A range without a record (`findRange` names the defect when the record is written) is passed over.
    if (ref !== undefined && ref >>> 8 < ds.recordCount) refs[m++] = ref;
  }
  const { records, locations, networks, threats } = ds;
  const u32 = ds.parts.u32;
  for (let k = 0; k < m; k++) sum += records[(refs[k] >>> 8) * RECORD];
  for (let k = 0; k < m; k++) {
    const rec = (refs[k] >>> 8) * RECORD;
    sum +=
      locations[records[rec] * LOCATION + LOC.placePart] +
      networks[records[rec + 1] * NETWORK + NET_PART.head] +
      threats[records[rec + 2] * THREAT + THR.objectPart];
  }
  // Records as objects read their values from the rows: the place's row, the level after the location's.
  for (let k = 0; k < m && !parts; k++) sum += ds.places[locations[records[(refs[k] >>> 8) * RECORD] * LOCATION + LOC.place] * PLACE];
  for (let k = 0; k < m && parts; k++) {
    const rec = (refs[k] >>> 8) * RECORD;
    const loc = records[rec] * LOCATION;
    sum +=
      u32[locations[loc + LOC.placePart] >>> 2] +
      u32[locations[loc + LOC.part] >>> 2] +
      u32[networks[records[rec + 1] * NETWORK + NET_PART.head] >>> 2];
    sum += u32[threats[records[rec + 2] * THREAT + THR.objectPart] >>> 2];
  }
  // Kept, so that the reads are not left out as unused.
  kept = (kept + sum) | 0;
}
