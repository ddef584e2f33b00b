/**
 * Cross-process lock files under `.vlt/`: the index writer lock and the memory store's lock.
 *
 * A lock is an exclusive create of its file, which holds the owner (pid, host, start time).
 * An existing lock is respected while its process lives. A lock whose process is gone (a dead
 * pid on this host, or an earlier process that had our pid), or an unreadable one older than
 * a grace period, is stale and taken over. A lock from another host cannot be checked, so it
 * is respected. A normal exit releases every lock this process holds; a kill -9 cannot be
 * caught, and the next taker finds the dead pid.
 *
 * Two ways to take one, over the same file format, liveness check and take-over:
 *
 * - {@link tryLock} fails at once when a live process holds the lock. The index writer holds
 *   its lock for minutes, so a second writer is told so instead of waiting.
 * - {@link waitForLock} waits (a short, growing, jittered sleep) up to a deadline. A memory
 *   write holds its lock for milliseconds, so waiting is the right answer there. Callers in
 *   one process queue in memory first, so at most one of them competes for the file.
 *
 * Like atomic.ts, this module depends on nothing but Node built-ins and the error type.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { VltError, errorMessage } from '../errors';
import { isPidAlive, tempPathFor } from './atomic';

/** What a lock file holds: enough to tell a live holder from a dead one. */
export interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

/** Why a lock was judged stale and taken over. */
export type StaleLock =
  | { kind: 'unreadable' }
  /** The holder's pid runs no process on this host. */
  | { kind: 'dead'; holder: LockOwner }
  /** Our own pid, but not a lock this process took: an earlier process had the pid and died. */
  | { kind: 'pid-reused'; holder: LockOwner };

/**
 * Why a lock could not be had: a live holder on this host, a holder on another host (which
 * cannot be checked), an unreadable lock young enough to be still being written, another
 * process that took a stale lock over first, or no luck within the attempts or the deadline.
 */
export type LockBusy = 'held' | 'other-host' | 'unreadable' | 'raced' | 'timeout';

export interface LockOptions {
  /** The error thrown when the lock cannot be had; receives the holder when known. */
  busyError: (holder: LockOwner | undefined, why: LockBusy) => VltError;
  /** Told when a stale lock was taken over. */
  onTakeOver?: (stale: StaleLock) => void;
  /**
   * A lock file whose content cannot be parsed is taken over once it is this old; younger, it
   * may still be being written by its creator. Default 10 s.
   */
  unreadableGraceMs?: number;
}

export interface WaitLockOptions extends LockOptions {
  /** How long to wait for a live holder (and for callers of this process ahead in the queue). */
  timeoutMs: number;
}

/** A lock this process holds. */
export interface FileLock {
  readonly path: string;
  /** The exact content written, by which the release knows the file is still ours. */
  readonly content: string;
  /** Removes the lock file if it is still ours. Releasing twice does nothing. */
  release(): void;
}

const DEFAULT_UNREADABLE_GRACE_MS = 10_000;

/**
 * How many times {@link tryLock} creates the file: a retry follows only a lock released between
 * our create and our read, or a stale lock taken over.
 */
const TRY_ATTEMPTS = 5;

/** Locks this process holds, by path, with their content, for release at exit. */
const held = new Map<string, string>();
/** In-process queue per lock path for {@link waitForLock}, so that callers wait without polling. */
const queues = new Map<string, Promise<void>>();
let exitHookInstalled = false;

/** A phrase for a stale lock, for the warning that it was taken over. */
export function describeStaleLock(stale: StaleLock): string {
  switch (stale.kind) {
    case 'unreadable':
      return 'an unreadable lock file';
    case 'dead':
      return `a lock of pid ${stale.holder.pid} (no such process)`;
    case 'pid-reused':
      return `a lock left by an earlier process with our pid ${stale.holder.pid}`;
  }
}

/** Takes the lock, or throws `busyError` at once when a live process (this one included) holds it. */
export async function tryLock(lockPath: string, opts: LockOptions): Promise<FileLock> {
  return fileLock(lockPath, await createLockFile(lockPath, opts, undefined));
}

/**
 * Takes the lock, waiting while a live process holds it, up to `timeoutMs`; then throws
 * `busyError(holder, 'timeout')`. Waiting for the callers of this process ahead in the queue
 * is bounded by `timeoutMs` too.
 */
export async function waitForLock(lockPath: string, opts: WaitLockOptions): Promise<FileLock> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  let releaseQueue!: () => void;
  const mine = new Promise<void>((resolve) => (releaseQueue = resolve));
  const tail = previous.then(() => mine);
  queues.set(lockPath, tail);
  const leaveQueue = (): void => {
    releaseQueue();
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  };
  try {
    await waitAtMost(previous, opts.timeoutMs, () => opts.busyError(undefined, 'timeout'));
    const lock = fileLock(lockPath, await createLockFile(lockPath, opts, Date.now() + opts.timeoutMs));
    return {
      ...lock,
      release: () => {
        try {
          lock.release();
        } finally {
          leaveQueue();
        }
      },
    };
  } catch (e) {
    leaveQueue();
    throw e;
  }
}

