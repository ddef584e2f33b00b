/**
 * Crash-safe file replacement and the small process helpers the store needs around it.
 *
 * This module deliberately depends on nothing but Node built-ins and the error type, so that
 * a test can bundle it alone and run it in a child process that it then kills with SIGKILL.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { VltError } from '../errors';

let tempSeq = 0;

/**
 * Name of the temporary sibling a write goes through. The pid lets a later writer tell the
 * leftovers of a dead process from the file a live one is still writing; the sequence number
 * keeps two concurrent writes of the same process apart.
 */
export function tempPathFor(target: string): string {
  tempSeq += 1;
  return `${target}.tmp-${process.pid}-${tempSeq}`;
}

/** Matches the names {@link tempPathFor} produces and captures the writer's pid. */
const TEMP_NAME = /\.tmp-(\d+)(?:-\d+)?$/;

/**
 * Replaces `target` with `bytes` so that a crash at any moment (kill -9, power loss after the
 * fsyncs) leaves either the complete old file or the complete new one, never a mix: the bytes
 * go to a temporary sibling, which is flushed to disk, then renamed over the target (rename is
 * atomic within a directory), and finally the directory entry itself is flushed.
 */
export async function writeFileAtomic(target: string, bytes: Uint8Array): Promise<void> {
  const tmp = tempPathFor(target);
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fsp.open(tmp, 'w', 0o644);
    await handle.writeFile(bytes);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await renameWithRetry(tmp, target);
  } catch (e) {
    if (handle) await handle.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw new VltError('IO', `could not write ${target}: ${errorMessage(e)}`, { path: target }, { cause: e });
  }
  await fsyncDir(path.dirname(target));
}

/**
 * Windows refuses to rename over a file that another process (a virus scanner, an indexer)
 * holds open for a moment, so a few short retries turn a spurious failure into a delay.
 */
async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fsp.rename(from, to);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const retriable = code === 'EPERM' || code === 'EACCES' || code === 'EBUSY';
      if (!retriable || attempt >= 5) throw e;
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    }
  }
}

/**
 * Flushes a directory so that a rename inside it survives a power loss. Windows cannot open
 * directories for syncing and some file systems reject it; the rename is still atomic there,
 * only its durability is weaker, so those errors are ignored.
 */
export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fsp.open(dir, 'r');
    await handle.sync();
  } catch {
    // See above: durability of the directory entry is best effort.
  } finally {
    if (handle) await handle.close().catch(() => undefined);
  }
}

/**
 * Whether a process with this pid exists on this machine. EPERM means it exists but belongs to
 * another user, which still counts as alive.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes temporary files left in `dir` by writers that died before their rename. Files of
 * live processes are left alone because they may be in the middle of a write. Returns the
 * names removed.
 */
export async function removeStaleTempFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP_NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isPidAlive(pid)) continue;
    try {
      await fsp.rm(path.join(dir, name), { force: true });
      removed.push(name);
    } catch {
      // A leftover we cannot delete costs only disk space; the next writer tries again.
    }
  }
  return removed;
}

// ---------------------------------------------------------------------------------------------
// Short waiting lock
// ---------------------------------------------------------------------------------------------

/** What a lock file holds: enough to tell a live holder from a dead one. */
export interface FileLockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

export interface FileLockOptions {
  /** How long to wait for a live holder before giving up. */
  timeoutMs: number;
  /**
   * A lock file whose content cannot be parsed is taken over once it is this old; younger, it
   * may still be being written by its creator.
   */
  unreadableGraceMs?: number;
  /** Told when a stale lock (dead pid, or unreadable and old) is taken over. */
  onTakeOver?: (why: string) => void;
  /** The error thrown when the lock cannot be had in time; receives the holder when known. */
  busyError: (holder: FileLockOwner | undefined) => VltError;
}

/** Locks this process holds through {@link acquireFileLock}, with their content, for release at exit. */
const heldFileLocks = new Map<string, string>();
/** In-process queue per lock path, so that concurrent callers of one process wait without polling. */
const lockQueues = new Map<string, Promise<void>>();
let fileLockExitHook = false;

