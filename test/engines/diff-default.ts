/**
 * `iprecord diff` where users run it: the default data against itself with
 * the 70 shared feeds compiled in (as `iprecord build` compiles them),
 * against a brute-force comparison of the two over a random sample of the
 * IPv4 space (FC_SEED, printed; a new one each run): each address looked
 * up on both sides, each member compared. A member diff counts no change
 * in must change in no sampled address; every other's share of changed
 * addresses among those answered on both sides must lie within five
 * standard deviations of the share diff counts. The whole fixture builds
 * are compared exactly by test/integration/diff.test.ts; the default data
 * takes a walk of about 20 s, outside `npm test`: CI runs this (about 45 s).
 *
 * Prints what it checked; exits 1 on a difference.
 */
import { diffSide } from '../../src/engine/inside.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDataset } from '../../src/compile/feeds/build.js';
import { DIFF_MEMBERS, diffEngines } from '../../src/evidence/diff.js';
import { open } from '../../src/index.js';
import { hasSharedData, prng, seed } from '../helpers/env.js';
import { sharedFeedConfig } from '../helpers/feeds.js';

const SAMPLE = 400_000;

if (!hasSharedData()) {
  console.log('diff of the default data: skipped, ../shared/data is not there');
  process.exit(process.env.CI === 'true' ? 1 : 0);
}
const dir = mkdtempSync(join(tmpdir(), 'iprecord-diff-default-'));
const failures: string[] = [];
try {
  await buildDataset(sharedFeedConfig(), dir, dir);
  const before = await open();
  const after = await open({ data: dir });
  const started = performance.now();
  const r = diffEngines(diffSide(before), diffSide(after), { before: 'default', after: dir });
  const walk = (performance.now() - started) / 1000;
  const s = seed();
  const next = prng(s);
  const a = before.select(DIFF_MEMBERS);
  const b = after.select(DIFF_MEMBERS);
  let answered = 0;
  const changed = Object.fromEntries(DIFF_MEMBERS.map((m) => [m, 0]));
  for (let i = 0; i < SAMPLE; i++) {
    const x = Math.floor(next() * 2 ** 32);
    const ip = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
    const p = a.try(ip) as Record<string, unknown>;
    const q = b.try(ip) as Record<string, unknown>;
    if ('status' in p || 'status' in q) continue;
    answered++;
    for (const m of DIFF_MEMBERS) if (p[m] !== q[m]) changed[m]++;
  }
  const within = (got: number, of: number, share: number, what: string) => {
    const sd = Math.sqrt((share * (1 - share)) / of);
    const ok = share === 0 ? got === 0 : Math.abs(got / of - share) <= 5 * sd + 1 / of;
    if (!ok) failures.push(`${what}: ${got} of ${of} sampled (${((100 * got) / of).toFixed(3)} %), diff ${(100 * share).toFixed(3)} %`);
    return `${what} ${((100 * got) / of).toFixed(3)} % / ${(100 * share).toFixed(3)} %`;
  };
  const lines = [within(answered, SAMPLE, r.answered.ipv4 / 2 ** 32, 'answered on both sides')];
  for (const m of DIFF_MEMBERS) lines.push(within(changed[m], answered, r.members[m].ipv4 / r.answered.ipv4, m));
  console.log(
    `diff of the default data and the default data with the shared feeds (walk ${walk.toFixed(1)} s), against ${SAMPLE} random IPv4 addresses (FC_SEED=${s}), sampled / diff:\n  ${lines.join('\n  ')}`,
  );
  before.close();
  after.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`diff of the default data: ${failures.length} members off:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
