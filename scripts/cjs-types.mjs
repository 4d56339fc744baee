// After tsup (`npm run build`): the CommonJS entries' types, dist/*.d.cts,
// from the ES module declarations tsup wrote. require() loads the ESM build
// itself (tsup.config.ts), so the types are the same; a .d.cts names its
// relative imports `.cjs`, so that TypeScript reads them as CommonJS
// declarations too. tsup's own CommonJS declaration build gave these same
// texts (but for its chunks' hashed names), as a third TypeScript program
// of the build: 12 s of the build's 29 s of processor time.
// test/package/package.test.ts type-checks a project of each kind against them.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
// iprecord/bytes is an ES module only (package.json's exports).
for (const file of readdirSync(dist).filter((f) => f.endsWith('.d.ts') && f !== 'bytes.d.ts')) {
  const text = readFileSync(new URL(file, dist), 'utf8').replace(/((?:from|import) '\.\/[\w.-]+)\.js'/g, "$1.cjs'");
  writeFileSync(new URL(file.replace(/\.d\.ts$/, '.d.cts'), dist), text);
}
