// Preloaded (NODE_OPTIONS=--expose-gc --require) into a server a test measures the resident size of: a full collection
// every quarter second, so that what the size counts is what the process holds, not garbage a busy machine has not
// collected yet.
setInterval(() => globalThis.gc(), 250).unref();
