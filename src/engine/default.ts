/**
 * Top-level `lookup`, `tryLookup`, `field`, `threat` and `bulk`: the same operations on a
 * default engine over the embedded data, opened on first use.
 */

import { openSync, type Engine, type LookupOptions } from './engine.js';
import type { BulkError, FieldName, Fields, IpRecord, RecordOf, Threat } from '../contract/types.js';

let engine: Engine | null = null;

/** The shared default engine (opened synchronously on first use). */
export function defaultEngine(): Engine {
  if (engine === null || engine.closed) engine = openSync();
  return engine;
}

/** `Engine.lookup` on the default engine. */
export function lookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> {
  return defaultEngine().lookup<F>(ip, options);
}

/** `Engine.tryLookup` on the default engine: an address without a record answers its error as a value. */
export function tryLookup<const F extends Fields | undefined = undefined>(ip: string, options?: LookupOptions<F>): RecordOf<F> | BulkError {
  return defaultEngine().tryLookup<F>(ip, options);
}

/** `Engine.field` on the default engine. */
export function field<K extends FieldName>(ip: string, name: K): IpRecord[K] | null {
  return defaultEngine().field(ip, name);
}

/** `Engine.threat` on the default engine. */
export function threat(ip: string): Threat {
  return defaultEngine().threat(ip);
}

/** `Engine.bulk` on the default engine. */
export function bulk<const F extends Fields | undefined = undefined>(
  ips: readonly string[],
  options?: LookupOptions<F>,
): (RecordOf<F> | BulkError)[] {
  return defaultEngine().bulk<F>(ips, options);
}
