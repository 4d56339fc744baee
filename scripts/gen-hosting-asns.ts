/**
 * Generates src/compile/asn/hosting-asns.json from a checkout of
 * X4BNet's lists_vpn (MIT): the AS numbers of its datacenter list
 * (`input/datacenter/ASN.txt`, lines `AS<n> # name`), sorted, with the
 * commit they were read at and the licence the list is given under.
 * Run: npx tsx scripts/gen-hosting-asns.ts <lists_vpn checkout> <commit>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, commit] = process.argv.slice(2);
if (dir === undefined || !/^[0-9a-f]{40}$/.test(commit ?? ''))
  throw new Error('usage: gen-hosting-asns.ts <lists_vpn checkout> <40-hex commit>');
const asns = [
  ...new Set(
    readFileSync(join(dir, 'input/datacenter/ASN.txt'), 'utf8')
      .split('\n')
      .map((l) => /^\s*AS(\d+)\b/i.exec(l)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number),
  ),
].sort((a, b) => a - b);
const readme = readFileSync(join(dir, 'README.md'), 'utf8');
const license = /```\s*\n(MIT License[\s\S]*?)```/.exec(readme)?.[1].trim();
if (license === undefined) throw new Error("the README's licence block was not found");
const out = {
  source: 'https://github.com/X4BNet/lists_vpn/blob/main/input/datacenter/ASN.txt',
  commit,
  license,
  asns,
};
writeFileSync(new URL('../src/compile/asn/hosting-asns.json', import.meta.url), JSON.stringify(out, null, 0) + '\n');
console.log(`wrote ${asns.length} AS numbers of lists_vpn ${commit.slice(0, 12)}`);
