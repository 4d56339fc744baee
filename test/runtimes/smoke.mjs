// What a user of one JavaScript runtime does with iprecord, run by that runtime (Node, Bun or Deno) over the built
// package: `<runtime> test/runtimes/smoke.mjs <dist> <addresses file> [data dir]` (Deno: `deno run -A`). Plain JavaScript,
// so that every runtime runs it as it is; `test/engines/runtimes.ts` runs it in each and checks what it prints against
// Node's own answers. Prints one line of JSON.
//
// The README's first lookup (the default engine), then open(), lookup(), select(), lookupJson(), writeJson() into a
// buffer, reload() and close() over the given addresses (errors as values), with the resident memory after open and
// after 100 000 lookups.

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [dist, addressFile, data] = process.argv.slice(2);
const { lookup, open } = await import(pathToFileURL(`${dist}/index.js`).href);
const started = performance.now();
const first = lookup('8.8.8.8');
const firstMs = performance.now() - started;
const engine = await open(data === undefined ? {} : { data });
const info = engine.info();
/** The process's resident memory (Linux: every runtime reads /proc the same way): anonymous and file-backed (the map). */
const resident = () => {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
};
const rssOpen = resident();

const addresses = readFileSync(addressFile, 'utf8')
  .split('\n')
  .filter((l) => l !== '');
const answer = (f) => {
  try {
    return f();
  } catch (e) {
    return { error: e.code ?? e.message };
  }
};
const pick = engine.select(['country_code', 'region_code', 'asn.asn', 'asn.route', 'threat.is_tor', 'threat.scores.trust_score']);
const buf = new Uint8Array(1 << 16);
const decoder = new TextDecoder();
const records = [];
const selected = [];
let writeDiffers = 0;
for (const ip of addresses) {
  records.push(answer(() => engine.lookup(ip)));
  selected.push(answer(() => pick(ip)));
  const json = answer(() => engine.lookupJson(ip));
  const written = answer(() => engine.writeJson(ip, buf, 7));
  // The same bytes but for the clock, read at each call.
  const clockless = (text) => text.replace(/"current_time":"[^"]*"/, '');
  if (typeof json === 'string' ? clockless(decoder.decode(buf.subarray(7, 7 + written))) !== clockless(json) : written.error !== json.error)
    writeDiffers++;
}
// 100 000 lookups of distinct addresses (a walk over IPv4 with a stride), then the memory held.
let n = 0;
for (let i = 0, a = 0x01000000; i < 100_000; i++, a = (a + 40_503 * 256 + 17) >>> 0) {
  const ip = `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
  if (engine.tryLookup(ip).ip !== undefined) n++;
}
const rssAfter = resident();
const reloaded = await engine.reload();
const afterReload = engine.lookupJson('8.8.8.8');
engine.close();

const runtime =
  typeof globalThis.Bun !== 'undefined'
    ? `bun ${globalThis.Bun.version}`
    : typeof globalThis.Deno !== 'undefined'
      ? `deno ${globalThis.Deno.version.deno}`
      : `node ${process.versions.node}`;
console.log(
  JSON.stringify({
    runtime,
    firstMs,
    first,
    memory: info.memory,
    rssOpen,
    rssAfter,
    answered: n,
    records,
    selected,
    writeDiffers,
    reloaded: reloaded === undefined ? null : typeof reloaded,
    afterReload: JSON.parse(afterReload).asn,
  }),
);