function fileLock(lockPath: string, content: string): FileLock {
  return { path: lockPath, content, release: () => releaseSync(lockPath, content) };
}

function releaseSync(lockPath: string, content: string): void {
  if (held.get(lockPath) !== content) return;
  held.delete(lockPath);
  try {
    // Only remove the lock while it is still ours: a process that judged it stale may own it now.
    if (fs.readFileSync(lockPath, 'utf8') === content) fs.unlinkSync(lockPath);
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Best effort: a normal exit (including process.exit) removes our locks.
  process.on('exit', () => {
    for (const [lockPath, content] of [...held]) releaseSync(lockPath, content);
  });
}

/** Waits for `p`, or throws `timeoutError()` after `ms`. */
async function waitAtMost(p: Promise<void>, ms: number, timeoutError: () => VltError): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms);
  });
  try {
    await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the lock file with its content in one step, so that no process ever reads it empty:
 * the content is written to a temporary file first and hard-linked to the lock's name, which
 * fails with EEXIST when the lock exists. (An exclusive create and a write in two steps left an
 * empty lock behind when a kill -9 fell between them, which blocked every writer until the lock
 * aged past the grace period for unreadable locks.) A file system without hard links gets the
 * exclusive create.
 */
async function createWithContent(lockPath: string, content: string): Promise<void> {
  const tmp = tempPathFor(lockPath);
  await fsp.writeFile(tmp, content);
  try {
    await fsp.link(tmp, lockPath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw e;
    await fsp.writeFile(lockPath, content, { flag: 'wx' });
  } finally {
    await fsp.rm(tmp, { force: true });
  }
}

/**
 * The create loop both ways share. Without a deadline it gives up at the first live holder;
 * with one it sleeps and tries again until the deadline.
 */
async function createLockFile(lockPath: string, opts: LockOptions, deadline: number | undefined): Promise<string> {
  const host = os.hostname();
  const content = JSON.stringify({ pid: process.pid, hostname: host, startedAt: new Date().toISOString() });
  const grace = opts.unreadableGraceMs ?? DEFAULT_UNREADABLE_GRACE_MS;
  let holder: LockOwner | undefined;
  for (let attempt = 0; ; attempt++) {
    if (deadline === undefined && attempt >= TRY_ATTEMPTS) throw opts.busyError(holder, 'timeout');
    try {
      await createWithContent(lockPath, content);
      held.set(lockPath, content);
      installExitHook();
      return content;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new VltError('IO', `could not create ${lockPath}: ${errorMessage(e)}`, { path: lockPath }, { cause: e });
      }
    }
    let raw: string;
    let mtimeMs: number;
    try {
      raw = await fsp.readFile(lockPath, 'utf8');
      mtimeMs = (await fsp.stat(lockPath)).mtimeMs;
    } catch {
      continue; // Released between our create and our read: try again at once.
    }
    holder = parseLockOwner(raw);
    let stale: StaleLock | undefined;
    let busy: LockBusy;
    if (!holder) {
      busy = 'unreadable';
      if (Date.now() - mtimeMs >= grace) stale = { kind: 'unreadable' };
    } else if (holder.hostname !== host) {
      busy = 'other-host';
    } else {
      busy = 'held';
      if (holder.pid === process.pid) {
        if (!held.has(lockPath)) stale = { kind: 'pid-reused', holder };
      } else if (!isPidAlive(holder.pid)) {
        stale = { kind: 'dead', holder };
      }
    }
    if (stale !== undefined) {
      if (await takeOverStaleLock(lockPath, raw)) {
        opts.onTakeOver?.(stale);
        continue;
      }
      // Another process took the stale lock over first, and holds it now.
      busy = 'raced';
    }
    if (deadline === undefined) throw opts.busyError(holder, busy);
    if (Date.now() >= deadline) throw opts.busyError(holder, 'timeout');
    // 1, 2, 4 … 32 ms with jitter: a memory write holds the lock for a few milliseconds.
    const backoff = Math.min(32, 2 ** Math.min(attempt, 5));
    await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
  }
}

/**
 * Moves a stale lock aside and checks that what was moved is what was judged stale; when
 * another process took the lock over in between, its lock is put back. Returns whether the
 * stale lock is gone (also when it was gone already: the next create decides).
 */
async function takeOverStaleLock(lockPath: string, judged: string): Promise<boolean> {
  const aside = `${lockPath}.stale-${process.pid}`;
  try {
    await fsp.rename(lockPath, aside);
  } catch {
    return true;
  }
  const moved = await fsp.readFile(aside, 'utf8').catch(() => judged);
  if (moved !== judged) {
    await fsp.link(aside, lockPath).catch(() => undefined);
    await fsp.rm(aside, { force: true });
    return false;
  }
  await fsp.rm(aside, { force: true });
  return true;
}

function parseLockOwner(raw: string): LockOwner | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockOwner>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string') {
      return { pid: v.pid, hostname: v.hostname, startedAt: String(v.startedAt ?? '') };
    }
  } catch {
    // Falls through to "unreadable".
  }
  return undefined;
}
