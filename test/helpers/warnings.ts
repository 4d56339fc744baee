/**
 * Each test process: the library's warning that threat categories have no
 * source (IPRECORD_MISSING_LISTS) is not printed, since most engines of the
 * tests load no threat feeds; every other warning is, as Node prints it.
 * Tests that check the warning listen for it themselves.
 */

process.removeAllListeners('warning');
process.on('warning', (w: Error & { code?: string }) => {
  if (w.code !== 'IPRECORD_MISSING_LISTS')
    process.stderr.write(`(node:${process.pid}) ${w.code === undefined ? '' : `[${w.code}] `}${w.name}: ${w.message}\n`);
});
