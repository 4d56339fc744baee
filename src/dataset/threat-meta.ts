/**
 * What a dataset says of the threat feeds compiled into it (its metadata's
 * `threat`, `info().feeds`): written by the feed compiler, read at run time.
 */

import type { Category } from '../contract/template.js';
import type { Blocklist } from '../contract/types.js';

/** What the file says of one feed (for `info()`). */
export interface FeedMeta {
  readonly name: string;
  readonly categories: readonly Category[];
  readonly source: string;
  readonly format: string;
  readonly entries: number;
  readonly badLines: number;
  /** Distinct addresses covered, as a decimal string (IPv6 counts are large). */
  readonly addresses: string;
  readonly dataDate: string | null;
  readonly fetchedAt: string | null;
}

export interface ThreatMeta {
  readonly builtAt: string;
  readonly feeds: readonly FeedMeta[];
  readonly blocklists: readonly Blocklist[];
}
