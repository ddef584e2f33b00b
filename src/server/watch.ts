/**
 * Keeping the index current from file events: a watcher per directory the index walks (not
 * per file, and not in `.git`, `node_modules` or the other folders the index skips), feeding
 * the workspace server's delta queue. `vlt coderag watch` runs it until a signal; the
 * workspace daemon runs it for its lifetime.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { DeltaQueueState } from '../core/delta-queue';
import { ALWAYS_SKIPPED_DIRS, VENDORED_DIRS } from '../core/discovery';
import { VltError, errorMessage } from '../core/errors';
import type { Logger } from '../core/ports';
import type { WorkspaceServer } from './workspace';

/** Vendored directory names skipped wherever they are (the conditional ones come from the index's skip list). */
const ALWAYS_VENDORED = new Set(VENDORED_DIRS.filter((r) => r.besideFile === undefined).map((r) => r.name));

/** Most directories watched; past it, edits in the rest reach the index through `vlt coderag sync`. */
const MAX_DIRS = 20_000;

export interface TreeWatcher {
  /** Directories watched now. */
  readonly dirs: number;
  close(): void;
}

/**
 * Watches every directory under the workspace that the index walks, adding directories as they
 * appear and dropping them as they go, and queues each changed path. Resolves once the initial
 * directories are watched.
 */
export async function watchFiles(ws: WorkspaceServer, logger: Logger): Promise<TreeWatcher> {
  const queue = ws.queue;
  if (!queue) throw new VltError('INTERNAL', 'watching needs a writer workspace server');
  const engine = await ws.getEngine();
  // Folders the last index run skipped (gitignored, excluded, vendored beside their marker file).
  const skipped = new Set(engine.status().skipped_dirs.map((d) => d.path));
  const skip = (rel: string, name: string) => ALWAYS_SKIPPED_DIRS.has(name) || ALWAYS_VENDORED.has(name) || skipped.has(rel);
  const watchers = new Map<string, FSWatcher>();
  let warned = false;
  let closed = false;

  const unwatch = (rel: string) => {
    for (const [dir, w] of watchers) {
      if (dir === rel || dir.startsWith(`${rel}/`)) {
        w.close();
        watchers.delete(dir);
      }
    }
  };

  /** Watches `rel` and the directories under it; `appeared`: a directory made after the start, whose files are queued too. */
  const add = async (rel: string, appeared = false): Promise<void> => {
    if (closed || watchers.has(rel)) return;
    if (watchers.size >= MAX_DIRS) {
      if (!warned) logger.warn(`watch: more than ${MAX_DIRS} directories; edits in the others reach the index through \`vlt coderag sync\``);
      warned = true;
      return;
    }
    const abs = rel ? path.join(ws.root, rel) : ws.root;
    let w: FSWatcher;
    try {
      w = watch(abs, (_event, name) => {
        if (!name) return;
        const child = rel ? `${rel}/${name.split(path.sep).join('/')}` : name.split(path.sep).join('/');
        ws.enqueue([child]);
        // A directory that appeared is watched too; one that went away is dropped.
        void stat(path.join(ws.root, child)).then(
          (st) => {
            if (st.isDirectory() && !skip(child, path.posix.basename(child))) return add(child, true);
          },
          () => unwatch(child),
        );
      });
    } catch (e) {
      // Gone already, or not readable: nothing to watch there.
      logger.debug(`watch: ${rel || '.'}: ${errorMessage(e)}`);
      return;
    }
    w.on('error', () => unwatch(rel));
    watchers.set(rel, w);
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch {
      return;
    }
    const subdirs: string[] = [];
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      // Files written into a new directory before it was watched (a checkout, an unpacked tree).
      if (appeared && e.isFile()) ws.enqueue([child]);
      if (e.isDirectory() && !skip(child, e.name)) subdirs.push(child);
    }
    // Siblings at once: their directory reads queue on the I/O threads instead of taking one
    // event-loop turn each (one after the other, 1.4 s for the Go standard library's folders).
    await Promise.all(subdirs.map((child) => add(child, appeared)));
  };

  try {
    await add('');
  } catch (e) {
    for (const w of watchers.values()) w.close();
    throw new VltError('IO', `cannot watch ${ws.root}: ${errorMessage(e)}`, undefined, { cause: e });
  }
  logger.debug(`watch: ${watchers.size} directories under ${ws.root}`);
  return {
    get dirs() {
      return watchers.size;
    },
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

export async function watchWorkspace(ws: WorkspaceServer, opts: { logger: Logger; onCommit: (state: DeltaQueueState) => void; signal: AbortSignal }): Promise<void> {
  if (!ws.queue) throw new VltError('INTERNAL', 'watch needs a writer workspace server');
  await ws.getEngine();
  let commits = ws.queue.state().commits;
  const watcher = await watchFiles(ws, opts.logger);
  const poll = setInterval(() => {
    const s = ws.queue!.state();
    if (s.commits !== commits) {
      commits = s.commits;
      opts.onCommit(s);
    }
  }, 200);
  opts.logger.info(`watching ${ws.root} (${watcher.dirs} directories); edits are committed in batches (vlt.toml [index] queue_files / queue_lines / queue_timeout_seconds)`);
  try {
    await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    clearInterval(poll);
    watcher.close();
    const s = await ws.sync();
    if (s && s.commits !== commits) opts.onCommit(s);
  }
}
