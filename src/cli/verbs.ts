/**
 * The verbs of `iprecord`: each a file of its own in `verbs/` with its
 * usage text and `run`, loaded only when asked for (the primary process of
 * `serve --workers n` then holds no engine code). A first argument that is
 * no verb is an address (`verbs/lookup.ts`).
 */

import { nearestName } from '../engine/options.js';

/** A verb's file: its usage (`--help`) and what it does, returning the exit code. */
export interface Verb {
  readonly USAGE: string;
  run(argv: string[]): number | Promise<number>;
}

/** Each verb: its line in `iprecord --help` (after `iprecord `) and its file. */
export const VERBS = {
  build: { synopsis: 'build [--config file] [--out dir]', load: () => import('./verbs/build.js') },
  update: { synopsis: 'update [--config file] [--data dir]', load: () => import('./verbs/update.js') },
  info: { synopsis: 'info [--data dir]', load: () => import('./verbs/info.js') },
  export: { synopsis: 'export --format csv|mmdb|parquet --out file [--data dir]', load: () => import('./verbs/export.js') },
  diff: { synopsis: 'diff <old> <new> | --previous [--data dir] [--json]', load: () => import('./verbs/diff.js') },
  explain: { synopsis: 'explain <ip> [--data dir] [--compare file]', load: () => import('./verbs/explain.js') },
  enrich: { synopsis: 'enrich [file|-] [options]   (iprecord enrich --help)', load: () => import('./verbs/enrich.js') },
  serve: { synopsis: 'serve [options]              (iprecord serve --help)', load: () => import('./verbs/serve.js') },
} satisfies Record<string, { readonly synopsis: string; readonly load: () => Promise<Verb> }>;

export type VerbName = keyof typeof VERBS;

/** The verbs' names (a first argument that is none of them is an address). */
export const COMMANDS = Object.keys(VERBS) as readonly VerbName[];

export const isVerb = (arg: string | undefined): arg is VerbName => arg !== undefined && Object.hasOwn(VERBS, arg);

/**
 * The verb a first argument most likely misspells (`enrch`, `exports`),
 * when it is a word that is no address; undefined for anything else (`bleh`
 * stays an address to look up, answered with the service's error).
 */
export function misspeltCommand(arg: string | undefined): string | undefined {
  return arg !== undefined && /^[a-z][a-z-]*$/i.test(arg) ? nearestName(arg, COMMANDS) : undefined;
}
