/**
 * `vlt coderag watch`: the delta queue of the workspace server driven by the file system's
 * change events (recursive fs.watch), until a signal. Each commit is reported through
 * `onCommit`; on the way out, what is queued is committed.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { DeltaQueueState } from '../core/delta-queue';
import { VltError } from '../core/errors';
import type { Logger } from '../core/ports';
import type { WorkspaceServer } from './workspace';

/** Folders whose changes never concern the index. */
const IGNORED = /(^|\/)(\.vlt|\.git|node_modules|\.hg|\.svn)(\/|$)/;

/**
 * Feeds the file system's change events under the workspace into its delta queue (recursive
 * fs.watch); the watcher is returned for the caller to close.
 */
export function watchFiles(ws: WorkspaceServer, logger: Logger): FSWatcher {
  if (!ws.queue) throw new VltError('INTERNAL', 'watching needs a writer workspace server');
  let watcher: FSWatcher;
  try {
    watcher = watch(ws.root, { recursive: true }, (_event, name) => {
      if (!name) return;
      const rel = name.split('\\').join('/');
      if (!IGNORED.test(rel)) ws.enqueue([rel]);
    });
  } catch (e) {
    throw new VltError('IO', `cannot watch ${ws.root}: ${e instanceof Error ? e.message : String(e)}`, undefined, { cause: e });
  }
  watcher.on('error', (e) => logger.warn(`watch: ${e.message}`));
  return watcher;
}

export async function watchWorkspace(ws: WorkspaceServer, opts: { logger: Logger; onCommit: (state: DeltaQueueState) => void; signal: AbortSignal }): Promise<void> {
  if (!ws.queue) throw new VltError('INTERNAL', 'watch needs a writer workspace server');
  await ws.getEngine();
  let commits = ws.queue.state().commits;
  const watcher = watchFiles(ws, opts.logger);
  const poll = setInterval(() => {
    const s = ws.queue!.state();
    if (s.commits !== commits) {
      commits = s.commits;
      opts.onCommit(s);
    }
  }, 200);
  opts.logger.info(`watching ${ws.root}; edits are committed in batches (vlt.toml [index] queue_files / queue_lines / queue_timeout_seconds)`);
  try {
    await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    clearInterval(poll);
    watcher.close();
    const s = await ws.sync();
    if (s && s.commits !== commits) opts.onCommit(s);
  }
}
