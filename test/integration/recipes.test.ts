/**
 * The Spark UDF of docs/exports.md (`# recipe: spark-udf`) as written, run under
 * pandas with Debian's Python `maxminddb` on an MMDB export of the test
 * fixtures, over address text as logs hold it
 * (`fixtures/logs/address-forms.txt`, plus an empty cell and a missing one):
 * the record where `lookup()` answers one, NULL where it answers an
 * error, and never an exception that would fail the batch. Spark itself
 * cannot run offline: a stand-in `pandas_udf` applies the function to a
 * Series.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportDataset } from '../../src/export/index.js';
import { staticRecord, withoutNulls } from '../../src/export/record.js';
import { openSync } from '../../src/index.js';
import { SMALL } from '../helpers/maxmind.js';
import { ADDRESS_FORMS, docRecipe } from '../helpers/recipes.js';

const PYTHON = '/usr/bin/python3';
const has = (module: string) =>
  existsSync(PYTHON) &&
  execFileSync(PYTHON, ['-c', `import importlib.util; print(importlib.util.find_spec("${module}") is not None)`])
    .toString()
    .trim() === 'True';
const ready = has('maxminddb') && has('pandas');
if (!ready) console.log('recipes: the Spark UDF check skipped (apt install python3-maxminddb python3-pandas)');

const dir = mkdtempSync(join(tmpdir(), 'iprecord-recipes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!ready)('the Spark UDF recipe', () => {
  it('answers each log form as lookup() does, NULL where it answers an error, and never raises', async () => {
    const engine = openSync({ geo: [...SMALL.geo], asn: [...SMALL.asn] });
    const mmdb = join(dir, 'records.mmdb');
    await exportDataset(engine, { format: 'mmdb', out: mmdb });
    const cells: (string | null)[] = [...ADDRESS_FORMS, '', null];
    const script = `
import json, sys, types
import pandas
# A stand-in for pyspark: a pandas_udf called on a column name is a column (the name); on a Series, the function.
functions = types.ModuleType('pyspark.sql.functions')
functions.pandas_udf = lambda kind: (lambda f: (lambda x: x if isinstance(x, str) else f(x)))
sys.modules.update({'pyspark': types.ModuleType('pyspark'), 'pyspark.sql': types.ModuleType('pyspark.sql'), 'pyspark.sql.functions': functions})
class Logs:
    def withColumn(self, name, column):
        return self
logs = Logs()
recipe = sys.stdin.read()
cells = json.loads(sys.argv[1])
exec(recipe.replace('/data/records.mmdb', sys.argv[2]))
out = iprecord(pandas.Series(cells, dtype=object))
print(json.dumps([None if v is None else json.loads(v) for v in out]))
`;
    const got = JSON.parse(
      execFileSync(PYTHON, ['-c', script, JSON.stringify(cells), mmdb], { input: docRecipe('spark-udf') }).toString(),
    ) as unknown[];
    const wrong: string[] = [];
    let records = 0;
    cells.forEach((ip, i) => {
      let want: unknown = null;
      try {
        if (ip !== null) {
          want = withoutNulls(staticRecord(engine.lookup(ip)));
          records++;
        }
      } catch {
        // an error: NULL
      }
      if (JSON.stringify(got[i]) !== JSON.stringify(want))
        wrong.push(`${JSON.stringify(ip)}: UDF ${JSON.stringify(got[i])?.slice(0, 60)}, lookup() ${JSON.stringify(want)?.slice(0, 60)}`);
    });
    engine.close();
    console.log(`recipes: the Spark UDF on ${cells.length} log forms: ${records} records, ${wrong.length} different`);
    expect(wrong).toEqual([]);
    expect(records).toBeGreaterThan(5);
  });
});
