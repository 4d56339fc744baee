/**
 * Watching a dataset directory for a new build: `changed` runs once the
 * directory has been quiet for a moment after `current` was swapped (an
 * update writing its downloads and builds does not call it).
 */

import { watch } from 'node:fs';
import { changesAnswers } from './store.js';

/** How long the directory must stay quiet before `changed` runs. */
const QUIET_MS = 150;

/** Watches `dir`; neither the watch nor its timer keeps the process alive. */
export function watchDataset(dir: string, changed: () => void): { close(): void } {
  let debounce: NodeJS.Timeout | null = null;
  const watcher = watch(dir, (_event, entry) => {
    if (!changesAnswers(entry)) return;
    if (debounce !== null) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = null;
      changed();
    }, QUIET_MS);
    debounce.unref();
  });
  watcher.unref();
  return {
    close() {
      watcher.close();
      if (debounce !== null) clearTimeout(debounce);
      debounce = null;
    },
  };
}
