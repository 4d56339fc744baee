// Builds iprecord's memory-map addon (native/mmap.c) with node-gyp, at
// install. Optional: without a compiler or Node's headers the build fails,
// installing goes on, and open() reads files into memory instead (info()
// says why). npm gives its own node-gyp (npm_config_node_gyp) and the
// headers' directory (npm_config_nodedir) to install scripts.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// npx installing this folder to run its own command (see prepare.mjs): the addon is built already.
if (process.env.npm_command === 'exec' && existsSync(new URL('../build/Release/iprecord_mmap.node', import.meta.url))) process.exit(0);
if (process.platform === 'win32') {
  console.log('iprecord: no memory-map addon on Windows; files are read into memory.');
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
  console.log('iprecord: node-gyp not found; the memory-map addon is not built (files are read into memory).');
  process.exit(0);
}
const args = [gyp, 'rebuild'];
if (process.env.npm_config_nodedir) args.push(`--nodedir=${process.env.npm_config_nodedir}`);
const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
if (r.status === 0) console.log('iprecord: memory-map addon built.');
else console.log(`iprecord: the memory-map addon could not be built (${(r.stderr || r.stdout || '').trim().split('\n').slice(-1)[0] || 'node-gyp failed'}); files are read into memory.`);
