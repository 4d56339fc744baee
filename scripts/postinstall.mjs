// Compiles the embedded data (DB-IP Lite City, the ASN ranges of
// @ip-location-db/asn, the IANA registries) into the default dataset,
// once, at install. Skipped quietly when iprecord is not built yet (a
// development checkout runs it again after the build, from `prepare`);
// if install scripts are disabled, the first open() compiles it instead.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/index.js', import.meta.url);
// npx installing this folder to run its own command (see prepare.mjs) finds the data made already.
const ready = process.env.npm_command === 'exec' && existsSync(new URL('../data/default.iprd', import.meta.url));
if (existsSync(entry) && !ready) {
  try {
    const started = Date.now();
    const { openSync } = await import(entry.href);
    openSync().close();
    // Standard error: standard output is npm's own (`npm pack --json`).
    console.error(`iprecord: embedded data ready (${Date.now() - started} ms)`);
  } catch (e) {
    console.warn(`iprecord: could not prepare the embedded data now (${e.message}); it will be prepared on first use.`);
  }
}
