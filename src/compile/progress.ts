/**
 * A progress line on standard error when it is a terminal, rewritten in
 * place: `iprecord: <step> (<share> %, <elapsed> s, about <left> s left)`;
 * `say` prints a line above it. Off a terminal only `say` writes.
 */
export function terminalProgress(started = Date.now()): {
  progress: (step: string, done: number) => void;
  say: (line: string) => void;
  clear: () => void;
} {
  const tty = process.stderr.isTTY === true;
  const clear = () => {
    if (tty) process.stderr.write('\r\x1b[K');
  };
  const progress = (step: string, done: number) => {
    if (!tty) return;
    const elapsed = (Date.now() - started) / 1000;
    const left = done > 0.04 && done < 1 ? `, about ${Math.max(1, Math.round((elapsed * (1 - done)) / done))} s left` : '';
    process.stderr.write(`\r\x1b[Kiprecord: ${step} (${Math.round(done * 100)} %, ${Math.round(elapsed)} s${left})`);
  };
  const say = (line: string) => {
    clear();
    process.stderr.write(`iprecord: ${line}\n`);
  };
  return { progress, say, clear };
}
