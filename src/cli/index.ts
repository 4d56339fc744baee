#!/usr/bin/env node
/**
 * The `iprecord` command: `serve` (serve.ts), every other command
 * (commands.ts). Each is imported when asked for: the primary process of
 * `serve --workers n` then holds no engine code.
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

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
  if (argv[0] === 'serve') return (await import('./serve.js')).runServe(argv.slice(1));
  return (await import('./commands.js')).main(argv);
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
