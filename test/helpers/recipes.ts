/**
 * The recipes of docs/exports.md, as written there: a fenced block whose first line
 * is `-- recipe: <name>` (or `# recipe: <name>`), so that a test runs what
 * a user copies.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'exports.md');

/** The block of a doc (docs/<file>) whose first line is `<comment> <marker>`, that line left out. */
export function docBlock(file: string, marker: string): string {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', file), 'utf8');
  const m = new RegExp('```\\w*\\n(?://|#|--|<!--) ' + marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '(?: -->)?\\n([\\s\\S]*?)```').exec(
    text,
  );
  if (m === null) throw new Error(`docs/${file} has no block ${marker}`);
  return m[1];
}

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

/**
 * What the runtimes' tests look up: 8.8.8.8, private addresses, the address
 * forms, 2 000 random IPv4 and 1 000 random IPv6 addresses (the routed
 * 2000::/3 mostly), drawn by `next`.
 */
export function runtimeAddresses(next: () => number): string[] {
  const ips: string[] = ['8.8.8.8', '10.0.0.1', '192.168.1.1', '::1', 'fe80::1', ...ADDRESS_FORMS];
  for (let i = 0; i < 2_000; i++) {
    const a = next();
    ips.push(`${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`);
  }
  for (let i = 0; i < 1_000; i++) {
    const g = Array.from({ length: 8 }, (_, j) => ((j === 0 ? 0x2000 | (next() & 0x1fff) : next()) & 0xffff).toString(16));
    ips.push(g.join(':'));
  }
  return ips;
}