/**
 * Takes a short-lived cross-process lock: an exclusive create of `lockPath`, waiting (with a
 * short, growing, jittered sleep) while a live process holds it, and taking over the lock of a
 * dead process on this host. Callers in one process queue in memory first, so at most one of
 * them competes for the file. Returns the release function; a normal exit releases too.
 *
 * This is the waiting cousin of the index writer lock in `store.ts`, which fails at once
 * instead: a writer of the index holds its lock for minutes, a writer of the memory store for
 * milliseconds, so waiting is the right answer only here.
 */
export async function acquireFileLock(lockPath: string, opts: FileLockOptions): Promise<() => Promise<void>> {
  const previous = lockQueues.get(lockPath) ?? Promise.resolve();
  let releaseQueue!: () => void;
  const mine = new Promise<void>((resolve) => (releaseQueue = resolve));
  const tail = previous.then(() => mine);
  lockQueues.set(lockPath, tail);
  const leaveQueue = (): void => {
    releaseQueue();
    if (lockQueues.get(lockPath) === tail) lockQueues.delete(lockPath);
  };
  try {
    await waitAtMost(previous, opts.timeoutMs, () => opts.busyError(undefined));
    const content = await createLockFile(lockPath, opts);
    return async () => {
      heldFileLocks.delete(lockPath);
      try {
        // Only remove the lock while it is still ours: a process that judged it stale may own it now.
        if ((await fsp.readFile(lockPath, 'utf8')) === content) await fsp.unlink(lockPath);
      } catch {
        // Already gone.
      } finally {
        leaveQueue();
      }
    };
  } catch (e) {
    leaveQueue();
    throw e;
  }
}

/** Waits for `p`, or throws `timeoutError()` after `ms`; a holder in this process is bound by the same deadline. */
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

async function createLockFile(lockPath: string, opts: FileLockOptions): Promise<string> {
  const content = JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() });
  const deadline = Date.now() + opts.timeoutMs;
  const grace = opts.unreadableGraceMs ?? 10_000;
  let holder: FileLockOwner | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      await fsp.writeFile(lockPath, content, { flag: 'wx' });
      heldFileLocks.set(lockPath, content);
      if (!fileLockExitHook) {
        fileLockExitHook = true;
        process.on('exit', () => {
          for (const [p, c] of heldFileLocks) {
            try {
              if (fs.readFileSync(p, 'utf8') === c) fs.unlinkSync(p);
            } catch {
              // Already gone.
            }
          }
        });
      }
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
    let stale: string | undefined;
    if (!holder) {
      if (Date.now() - mtimeMs >= grace) stale = 'an unreadable lock file';
    } else if (holder.hostname === os.hostname() && holder.pid !== process.pid && !isPidAlive(holder.pid)) {
      stale = `a lock of pid ${holder.pid} (no such process)`;
    } else if (holder.hostname === os.hostname() && holder.pid === process.pid && !heldFileLocks.has(lockPath)) {
      // Our pid, but not our lock: an earlier process had this pid and died holding it.
      stale = `a lock left by an earlier process with our pid ${holder.pid}`;
    }
    if (stale !== undefined && (await takeOverStaleLock(lockPath, raw))) {
      opts.onTakeOver?.(`taking over ${stale}: ${lockPath}`);
      continue;
    }
    if (Date.now() >= deadline) throw opts.busyError(holder);
    // 1, 2, 4 … 32 ms with jitter: a memory write holds the lock for a few milliseconds.
    const backoff = Math.min(32, 2 ** Math.min(attempt, 5));
    await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
  }
}

/**
 * Moves a stale lock aside and checks that what was moved is what was judged stale; when
 * another process took the lock over in between, its lock is put back. Returns whether the
 * stale lock is gone.
 */
async function takeOverStaleLock(lockPath: string, judged: string): Promise<boolean> {
  const aside = `${lockPath}.stale-${process.pid}`;
  try {
    await fsp.rename(lockPath, aside);
  } catch {
    return true; // Gone already; the next create attempt decides.
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

function parseLockOwner(raw: string): FileLockOwner | undefined {
  try {
    const v = JSON.parse(raw) as Partial<FileLockOwner>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string') {
      return { pid: v.pid, hostname: v.hostname, startedAt: String(v.startedAt ?? '') };
    }
  } catch {
    // Falls through to "unreadable".
  }
  return undefined;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
