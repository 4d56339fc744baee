/**
 * Worker threads: a worker takes tasks in order and answers them in
 * order. The feed builder (`worker.ts`) and `iprecord enrich`
 * (`cli/enrich-worker.ts`) use them. A worker that cannot start or dies
 * fails its tasks, and the caller does them on its own thread.
 */

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** One worker; tasks sent to it are answered in the order sent. */
export class PoolWorker {
  private readonly pending: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  private dead = false;

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: { result: unknown }) => this.pending.shift()?.resolve(m.result));
    worker.on('error', (e: Error) => this.fail(e));
    worker.on('exit', () => this.fail(new Error('the worker thread exited')));
  }

  /** Sends a task; its answer, or a rejection when the worker fails. */
  run<T>(message: unknown, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.dead) return Promise.reject(new Error('the worker thread is not running'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage(message, transfer as ArrayBuffer[]);
    });
  }

  close(): void {
    this.dead = true;
    void this.worker.terminate();
  }

  private fail(e: Error): void {
    this.dead = true;
    for (const p of this.pending.splice(0)) p.reject(e);
  }
}

/**
 * A worker thread running `module`. A TypeScript module (when running from
 * the sources, in tests) runs through tsx, whose loader a worker thread
 * does not inherit on Node 20: a small script registers it, then imports
 * the module.
 */
export function startWorker(module: URL, options: WorkerOptions = {}): Worker {
  if (!module.pathname.endsWith('.ts')) {
    const argv = withoutLoaders(process.execArgv);
    // Unchanged, the options are inherited as they are (Node checks only a list it is given).
    if (argv.length === process.execArgv.length) return new Worker(module, options);
    try {
      return new Worker(module, { execArgv: argv, ...options });
    } catch (e) {
      if ((e as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw e;
      return new Worker(module, { execArgv: threadOptions(argv, (e as Error).message), ...options });
    }
  }
  // tsx's ESM entry beside the CommonJS one that require() finds.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(boot, { ...options, eval: true });
}

/** Options that load modules into every thread (`--import`, `--require`, `--loader`), each with its value. */
const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

/**
 * Node's options for a worker running a built module: the process's own,
 * less those that load modules. A worker inherits them, and a TypeScript
 * loader (`node --import tsx app.ts`) has every module the worker imports
 * pass through its hooks: that took a worker 100 ms to answer its first
 * task instead of 37 ms. A built module needs none of them.
 */
export function withoutLoaders(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const eq = flag.indexOf('=');
    if (LOADER_FLAGS.has(eq < 0 ? flag : flag.slice(0, eq))) {
      // The value is the next argument unless given with `=`.
      if (eq < 0) i++;
      continue;
    }
    out.push(flag);
  }
  return out;
}

/**
 * `argv` less the options Node refused for a thread (its message names
 * them): V8's (`--max-old-space-size`) and the process's (`--title`), which
 * hold for all its threads already. None when the message names none.
 */
export function threadOptions(argv: readonly string[], message: string): string[] {
  const colon = message.lastIndexOf(': ');
  if (colon < 0) return [];
  const refused = new Set(
    message
      .slice(colon + 2)
      .split(', ')
      .map((f) => f.trim()),
  );
  const kept = argv.filter((f) => !refused.has(f));
  return kept.length === argv.length ? [] : kept;
}

/** The variable naming a folder of the package's entries built from the sources it runs from (`ownEntry`). */
export const BUILT_ENTRIES = 'IPRECORD_BUILT_ENTRIES';

/**
 * One of the package's entry modules (a worker thread's, the compiler
 * process's), for the module `from` (its `import.meta.url`) that starts
 * it: built, `<name>.js` beside it in `dist/`; running from the sources,
 * `source` (TypeScript, relative to `from`), or `<name>.js` in the folder
 * $IPRECORD_BUILT_ENTRIES names when set: the test set-up builds the
 * entries from the sources there once a run, as `dist/` holds them, since
 * a process started under tsx takes about a third of a second longer to
 * start (0.55-0.59 s against 0.25 s for the compiler's).
 */
export function ownEntry(from: string, source: string, name: string): URL {
  if (!from.endsWith('.ts')) return new URL(`./${name}.js`, from);
  const built = process.env[BUILT_ENTRIES];
  return built ? pathToFileURL(join(built, `${name}.js`)) : new URL(source, from);
}

/** Starts up to `n` workers running `module` (`ownEntry`). */
export function startPool(n: number, module: URL, workerData?: unknown): PoolWorker[] {
  const out: PoolWorker[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push(new PoolWorker(startWorker(module, { workerData })));
    } catch {
      break;
    }
  }
  return out;
}

/** A turn of the event loop: signals, timers and other threads' answers are heard. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * For a long loop on the main thread: `due()` is true once every `ms`, when
 * the loop should `await nextTurn()` (a signal is then acted on within that
 * time; a server in the same process keeps answering).
 */
export class Pacer {
  private last = performance.now();
  private calls = 0;

  constructor(private readonly ms = 50) {}

  due(): boolean {
    // The clock read one call in 256.
    if ((++this.calls & 255) !== 0) return false;
    const now = performance.now();
    if (now - this.last < this.ms) return false;
    this.last = now;
    return true;
  }
}
