/**
 * The locate mode's history channel for the Node hosts: the repository's recent commits (message
 * and changed files), read with git once per HEAD and kept for the next report. A workspace that
 * is not a repository, or a git that fails, turns the channel off; locate still answers.
 */
import { toPastChanges } from '../core/eval/history';
import type { LocateHistory } from '../core/locate/locate';
import { silentLogger, type Logger } from '../core/ports';
import { GitHistoryRepo } from './history-repo';
import { errorMessage } from '../core/errors';

/** Commits read: enough for years of a busy project's fixes, and one git run of a second or less. */
export const LOCATE_HISTORY_COMMITS = 5000;

export class GitLocateHistory {
  private repo: Promise<GitHistoryRepo> | undefined;
  private cached: { head: string; history: LocateHistory } | undefined;

  constructor(
    private readonly root: string,
    private readonly logger: Logger = silentLogger,
  ) {}

  async get(signal?: AbortSignal): Promise<LocateHistory | undefined> {
    try {
      this.repo ??= GitHistoryRepo.open(this.root);
      const repo = await this.repo;
      const head = await repo.head(signal);
      if (head === undefined) return undefined;
      if (this.cached?.head === head) return this.cached.history;
      const commits = await repo.log({ maxCommits: LOCATE_HISTORY_COMMITS, ...(signal ? { signal } : {}) });
      const history: LocateHistory = { changes: toPastChanges(commits) };
      this.cached = { head, history };
      return history;
    } catch (e) {
      this.repo = undefined;
      this.logger.debug(`locate: no git history (${errorMessage(e)}); the history channel is off`);
      return undefined;
    }
  }
}

const byRoot = new Map<string, GitLocateHistory>();

/** One history reader per workspace root in this process, so a long-lived host reads the log once per HEAD. */
export function gitLocateHistory(root: string, logger?: Logger): GitLocateHistory {
  let h = byRoot.get(root);
  if (!h) byRoot.set(root, (h = new GitLocateHistory(root, logger)));
  return h;
}
