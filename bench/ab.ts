/**
 * This build against another (a checkout with `dist/` built), in one
 * process: both builds' engines over the default data (files read), the
 * distinct mix, its IPv6 addresses alone and the log-like mix (`mix.ts`)
 * in alternating slices of 40 000 addresses, 14 rounds; `lookup()` (errors
 * caught), `lookupJson()`
 * written into a buffer and the bytes path (`writeJson()` into the buffer,
 * as the server writes it; `jsonBytes()` in builds before it). Prints each side's median µs per address and
 * the ratio of times (new/old: below 1 is faster).
 *
 *     npm run build && node --import tsx bench/ab.ts <other checkout>
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distinctAddresses, logMix } from './mix.js';

const other = process.argv[2];
if (other === undefined) throw new Error('usage: node --import tsx bench/ab.ts <other checkout with dist/ built>');
const load = async (dir: string) =>
  (await import(pathToFileURL(resolve(dir, 'dist', 'index.js')).href)) as typeof import('../src/index.js');
const builds = { old: await (await load(other)).open({ memory: 'read' }), new: await (await load('.')).open({ memory: 'read' }) };
const distinct = distinctAddresses(1_200_000);
// IPv6 on its own (its parse, search and text): the distinct list's (about 180 000, each looked up about three times a side).
const mixes = {
  distinct,
  'distinct IPv6': distinct.filter((ip) => ip.includes(':') && !ip.startsWith('::ffff:')),
  'log-like': logMix(600_000),
};
const out = Buffer.alloc(1 << 16);
const SLICE = 40_000;
type Build = (typeof builds)['new'] & { jsonBytes?(ip: string): string };
/** The record's bytes in `out`: writeJson() where the build has it public, else its byte text written. */
const bytesInto = (e: Build, ip: string, target: Buffer): number =>
  e.jsonBytes !== undefined ? target.write(e.jsonBytes(ip), 0, 'latin1') : e.writeJson(ip, target, 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let sink = 0;
for (const [mix, ips] of Object.entries(mixes)) {
  for (const task of ['lookup()', 'lookupJson() written', 'bytes written'] as const) {
    const times: Record<'old' | 'new', number[]> = { old: [], new: [] };
    for (let round = 0, at = 0; round < 14; round++, at += SLICE) {
      for (const side of round % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
        const e = builds[side];
        const t = performance.now();
        for (let k = 0; k < SLICE; k++) {
          const ip = ips[(at + k) % ips.length];
          try {
            if (task === 'lookup()') sink += e.lookup(ip).ip.length;
            else if (task === 'lookupJson() written') sink += out.write(e.lookupJson(ip), 0);
            else sink += bytesInto(e, ip, out);
          } catch {
            sink++;
          }
        }
        times[side].push(((performance.now() - t) * 1000) / SLICE);
      }
    }
    const [o, n] = [median(times.old), median(times.new)];
    console.log(`${mix}, ${task}: other ${o.toFixed(3)} µs, this ${n.toFixed(3)} µs, this/other time ${(n / o).toFixed(3)}`);
  }
}
if (sink < 0) console.log(sink);
