/**
 * The Context Oracle's git activity for the Node hosts: per file, the commits that changed it and
 * their times, read with `git log` and kept in `.vlt/git-activity.json`. The next read brings it
 * up to date from the HEAD it was read at (`git log OLD..HEAD`) when that commit is still an
 * ancestor of HEAD, and reads the log again otherwise (a rebase, another branch).
 *
 * Every git run is `execFile` with an argument array (never a shell) and a timeout. The hosts
 * do not call this in a restricted (untrusted) workspace.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { GitActivity } from '../core/context/activity';
import { VltError, errorMessage } from '../core/errors';
import { git as runGit } from './history-repo';
import { silentLogger, type Logger } from '../core/ports';
import { writeFileAtomic } from '../core/store/atomic';
import { VLT_DIR } from '../core/store/schema';

export const ACTIVITY_FILE = 'git-activity.json';
const FORMAT_VERSION = 1;
/** Commits read on a full read: years of a busy project. */
const MAX_COMMITS = 20_000;
const TIMEOUT_MS = 30_000;
const HEX = /^[0-9a-f]{40,64}$/;
const RS = '\x1e';

interface Stored {
  version: number;
  head: string;
  times: number[];
  files: Record<string, number[]>;
}

/** A git run of the activity reader: a timeout, and no optional locks taken in the user's repository. */
function git(cwd: string, args: string[], signal?: AbortSignal): Promise<string> {
  return runGit(args, { cwd, env: { GIT_OPTIONAL_LOCKS: '0' }, timeoutMs: TIMEOUT_MS, cancelled: 'reading the git history was cancelled', ...(signal ? { signal } : {}) });
}

/**
 * Commits of `git log -z --format=RS%ct --name-only`, oldest first: their times and the
 * workspace-relative files each changed. With -z the names are NUL-terminated and never quoted
 * (a name with a quote, a backslash or a newline comes through as it is).
 */
function parseLog(out: string): Array<{ time: number; files: string[] }> {
  const commits: Array<{ time: number; files: string[] }> = [];
  for (const rec of out.split(RS)) {
    const cut = rec.indexOf('\0');
    if (cut <= 0) continue;
    const time = Number(rec.slice(0, cut));
    if (!Number.isFinite(time)) continue;
    commits.push({ time, files: rec.slice(cut + 1).replace(/^\n/, '').split('\0').filter(Boolean) });
  }
  return commits.reverse();
}

/** The log arguments both reads use. */
const LOG_ARGS = ['log', '-z', '--no-merges', '--relative', `--format=${RS}%ct`, '--name-only'];

export class NodeGitActivity {
  private cached: GitActivity | undefined;

  constructor(
    private readonly root: string,
    private readonly logger: Logger = silentLogger,
  ) {}

  private get file(): string {
    return path.join(this.root, VLT_DIR, ACTIVITY_FILE);
  }

  /** The activity at HEAD; undefined when the workspace has no readable history. */
  async read(signal?: AbortSignal): Promise<GitActivity | undefined> {
    let head: string;
    try {
      head = (await git(this.root, ['rev-parse', '--verify', '--quiet', 'HEAD'], signal)).trim();
    } catch (e) {
      if (e instanceof VltError && e.code === 'CANCELLED') throw e;
      this.logger.debug(`context: no git history (${errorMessage(e)})`);
      return undefined;
    }
    if (!HEX.test(head)) return undefined;
    if (this.cached?.head === head) return this.cached;
    const stored = this.cached ?? (await this.load(signal));
    let table: GitActivity | undefined;
    if (stored && stored.head !== head && (await this.isAncestor(stored.head, head, signal))) {
      const added = parseLog(await git(this.root, [...LOG_ARGS, `${stored.head}..${head}`, '--', '.'], signal));
      table = { head, times: [...stored.times], files: new Map([...stored.files].map(([k, v]) => [k, [...v]])) };
      append(table, added);
    } else if (stored && stored.head === head) {
      table = stored;
    } else {
      table = { head, times: [], files: new Map() };
      append(table, parseLog(await git(this.root, [...LOG_ARGS, '-n', String(MAX_COMMITS), head, '--', '.'], signal)));
    }
    this.cached = table;
    await this.save(table);
    return table;
  }

  private async isAncestor(old: string, head: string, signal?: AbortSignal): Promise<boolean> {
    if (!HEX.test(old)) return false;
    try {
      await git(this.root, ['merge-base', '--is-ancestor', old, head], signal);
      return true;
    } catch (e) {
      if (e instanceof VltError && e.code === 'CANCELLED') throw e;
      return false;
    }
  }

  /** The kept table; not one the repository itself ships (a tracked `.vlt/git-activity.json` could forge activity). */
  private async load(signal?: AbortSignal): Promise<GitActivity | undefined> {
    try {
      const tracked = await git(this.root, ['ls-files', '--', `${VLT_DIR}/${ACTIVITY_FILE}`], signal).catch(() => '');
      if (tracked.trim() !== '') return undefined;
      const v = JSON.parse(await readFile(this.file, 'utf8')) as Stored;
      if (v.version !== FORMAT_VERSION || typeof v.head !== 'string' || !Array.isArray(v.times) || typeof v.files !== 'object' || v.files === null) return undefined;
      return { head: v.head, times: v.times.map(Number), files: new Map(Object.entries(v.files).map(([k, list]) => [k, Array.isArray(list) ? list.map(Number) : []])) };
    } catch {
      return undefined;
    }
  }

  private async save(t: GitActivity): Promise<void> {
    const stored: Stored = { version: FORMAT_VERSION, head: t.head, times: t.times, files: Object.fromEntries(t.files) };
    try {
      await writeFileAtomic(this.file, Buffer.from(JSON.stringify(stored)));
    } catch (e) {
      // A read-only .vlt/ costs only the next full read.
      this.logger.debug(`context: could not keep ${ACTIVITY_FILE}: ${errorMessage(e)}`);
    }
  }
}

function append(t: GitActivity, commits: ReadonlyArray<{ time: number; files: string[] }>): void {
  for (const c of commits) {
    const id = t.times.length;
    t.times.push(c.time);
    for (const f of c.files) {
      let list = t.files.get(f);
      if (!list) t.files.set(f, (list = []));
      list.push(id);
    }
  }
}

const byRoot = new Map<string, NodeGitActivity>();

/** One activity reader per workspace root in this process. */
export function gitActivity(root: string, logger?: Logger): NodeGitActivity {
  let a = byRoot.get(root);
  if (!a) byRoot.set(root, (a = new NodeGitActivity(root, logger)));
  return a;
}
