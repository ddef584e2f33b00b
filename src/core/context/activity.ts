/**
 * Git activity and stale docs. The engine runs no programs: a host reads the log (src/node/
 * git-activity.ts keeps it in `.vlt/`, brought up to date incrementally from the last HEAD it
 * read) and hands over a {@link GitActivity}: each commit's time and, per file, the commits
 * that changed it.
 */
import type { Activity } from './model';

export interface GitActivity {
  /** The commit the table was read at. */
  head: string;
  /** Commit times, Unix seconds, by commit number. */
  times: number[];
  /** Workspace-relative path → numbers of the commits that changed it. */
  files: Map<string, number[]>;
}

/** Reads the workspace's git activity; undefined when there is no history (not a repository, no git, a restricted workspace). */
export type ActivitySource = (signal?: AbortSignal) => Promise<GitActivity | undefined>;

const DAY = 86_400;
/** More than one commit a week over the last 30 days is a hot spot. */
const HOT_COMMITS_30D = 5;
/** No commit in half a year: nobody is working here. */
const DORMANT_DAYS = 180;

/** The activity of a set of files (a node's): distinct commits in the last 30 days, the last one, and the level they make. */
export function activityOf(git: GitActivity, paths: readonly string[], now: number): { level: Activity; commits_30d: number; last_commit: string | null } {
  const commits = new Set<number>();
  for (const p of paths) for (const c of git.files.get(p) ?? []) commits.add(c);
  let last = 0;
  let recent = 0;
  for (const c of commits) {
    const t = git.times[c] ?? 0;
    if (t > last) last = t;
    if (now - t <= 30 * DAY) recent++;
  }
  const level: Activity = recent >= HOT_COMMITS_30D ? 'hot' : recent > 0 ? 'warm' : last > 0 && now - last <= DORMANT_DAYS * DAY ? 'cold' : 'dormant';
  return { level, commits_30d: recent, last_commit: last > 0 ? new Date(last * 1000).toISOString() : null };
}

/** The time of the last commit that changed a file (Unix seconds), 0 when none did. */
export function lastChange(git: GitActivity, path: string): number {
  let last = 0;
  for (const c of git.files.get(path) ?? []) last = Math.max(last, git.times[c] ?? 0);
  return last;
}
