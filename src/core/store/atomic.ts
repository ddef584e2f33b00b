/**
 * Crash-safe file replacement and the small process helpers the store needs around it (the
 * lock files are in lock.ts).
 *
 * This module deliberately depends on nothing but Node built-ins and the error type, so that
 * a test can bundle it alone and run it in a child process that it then kills with SIGKILL.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VltError, errorMessage } from '../errors';

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

