/**
 * The recipes of docs/exports.md, as written there: a fenced block whose first line
 * is `-- recipe: <name>` (or `# recipe: <name>`), so that a test runs what
 * a user copies.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'exports.md');

/** The text of the recipe `name`, its marker line left out. */
export function docRecipe(name: string): string {
  const text = readFileSync(DOC, 'utf8');
  const m = new RegExp('```\\w*\\n(?:--|#) recipe: ' + name + '\\n([\\s\\S]*?)```').exec(text);
  if (m === null) throw new Error(`docs/exports.md has no recipe ${name}`);
  return m[1];
}

/** A SQL recipe's statements; a line of the DuckDB CLI's own (`.read file`) is one on its own. */
export const statements = (sql: string): string[] =>
  sql
    .split(/;\s*\n|(?<=^\.[^\n]*)\n/m)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/**
 * Runs a DuckDB recipe as the DuckDB CLI does: `.read <file>` runs that
 * file's text (its name resolved in `dir`), every other statement is given
 * to `run` as `edit` turns it.
 */
export async function runDuckdbRecipe(
  recipe: string,
  dir: string,
  run: (sql: string) => Promise<unknown>,
  edit: (sql: string) => string = (sql) => sql,
): Promise<void> {
  for (const sql of statements(recipe)) {
    const read = /^\.read (\S+)$/.exec(sql);
    if (read !== null) await run(readFileSync(join(dir, read[1]), 'utf8'));
    else if (sql.startsWith('.')) throw new Error(`the recipe runs ${sql}, which is no statement of DuckDB's`);
    else await run(edit(sql));
  }
}

/** `fixtures/logs/address-forms.txt`: address text as logs hold it, as written (surrounding spaces kept), comments and blank lines left out. */
export const ADDRESS_FORMS: readonly string[] = readFileSync(
  join(import.meta.dirname, '..', '..', 'fixtures', 'logs', 'address-forms.txt'),
  'utf8',
)
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'));
