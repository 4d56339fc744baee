// Builds iprecord's memory-map addon (native/mmap.c) with node-gyp, at
// install. Optional: without a compiler or Node's headers the build fails,
// installing goes on, and open() reads files into memory instead (info()
// says why). npm gives its own node-gyp (npm_config_node_gyp) and the
// headers' directory (npm_config_nodedir) to install scripts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Says how the build went in build/native-install.json, which the library
 * reads when the addon is missing (src/platform/native.ts): its absence means this
 * script did not run (npm install --ignore-scripts, pnpm by default).
 */
function outcome(built, line) {
  try {
    mkdirSync(new URL('../build/', import.meta.url), { recursive: true });
    writeFileSync(new URL('../build/native-install.json', import.meta.url), JSON.stringify({ built, reason: built ? null : line }) + '\n');
  } catch {
    // Not writable: the library then says the scripts did not run.
  }
  console.log(`iprecord: ${line}`);
}

// npx installing this folder to run its own command (see prepare.mjs): the addon is built already.
if (process.env.npm_command === 'exec' && existsSync(new URL('../build/Release/iprecord_mmap.node', import.meta.url))) process.exit(0);
if (process.platform === 'win32') {
  outcome(false, 'no memory-map addon on Windows; files are read into memory.');
  process.exit(0);
}
let gyp = process.env.npm_config_node_gyp;
if (!gyp || !existsSync(gyp)) {
  try {
    gyp = createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {
    gyp = null;
  }
}
if (!gyp) {
  outcome(false, 'node-gyp not found; the memory-map addon is not built (files are read into memory).');
  process.exit(0);
}
const args = [gyp, 'rebuild'];
if (process.env.npm_config_nodedir) args.push(`--nodedir=${process.env.npm_config_nodedir}`);
const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
if (r.status === 0) outcome(true, 'memory-map addon built.');
else
  outcome(
    false,
    `the memory-map addon could not be built (${(r.stderr || r.stdout || '').trim().split('\n').slice(-1)[0] || 'node-gyp failed'}); files are read into memory.`,
  );
