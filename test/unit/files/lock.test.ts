/**
 * The dataset directory's lock: stale locks (a dead process, a reused
 * process id, this process's own id from a restarted container) are taken
 * over at once; a live one is waited for; after a crash, eight processes
 * racing for the lock hold it one at a time.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { withDirectoryLock } from '../../../src/files/lock.js';
import { bundled } from '../../helpers/bundle.js';
import { ROOT } from '../../helpers/env.js';

const root = mkdtempSync(join(tmpdir(), 'iprecord-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (lock?: string) => {
  const dir = join(root, String(n++));
  spawnSync('mkdir', ['-p', dir]);
  if (lock !== undefined) writeFileSync(join(dir, '.lock'), lock);
  return dir;
};
const bootId = () => (existsSync('/proc/sys/kernel/random/boot_id') ? readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() : '');
const take = (dir: string, waitMs = 300) => withDirectoryLock(dir, async () => 'held', waitMs);

describe('directory lock', () => {
  it('takes over at once a lock naming this process by its id alone, or with a token it did not make (a restarted container)', async () => {
    await expect(take(fresh(String(process.pid)))).resolves.toBe('held');
    await expect(take(fresh(JSON.stringify({ token: 'other', pid: process.pid, boot: bootId(), start: '' })))).resolves.toBe('held');
  });

  it.skipIf(process.platform !== 'linux')(
    'takes over a lock of a live process id that started at another time (the id reused), or from another boot',
    async () => {
      const child = spawn('sleep', ['30']);
      try {
        await expect(take(fresh(JSON.stringify({ token: 'a', pid: child.pid, boot: bootId(), start: '1' })))).resolves.toBe('held');
        await expect(take(fresh(JSON.stringify({ token: 'b', pid: child.pid, boot: 'another-boot', start: '' })))).resolves.toBe('held');
        // The same process as it is: waited for, then refused naming it.
        const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
        await expect(take(fresh(JSON.stringify({ token: 'c', pid: child.pid, boot: bootId(), start })))).rejects.toThrow(
          new RegExp(`process ${child.pid}`),
        );
      } finally {
        child.kill();
      }
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'a lock of the format before tokens (a bare id) is waited for while its Node process runs, taken over when the id names another process',
    async () => {
      // Another program under the id: not the lock's maker.
      const sleeper = spawn('sleep', ['30']);
      // A Node process that started before the lock was written: its maker, as far as the lock can say.
      const node = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
      try {
        await new Promise((r) => setTimeout(r, 100));
        await expect(take(fresh(String(sleeper.pid)))).resolves.toBe('held');
        await expect(take(fresh(String(node.pid)))).rejects.toThrow(new RegExp(`process ${node.pid}`));
        // The same id on a lock written an hour before that process started: the id was reused. The time is the
        // kernel's (boot time and the process's start in /proc), not Date.now(), which a moved clock may fake.
        const old = fresh(String(node.pid));
        const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1]);
        const stat = readFileSync(`/proc/${node.pid}/stat`, 'utf8');
        const started = btime * 1000 + (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / 100) * 1000;
        const hourBefore = new Date(started - 3_600_000);
        utimesSync(join(old, '.lock'), hourBefore, hourBefore);
        await expect(take(old)).resolves.toBe('held');
      } finally {
        sleeper.kill();
        node.kill();
      }
    },
  );

  it("judges a takeover's age by the file system's clock: a live one is waited for with this process's clock years ahead, a dead one cleared", async () => {
    // A stale lock (its maker gone), and another process taking it over now: its takeover file just made.
    const gone = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => resolve(child.pid as number));
    });
    const stale = JSON.stringify({ token: 'crashed', pid: gone, boot: bootId(), start: '' });
    const live = fresh(stale);
    writeFileSync(join(live, '.lock.takeover-crashed'), '');
    // Left by a process that died taking over: ten minutes old on the file system's clock.
    const dead = fresh(stale);
    const marker = join(dead, '.lock.takeover-crashed');
    writeFileSync(marker, '');
    const tenMinutesBefore = new Date(statSync(marker).mtimeMs - 600_000);
    utimesSync(marker, tenMinutesBefore, tenMinutesBefore);
    // This process's clock seven years ahead (as libfaketime moves it, or a clock set wrong), advancing.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true, now: Date.parse('2033-08-15T03:30:00Z') });
    try {
      await expect(take(live)).rejects.toThrow(/Another build or update/);
      expect(readdirSync(live).sort()).toEqual(['.lock', '.lock.takeover-crashed']);
      await expect(take(dead, 30_000)).resolves.toBe('held');
      expect(readdirSync(dead)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('waits for a lock this process holds, and removes only its own', async () => {
    const dir = fresh();
    const order: string[] = [];
    await Promise.all([
      withDirectoryLock(dir, async () => {
        order.push('a in');
        await new Promise((r) => setTimeout(r, 150));
        order.push('a out');
      }),
      withDirectoryLock(dir, async () => {
        order.push('b in');
        order.push('b out');
      }),
    ]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('after a crash, eight processes racing for the stale lock hold it one at a time, and all get it', async () => {
    // A lock of a process that is gone.
    const gone = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => resolve(child.pid as number));
    });
    const dir = fresh(JSON.stringify({ token: 'crashed', pid: gone, boot: bootId(), start: '' }));
    const log = join(dir, 'log');
    const script = `
      import { appendFileSync } from 'node:fs';
      import { withDirectoryLock } from ${JSON.stringify(await bundled('src/files/lock.ts', join(root, 'bundle')))};
      await withDirectoryLock(${JSON.stringify(dir)}, async () => {
        appendFileSync(${JSON.stringify(log)}, 'in\\n');
        await new Promise((r) => setTimeout(r, 30));
        appendFileSync(${JSON.stringify(log)}, 'out\\n');
      }, 60000);`;
    const runs = Array.from(
      { length: 8 },
      () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
            cwd: ROOT,
            stdio: ['ignore', 'ignore', 'inherit'],
          });
          child.on('close', resolve);
        }),
    );
    expect(await Promise.all(runs)).toEqual(Array(8).fill(0));
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toEqual(Array(8).fill(['in', 'out']).flat());
    expect(readdirSync(dir).sort()).toEqual(['log']);
  });
});
