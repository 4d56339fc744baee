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

/** A SQL recipe's statements. */
export const statements = (sql: string): string[] =>
  sql
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** `fixtures/logs/address-forms.txt`: address text as logs hold it, as written (surrounding spaces kept), comments and blank lines left out. */
export const ADDRESS_FORMS: readonly string[] = readFileSync(
  join(import.meta.dirname, '..', '..', 'fixtures', 'logs', 'address-forms.txt'),
  'utf8',
)
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'));
