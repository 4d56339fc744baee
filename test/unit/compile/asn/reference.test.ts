/**
 * `asn.type` against a reference list of networks (fixtures/reference/networks.tsv:
 * the 200 largest by IPv4 space in the default ASN data, then clouds, hosting
 * providers, carriers, universities and research networks, each with the
 * public page that says what the organisation is), named as the default data
 * names them.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyAsn, classifyByWords } from '../../../../src/compile/asn/classify.js';
import { defaultAsnSources } from '../../../../src/dataset/defaults.js';
import { splitCsvLine } from '../../../../src/text/csv.js';
import { ROOT } from '../../../helpers/env.js';

const reference = readFileSync(`${ROOT}/fixtures/reference/networks.tsv`, 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('asn\t'))
  .map((l) => {
    const [asn, type, source] = l.split('\t');
    return { asn: Number(asn), type, source };
  });

/** Each ASN's organisation name in the default data (its first row's). */
function names(): Map<number, string> {
  const out = new Map<number, string>();
  for (const file of defaultAsnSources().files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line === '') continue;
      const [, , asn, name] = splitCsvLine(line) ?? [];
      const n = Number(asn);
      if (!out.has(n)) out.set(n, name);
    }
  }
  return out;
}

describe('asn.type against the reference list of networks', () => {
  it('is right for at least 95 % of them', () => {
    expect(reference.length).toBeGreaterThanOrEqual(200);
    expect(new Set(reference.map((r) => r.asn)).size).toBe(reference.length);
    const named = names();
    const wrong: string[] = [];
    let byWords = 0;
    for (const r of reference) {
      const name = named.get(r.asn);
      expect(name, `AS${r.asn} is in the default data`).toBeDefined();
      const type = classifyAsn(name!);
      if (type !== r.type) wrong.push(`AS${r.asn} "${name}": ${type}, reference ${r.type} (${r.source})`);
      if (classifyByWords(name!) === r.type) byWords++;
    }
    const right = reference.length - wrong.length;
    const pct = (n: number) => `${((100 * n) / reference.length).toFixed(1)} %`;
    // The brand list was written with this list in view: words alone tell how names outside it fare.
    console.log(
      `asn.type: ${right} of ${reference.length} reference networks right (${pct(right)}); by words alone, without the brand list, ${byWords} (${pct(byWords)})` +
        (wrong.length > 0 ? '\n' + wrong.join('\n') : ''),
    );
    expect(right / reference.length).toBeGreaterThanOrEqual(0.95);
  });
});
