/**
 * The index's writer lock as the store takes it: the generic lock (lock.ts) with every way it
 * can be busy said in the user's words.
 */
import { VltError } from '../errors';
import type { Logger } from '../ports';
import { tryLock, type FileLock } from './lock';

/**
 * Takes the writer lock, failing at once while another live process holds it (lock.ts). A
 * lock from another host cannot be checked, so the error says which file to delete if that
 * process is gone.
 */
export function takeWriterLock(lockPath: string, logger: Logger, first: boolean): Promise<FileLock> {
  return tryLock(lockPath, {
    onTakeOver: (stale) =>
      logger.warn(stale.kind === 'unreadable' ? `taking over an unreadable lock file ${lockPath}` : `taking over a stale index lock of pid ${stale.holder.pid} (no such process)`),
    busyError: (holder, why) => {
      switch (why) {
        case 'other-host':
          return new VltError(
            'INDEX_LOCKED',
            `another vlt process (pid ${holder?.pid} on host ${holder?.hostname}) is writing the index; readers keep working. If that process no longer runs, delete ${lockPath}`,
            { pid: holder?.pid, hostname: holder?.hostname, lockPath },
          );
        case 'held':
          // No index yet: there is nothing to read until that process has built it.
          if (first) return new VltError('INDEX_LOCKED', `another vlt process (pid ${holder?.pid}) is building this workspace's first index; run the command again when it has finished`, { pid: holder?.pid, lockPath });
          return new VltError('INDEX_LOCKED', `another vlt process (pid ${holder?.pid}) is writing the index; readers keep working`, { pid: holder?.pid, lockPath });
        case 'unreadable':
          return new VltError('INDEX_LOCKED', 'another vlt process is writing the index; readers keep working', { lockPath });
        case 'raced':
          return new VltError('INDEX_LOCKED', 'another vlt process took over the index lock; readers keep working', { lockPath });
        case 'timeout':
          return new VltError('INDEX_LOCKED', `could not take the index lock ${lockPath}; readers keep working`, { lockPath });
      }
    },
  });
}
