// `prepare` (npm runs it in a development checkout, after `npm install`
// or `npm ci`): builds dist/, then the embedded data (postinstall.mjs).
// npx, asked for `iprecord` inside this folder, installs the folder itself
// into its cache to run the command (npm 11 does so for a package's own
// bin) and runs its lifecycle scripts again: when dist/ is already built
// there is nothing to do, and the first `npx iprecord` answers at once
// instead of building again.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (process.env.npm_command === 'exec' && existsSync(new URL('../dist/cli.js', import.meta.url))) process.exit(0);
const npm = process.env.npm_execpath;
// The build's output goes to standard error: standard output is npm's own (`npm pack --json` answers JSON there).
const stdio = ['inherit', 2, 'inherit'];
const build = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio }) : spawnSync('npm run build', { stdio, shell: true });
if (build.status !== 0) process.exit(build.status ?? 1);
await import('./postinstall.mjs');
