/**
 * `.vlt/queue.json`: the delta queue of the long-lived writer of a workspace (`vlt lsp` in the
 * editor, `vlt coderag watch`), published for other processes, so that `vlt coderag status`
 * can say what is queued and not yet on disk. Advisory: a file whose process is gone is ignored.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { DeltaQueueState } from '../core/delta-queue';

export interface PublishedQueue {
  pid: number;
  /** Which host holds the queue: `vlt lsp`, `vlt coderag watch`. */
  host: string;
  updated: string;
  queue: DeltaQueueState;
}

const file = (root: string) => path.join(root, '.vlt', 'queue.json');

export function publishQueue(root: string, host: string, queue: DeltaQueueState): void {
  const rec: PublishedQueue = { pid: process.pid, host, updated: new Date().toISOString(), queue };
  try {
    writeFileSync(file(root), `${JSON.stringify(rec)}\n`);
  } catch {
    // Advisory only (a read-only .vlt, a removed workspace): the queue itself is unaffected.
  }
}

export function unpublishQueue(root: string): void {
  const rec = readQueue(root);
  if (rec?.pid === process.pid) rmSync(file(root), { force: true });
}

/** The published queue of a live process, or undefined. */
export function readQueue(root: string): PublishedQueue | undefined {
  try {
    const rec = JSON.parse(readFileSync(file(root), 'utf8')) as PublishedQueue;
    if (typeof rec.pid !== 'number' || !rec.queue) return undefined;
    process.kill(rec.pid, 0);
    return rec;
  } catch {
    return undefined;
  }
}

/**
 * `.vlt/commit-request`: a writer in another process (`vlt coderag sync` without the daemon)
 * asks the long-lived writer that holds the index lock with queued edits to commit them and give
 * the lock back, instead of failing while it holds it.
 */
const requestFile = (root: string) => path.join(root, '.vlt', 'commit-request');

export function requestCommit(root: string): void {
  writeFileSync(requestFile(root), `${process.pid}\n`);
}

/** Whether a commit was requested; the request is taken (removed). */
export function takeCommitRequest(root: string): boolean {
  const f = requestFile(root);
  if (!existsSync(f)) return false;
  rmSync(f, { force: true });
  return true;
}
