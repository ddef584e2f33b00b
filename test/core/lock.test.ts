/**
 * The lock files of store/lock.ts: both ways of taking one (at once, waiting) over one file
 * format, one liveness check and one stale take-over.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VltError } from '../../src/core/errors';
import { describeStaleLock, tryLock, waitForLock, type LockBusy, type StaleLock } from '../../src/core/store/lock';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function lockPath(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-lock-'));
  dirs.push(d);
  return path.join(d, 'x.lock');
}

function busy(seen: LockBusy[]): (holder: unknown, why: LockBusy) => VltError {
  return (_holder, why) => {
    seen.push(why);
    return new VltError('INDEX_LOCKED', why);
  };
}

describe('lock files', () => {
  it('a waiting taker waits for a lock taken at once, and a taker at once fails while a waiting one holds it', async () => {
    const file = lockPath();
    const seen: LockBusy[] = [];
    const first = await tryLock(file, { busyError: busy(seen) });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, hostname: os.hostname() });
    let got = false;
    const waiting = waitForLock(file, { timeoutMs: 2000, busyError: busy(seen) }).then((l) => ((got = true), l));
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toBe(false);
    first.release();
    const second = await waiting;
    await expect(tryLock(file, { busyError: busy(seen) })).rejects.toMatchObject({ code: 'INDEX_LOCKED' });
    expect(seen).toEqual(['held']);
    second.release();
    second.release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('creates a lock whole: with its owner from the first moment, leaving no temporary file', async () => {
    const file = lockPath();
    // Many takers at once: each reads either no lock or a whole one, never an empty file.
    const seen: LockBusy[] = [];
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => tryLock(file, { busyError: busy(seen) })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(seen.every((why) => why === 'held')).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid });
    expect(fs.readdirSync(path.dirname(file))).toEqual(['x.lock']);
    for (const r of results) if (r.status === 'fulfilled') r.value.release();
  });

  it('takes over the lock of a dead pid and of an earlier process with our pid, either way', async () => {
    const file = lockPath();
    const taken: StaleLock[] = [];
    fs.writeFileSync(file, JSON.stringify({ pid: 2 ** 22 + 12345, hostname: os.hostname(), startedAt: '' }));
    (await tryLock(file, { busyError: busy([]), onTakeOver: (s) => taken.push(s) })).release();
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: '' }));
    (await waitForLock(file, { timeoutMs: 500, busyError: busy([]), onTakeOver: (s) => taken.push(s) })).release();
    expect(taken.map(describeStaleLock)).toEqual([`a lock of pid ${2 ** 22 + 12345} (no such process)`, `a lock left by an earlier process with our pid ${process.pid}`]);
  });

  it('respects a lock from another host and a fresh unreadable one, and says why', async () => {
    const file = lockPath();
    const seen: LockBusy[] = [];
    fs.writeFileSync(file, JSON.stringify({ pid: 1, hostname: 'some-other-host', startedAt: '' }));
    await expect(tryLock(file, { busyError: busy(seen) })).rejects.toBeInstanceOf(VltError);
    await expect(waitForLock(file, { timeoutMs: 100, busyError: busy(seen) })).rejects.toBeInstanceOf(VltError);
    fs.writeFileSync(file, '{"pid": 1');
    await expect(tryLock(file, { busyError: busy(seen) })).rejects.toBeInstanceOf(VltError);
    expect(seen).toEqual(['other-host', 'timeout', 'unreadable']);
    // With no grace, the unreadable lock is stale at once.
    const taken: StaleLock[] = [];
    (await tryLock(file, { busyError: busy(seen), unreadableGraceMs: 0, onTakeOver: (s) => taken.push(s) })).release();
    expect(taken).toEqual([{ kind: 'unreadable' }]);
  });
});
