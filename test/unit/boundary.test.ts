/**
 * Build code stays out of the process that looks addresses up: no module
 * the runtime loads (the engine, the default engine, the server, exports
 * and their worker threads) reaches `src/compile/` through its imports,
 * static, dynamic or type-only, and in the published `dist/` the chunks that the one
 * defining `openSync` loads hold none of the compiler's functions. The
 * compiler runs in its own process (`dataset/locate.ts` starts it by path).
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const BUILD = join(SRC, 'compile') + '/';

/** The runtime's entry modules: the package's front door (`iprecord`), its exports and server, and their worker threads. */
const RUNTIME = [
  'index.ts',
  'export.ts',
  'engine/engine.ts',
  'engine/default.ts',
  'server/index.ts',
  'export/index.ts',
  'dataset/verify-worker.ts',
  'cli/enrich-worker.ts',
  'export/parquet-worker.ts',
];

/** The modules a module names: its imports, static, dynamic and type-only (a type of the compiler's is build code too), as source paths. */
function loads(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+[^;]*?\bfrom\s+['"](\.[^'"]+)['"]/gms)) out.push(m[2]);
  for (const m of text.matchAll(/^\s*import\s+['"](\.[^'"]+)['"]/gm)) out.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(m[1]);
  return out.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

describe('the runtime and the compiler', () => {
  it('no runtime module reaches build code (src/compile/) through its imports, types included', () => {
    const path = new Map<string, string | null>(RUNTIME.map((f) => [join(SRC, f), null]));
    const queue = [...path.keys()];
    const reached: string[] = [];
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (file.startsWith(BUILD)) {
        // How it is reached, for the message.
        const chain = [file];
        for (let f = path.get(file); f != null; f = path.get(f)) chain.unshift(f);
        reached.push(chain.map((f) => relative(SRC, f)).join(' -> '));
        continue;
      }
      if (!file.endsWith('.ts') || !existsSync(file)) continue;
      for (const next of loads(file)) {
        if (path.has(next)) continue;
        path.set(next, file);
        queue.push(next);
      }
    }
    expect(reached).toEqual([]);
    // The walk saw the runtime (a broken pattern would see nothing and pass).
    expect(path.size).toBeGreaterThan(30);
  });

  const DIST = join(ROOT, 'dist');
  it.skipIf(!existsSync(join(DIST, 'index.js')))(
    'the published front door (dist/index.js), the chunk that defines openSync, and every chunk they load, hold none of the compiler',
    () => {
      const chunks = readdirSync(DIST).filter((f) => f.endsWith('.js'));
      const text = (f: string) => readFileSync(join(DIST, f), 'utf8');
      const home = chunks.filter((f) => /\bfunction openSync\(/.test(text(f)));
      expect(home).toHaveLength(1);
      const seen = new Set([...home, 'index.js', 'export.js']);
      const queue = [...seen];
      while (queue.length > 0) {
        const f = queue.shift()!;
        for (const m of text(f).matchAll(/^import\s[^;]*?['"]\.\/([\w.-]+\.js)['"]/gm)) {
          if (!seen.has(m[1])) {
            seen.add(m[1]);
            queue.push(m[1]);
          }
        }
      }
      // Functions only the compiler defines: the dataset compiler, the merge, the feed parser and builder, the source readers.
      const compiler = /\bfunction (compileDataset|mergeThreat|parseFeed|buildDataset|openSources)\(/;
      expect([...seen].filter((f) => compiler.test(text(f)))).toEqual([]);
      expect(chunks.some((f) => compiler.test(text(f)))).toBe(true);
      // What the front door loads, in chunks and bytes (the closing note of the record compiled counts them).
      const index = new Set(['index.js']);
      for (const q = ['index.js']; q.length > 0;) {
        for (const m of text(q.shift()!).matchAll(/^import\s[^;]*?['"]\.\/([\w.-]+\.js)['"]/gm)) {
          if (!index.has(m[1])) {
            index.add(m[1]);
            q.push(m[1]);
          }
        }
      }
      console.log(`import 'iprecord' loads ${index.size} files of dist/, ${[...index].reduce((n, f) => n + text(f).length, 0)} bytes`);
    },
  );
});

/**
 * `iprecord/bytes` runs where there is no Node: its import closure names no
 * module but its own (no package: the zone at coordinates, 74 kB, and the
 * package's zone table, 47 kB, are the compiler's), and reaches Node's
 * built-ins only through `platform/bytes.ts`, which its
 * build replaces by `platform/bytes-web.ts` (tsup.config.ts; the built file
 * is checked in test/integration/bytes-entry.test.ts). `Buffer`, a global,
 * is named nowhere in it but there.
 */
describe('the bytes entry', () => {
  const NODE_BYTES = join(SRC, 'platform/bytes.ts');
  const WEB_BYTES = join(SRC, 'platform/bytes-web.ts');

  it('imports no Node module and names no Buffer, but through the platform module its build replaces', () => {
    const seen = new Set<string>([join(SRC, 'bytes.ts')]);
    const bare = new Set<string>();
    const buffers: string[] = [];
    for (const queue = [...seen]; queue.length > 0;) {
      let file = queue.shift()!;
      if (file === NODE_BYTES) file = WEB_BYTES;
      const text = readFileSync(file, 'utf8');
      const code = text
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '')
        .replace(/'[^'\n]*'/g, "''");
      if (/\bBuffer\b/.test(code)) buffers.push(relative(SRC, file));
      for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?\bfrom\s+['"]([^'"]+)['"]/gms)) {
        if (!m[1].startsWith('.')) {
          bare.add(m[1]);
          continue;
        }
        const next = resolve(dirname(file), m[1].replace(/\.js$/, '.ts'));
        if (!seen.has(next) && existsSync(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    expect([...bare]).toEqual([]);
    expect(buffers).toEqual([]);
    expect(seen.has(NODE_BYTES)).toBe(true);
    expect(seen.size).toBeGreaterThan(30);
  });
});

/**
 * The rooms of src/, top to bottom (docs/development.md has the map): a
 * module imports only modules of its own room or of a room below it, so
 * no import runs back up a layer and no two rooms import each other. The
 * root holds only the package's entry points.
 */
const ROOMS = [
  ['.', 'entry points'],
  ['cli', 'shells'],
  ['server', 'shells'],
  ['export', 'exports of a compiled dataset'],
  ['engine', 'the engine'],
  ['compile', 'build time'],
  ['evidence', 'explain, seen, diff, compare'],
  ['record', 'records assembled from the dataset'],
  ['dataset', 'the file format and its readers'],
  ['time', 'leaves'],
  ['mmdb', 'leaves'],
  ['country', 'leaves'],
  ['text', 'leaves'],
  ['ip', 'leaves'],
  ['files', 'leaves'],
  ['platform', 'leaves'],
  ['contract', 'the record stated: template, types, errors'],
] as const;

/** Every .ts file under a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The room of a source file: its first folder under src/, or `.` for the root. */
const roomOf = (file: string): string => {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? '.' : parts[0];
};

describe('the rooms of src/', () => {
  const rank = new Map<string, number>(ROOMS.map(([room], i) => [room, i]));
  const files = sources(SRC);

  it('every room is in the map, and the root holds only entry points', () => {
    expect([...new Set(files.map(roomOf))].filter((r) => !rank.has(r))).toEqual([]);
    expect(
      files
        .filter((f) => roomOf(f) === '.')
        .map((f) => relative(SRC, f))
        .sort(),
    ).toEqual(['build.ts', 'bytes.ts', 'export.ts', 'index.ts']);
  });

  it('no import runs back up a layer (static, dynamic or type-only)', () => {
    const up: string[] = [];
    let seen = 0;
    for (const file of files) {
      for (const target of loads(file)) {
        if (!target.startsWith(SRC + '/') || !existsSync(target)) continue;
        seen++;
        const [from, to] = [roomOf(file), roomOf(target)];
        if (from !== to && rank.get(to)! <= rank.get(from)!)
          up.push(`${relative(SRC, file)} (${from}) -> ${relative(SRC, target)} (${to})`);
      }
    }
    expect(up).toEqual([]);
    // The walk read the imports (a broken pattern would see none and pass).
    expect(seen).toBeGreaterThan(500);
  });
});
