/**
 * The delta queue of a long-lived writer (the editor's server, `vlt coderag watch`): saved
 * and changed files are indexed in memory as soon as they arrive, so that they are searchable
 * at once, and committed to disk in batches, when enough has changed (files or lines) or
 * after a quiet timeout, or when asked ("Sync Index Now"). Work runs one step at a time; a
 * failed step is reported and its paths stay queued for the next attempt.
 */
import { toVltError, type VltError } from './errors';
import type { Logger } from './ports';

export interface DeltaThresholds {
  /** Commit once this many files changed since the last commit. Default 5. */
  maxFiles: number;
  /** Commit once this many lines changed since the last commit. Default 1,000. */
  maxLines: number;
  /** Commit this long after the first uncommitted change. Default 5 minutes. */
  timeoutMs: number;
}

/** How long a failed step waits before queued paths are tried again. */
const RETRY_MS = 3000;

export const DEFAULT_DELTA_THRESHOLDS: DeltaThresholds = { maxFiles: 5, maxLines: 1000, timeoutMs: 5 * 60_000 };

/** What the queue drives: an in-memory index of some paths, and a commit of what is pending. */
export interface DeltaTarget {
  /** Indexes `paths` (workspace-relative) in memory; returns the paths whose entries changed and about how many lines did. */
  apply(paths: readonly string[]): Promise<{ changed: readonly string[]; lines: number }>;
  /** Writes every applied change to disk. */
  commit(): Promise<void>;
}

export interface DeltaQueueState {
  /** Paths received and not yet indexed. */
  pending: number;
  /** Files indexed in memory since the last commit. */
  uncommittedFiles: number;
  uncommittedLines: number;
  /** When the last commit of this queue finished (ISO time), or null. */
  lastCommit: string | null;
  commits: number;
  /** The last failure, until a step succeeds again. */
  error: { code: string; message: string } | null;
}

export interface DeltaQueueOptions {
  target: DeltaTarget;
  thresholds?: Partial<DeltaThresholds>;
  logger: Logger;
  /** Called after every step that changed the state (status bars). */
  onState?: (state: DeltaQueueState) => void;
  /** How long to gather events before indexing them; default 25 ms (a save of several files arrives as several events). */
  debounceMs?: number;
}

export class DeltaQueue {
  private readonly thresholds: DeltaThresholds;
  private readonly pendingPaths = new Set<string>();
  private readonly uncommitted = new Set<string>();
  private uncommittedLines = 0;
  private lastCommit: string | null = null;
  private commits = 0;
  private error: VltError | null = null;
  private chain: Promise<void> = Promise.resolve();
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private commitTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  constructor(private readonly opts: DeltaQueueOptions) {
    this.thresholds = { ...DEFAULT_DELTA_THRESHOLDS, ...opts.thresholds };
  }

  /** Queues changed, created or deleted files; they are indexed in memory shortly after. */
  enqueue(paths: Iterable<string>): void {
    if (this.disposed) return;
    let added = false;
    for (const p of paths) {
      if (!this.pendingPaths.has(p)) added = true;
      this.pendingPaths.add(p);
    }
    if (!added) return;
    this.emit();
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.applyPending().catch(() => undefined), this.opts.debounceMs ?? 25);
  }

  /**
   * Just in time: indexes every queued path now (in memory), so that a query about to run sees
   * them. Resolves when done; a failure is kept in the state and does not reject.
   */
  async applyPending(): Promise<void> {
    clearTimeout(this.debounce);
    this.debounce = undefined;
    await this.step(async () => {
      if (this.pendingPaths.size === 0) return;
      const paths = [...this.pendingPaths];
      this.pendingPaths.clear();
      try {
        const r = await this.opts.target.apply(paths);
        for (const p of r.changed) this.uncommitted.add(p);
        this.uncommittedLines += r.lines;
      } catch (e) {
        // Kept for a later attempt (the writer lock may be held by another process for a while).
        for (const p of paths) this.pendingPaths.add(p);
        if (!this.disposed) {
          clearTimeout(this.debounce);
          this.debounce = setTimeout(() => void this.applyPending().catch(() => undefined), RETRY_MS);
          this.debounce.unref?.();
        }
        throw e;
      }
      if (this.uncommitted.size === 0) return;
      if (this.uncommitted.size >= this.thresholds.maxFiles || this.uncommittedLines >= this.thresholds.maxLines) {
        await this.commitNow();
      } else if (!this.commitTimer) {
        this.commitTimer = setTimeout(() => void this.flush().catch(() => undefined), this.thresholds.timeoutMs);
        this.commitTimer.unref?.();
      }
    });
  }

  /** Indexes what is queued and commits everything uncommitted ("Sync Index Now"). Rejects on failure. */
  async flush(): Promise<DeltaQueueState> {
    await this.applyPending();
    await this.step(() => this.commitNow(), true);
    return this.state();
  }

  /**
   * Another run of the same writer committed the whole index (`vlt coderag sync` through the
   * server holding this queue): what was indexed and not committed is on disk now. Called
   * while the writer's gate is held, so no apply runs between that commit and this.
   */
  committedElsewhere(): void {
    if (this.uncommitted.size === 0) return;
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    this.uncommitted.clear();
    this.uncommittedLines = 0;
    this.lastCommit = new Date().toISOString();
    this.commits++;
    this.emit();
  }

  state(): DeltaQueueState {
    return {
      pending: this.pendingPaths.size,
      uncommittedFiles: this.uncommitted.size,
      uncommittedLines: this.uncommittedLines,
      lastCommit: this.lastCommit,
      commits: this.commits,
      error: this.error ? { code: this.error.code, message: this.error.message } : null,
    };
  }

  /** Whether there is work not yet on disk. */
  get dirty(): boolean {
    return this.pendingPaths.size > 0 || this.uncommitted.size > 0;
  }

  /** Stops the timers; what is queued stays unindexed (call {@link flush} first to keep it). */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.debounce);
    clearTimeout(this.commitTimer);
  }

  private async commitNow(): Promise<void> {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    if (this.uncommitted.size === 0) return;
    const files = this.uncommitted.size;
    await this.opts.target.commit();
    this.opts.logger.info(`delta queue: committed ${files} file(s), ~${this.uncommittedLines} line(s)`);
    this.uncommitted.clear();
    this.uncommittedLines = 0;
    this.lastCommit = new Date().toISOString();
    this.commits++;
  }

  /** Runs one step after the previous; records its failure; rethrows it only when asked. */
  private step(fn: () => Promise<void>, rethrow = false): Promise<void> {
    const run = this.chain.then(async () => {
      try {
        await fn();
        this.error = null;
      } catch (e) {
        this.error = toVltError(e);
        this.opts.logger.warn(`delta queue: ${this.error.code}: ${this.error.message}`);
        if (rethrow) throw this.error;
      } finally {
        this.emit();
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private emit(): void {
    this.opts.onState?.(this.state());
  }
}

/** About how many lines differ between two texts: lines of each not matched in the other (as multisets). */
export function changedLineCount(before: string, after: string): number {
  const counts = new Map<string, number>();
  for (const l of before.split('\n')) counts.set(l, (counts.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of after.split('\n')) {
    const n = counts.get(l) ?? 0;
    if (n > 0) counts.set(l, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of counts.values()) removed += n;
  return Math.max(added, removed);
}
