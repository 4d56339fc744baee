#!/usr/bin/env node
/**
 * The `iprecord` command: a verb (`verbs.ts`, each in a file of its own)
 * or addresses to look up (`verbs/lookup.ts`), imported when asked for.
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

import { isVerb, misspeltCommand, VERBS } from './verbs.js';

// A reader that stopped reading (`| head`) is no failure; any other write error (a full disk, a closed or bad
// descriptor, an I/O error) is one line and exit code 2, never a stack trace or the code of "some inputs bad".
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  process.stderr.write(`iprecord: cannot write to standard output: ${e.message}\n`);
  process.exit(2);
});

// `--quiet` (any command, anywhere) or IPRECORD_QUIET=1: no warnings on standard error; errors still are.
const argv = process.argv.slice(2).filter((a) => a !== '--quiet');
const quiet = argv.length < process.argv.length - 2 || process.env.IPRECORD_QUIET === '1';

// Process warnings (the library's: codes IPRECORD_*) as lines of the command's own, each once; on a terminal, a progress
// line (enrich, export, a compile) is cleared first, so that a warning never shares its line.
process.removeAllListeners('warning');
const told = new Set<string>();
const lineStart = process.stderr.isTTY === true ? '\r\x1b[K' : '';
process.on('warning', (w: Error & { code?: string }) => {
  if (quiet || told.has(w.message)) return;
  told.add(w.message);
  process.stderr.write(lineStart + (w.code?.startsWith('IPRECORD_') ? `iprecord: ${w.message}\n` : `${w.name}: ${w.message}\n`));
});

async function run(argv: string[]): Promise<number> {
  if (isVerb(argv[0])) return (await VERBS[argv[0]].load()).run(argv.slice(1));
  const verb = misspeltCommand(argv[0]);
  if (verb !== undefined) {
    process.stderr.write(`iprecord: unknown command ${argv[0]} (did you mean ${verb}?); iprecord --help lists the commands\n`);
    return 2;
  }
  return (await import('./verbs/lookup.js')).run(argv);
}

run(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    process.exitCode = 2;
  },
);
