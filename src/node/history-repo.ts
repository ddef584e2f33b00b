/**
 * {@link HistoryRepo} over the `git` program: the log (the eval's fix candidates, the locate
 * mode's past changes), and a scratch tree under the temporary directory that `vlt eval history`
 * moves from one parent commit to the next.
 *
 * The scratch tree has its own index file (`GIT_INDEX_FILE`), so the user's repository, its index
 * and its work tree are never touched: no worktree is registered, nothing is checked out in place.
 * Moving between two commits is git's two-tree `read-tree -m -u`, which rewrites only the files
 * that differ, and the list of those files is what the engine re-indexes.
 *
 * Every run is `execFile` with an argument array (no shell); commit names are checked to be
 * hexadecimal before they reach git.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { VltError } from '../core/errors';
import type { HistoryCommit, HistoryRepo } from '../core/eval/history';
import { INDEX_FILE, VLT_DIR } from '../core/store/schema';
import { PACK_NAME } from '../core/store/packs';

const MAX_BUFFER = 512 * 1024 * 1024;
const HEX = /^[0-9a-f]{7,64}$/i;
const RS = '\x1e';
const US = '\x1f';

/**
 * One git run: an argument array (no shell), no pager, no prompt; its stdout, or a VltError
 * (`GIT_UNAVAILABLE`, or `CANCELLED` with `cancelled` as its message when `signal` aborts).
 * Shared by the eval's scratch tree and the Context Oracle's activity reader.
 */
export function git(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; timeoutMs?: number; cancelled?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['--no-pager', '-c', 'core.quotepath=off', '-c', 'color.ui=false', '-c', 'diff.relative=false', ...args],
      {
        cwd: opts.cwd,
        maxBuffer: MAX_BUFFER,
        encoding: 'utf8',
        env: { ...process.env, ...opts.env, GIT_TERMINAL_PROMPT: '0' },
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new VltError('GIT_UNAVAILABLE', 'git is not installed (it is needed to read the history)'));
        if (err.name === 'AbortError') return reject(new VltError('CANCELLED', opts.cancelled ?? 'the history eval was cancelled'));
        reject(new VltError('GIT_UNAVAILABLE', `git ${args[0]} failed: ${String(stderr).trim().split('\n')[0] || err.message}`));
      },
    );
  });
}

function checkSha(sha: string): string {
  if (!HEX.test(sha)) throw new VltError('INTERNAL', `not a commit name: ${sha}`);
  return sha;
}

export class GitHistoryRepo implements HistoryRepo {
  private current: string | undefined;
  private scratch: string | undefined;

  private constructor(
    /** The workspace: the repository's top level or a folder of it. */
    private readonly root: string,
    /** The workspace's path inside the repository (`''` or `pkg/`). */
    private readonly prefix: string,
    private readonly gitDir: string,
    private readonly shallow: boolean,
  ) {}

  /** Opens the repository that holds `root`. The scratch folder is made on the first checkout. */
  static async open(root: string, opts: { signal?: AbortSignal } = {}): Promise<GitHistoryRepo> {
    let probe: string;
    try {
      probe = await git(['rev-parse', '--absolute-git-dir', '--show-prefix', '--is-shallow-repository'], { cwd: root, ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (e) {
      if (e instanceof VltError && e.code === 'GIT_UNAVAILABLE' && /not a git repository/i.test(e.message)) {
        throw new VltError('GIT_UNAVAILABLE', `${root} is not in a git repository: the history eval reads the repository's fix commits`);
      }
      throw e;
    }
    const [gitDir = '', prefix = '', shallow = ''] = probe.split('\n');
    return new GitHistoryRepo(root, prefix.trim(), gitDir.trim(), shallow.trim() === 'true');
  }

  /** Fails for a shallow clone, whose history is cut: the eval needs the parents of its fixes. */
  requireFullHistory(): void {
    if (this.shallow) throw new VltError('GIT_UNAVAILABLE', 'the repository is a shallow clone: fetch its history first (git fetch --unshallow)');
  }

  /** The commit HEAD names (undefined in a repository without commits). */
  async head(signal?: AbortSignal): Promise<string | undefined> {
    const out = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: this.root, ...(signal ? { signal } : {}) }).catch(() => '');
    const sha = out.trim();
    return HEX.test(sha) ? sha : undefined;
  }

  private async scratchDir(): Promise<string> {
    if (this.scratch === undefined) {
      this.scratch = await mkdtemp(path.join(tmpdir(), 'vlt-eval-'));
      await mkdir(path.join(this.scratch, 'tree'), { recursive: true });
    }
    return this.scratch;
  }

  get scratchRoot(): string {
    if (this.scratch === undefined) throw new VltError('INTERNAL', 'the scratch tree is made by the first checkout');
    return path.join(this.scratch, 'tree', this.prefix);
  }

  async log(opts: { since?: string; maxCommits: number; signal?: AbortSignal }): Promise<HistoryCommit[]> {
    const args = ['log', '--no-merges', '--no-renames', '--name-status', `--format=${RS}%H${US}%P${US}%ct${US}%s${US}%b${US}`, '-n', String(Math.max(1, Math.floor(opts.maxCommits)))];
    if (opts.since) args.push(`--since=${opts.since}`);
    args.push('HEAD', '--');
    if (this.prefix) args.push('.');
    const out = await git(args, { cwd: this.root, ...(opts.signal ? { signal: opts.signal } : {}) });
    const commits: HistoryCommit[] = [];
    for (const rec of out.split(RS)) {
      if (!rec.trim()) continue;
      const fields = rec.split(US);
      const [sha = '', parents = '', time = '0', subject = '', body = '', rest = ''] = fields;
      const parentList = parents.trim().split(/\s+/).filter(Boolean);
      if (!HEX.test(sha) || parentList.length !== 1) continue;
      const files: HistoryCommit['files'] = [];
      for (const line of rest.split('\n')) {
        const m = /^([MADTCU])\d*\t(.+)$/.exec(line.trim());
        if (!m) continue;
        const repoPath = m[2]!;
        if (this.prefix && !repoPath.startsWith(this.prefix)) continue;
        files.push({ status: m[1]!, path: repoPath.slice(this.prefix.length) });
      }
      commits.push({ sha, parent: parentList[0]!, time: Number(time), subject: subject.trim(), body: body.trim(), files });
    }
    return commits;
  }

  async checkout(sha: string): Promise<string[] | undefined> {
    checkSha(sha);
    const scratch = await this.scratchDir();
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index'), GIT_DIR: this.gitDir, GIT_WORK_TREE: path.join(scratch, 'tree') };
    const cwd = path.join(scratch, 'tree');
    const prev = this.current;
    if (prev === sha) return [];
    if (prev === undefined) {
      await git(['read-tree', '--reset', '-u', sha], { cwd, env });
      this.current = sha;
      return undefined;
    }
    await git(['read-tree', '-m', '-u', prev, sha], { cwd, env });
    this.current = sha;
    const diff = await git(['diff', '--name-only', '--no-renames', prev, sha, '--', ...(this.prefix ? [this.prefix] : [])], { cwd, env });
    return diff
      .split('\n')
      .filter(Boolean)
      .map((p) => p.slice(this.prefix.length));
  }

  async ancestors(sha: string, max: number): Promise<Set<string>> {
    checkSha(sha);
    const out = await git(['rev-list', '--no-merges', '-n', String(Math.max(1, Math.floor(max))), sha], { cwd: this.root });
    return new Set(out.split('\n').filter(Boolean));
  }

  /**
   * Starts the scratch tree's index from the workspace's own, so the first indexing run parses
   * only the files that differ from it (the rest are recognised by content hash).
   */
  async seedIndex(): Promise<boolean> {
    const from = path.join(this.root, VLT_DIR, INDEX_FILE);
    try {
      await stat(from);
    } catch {
      return false;
    }
    await this.scratchDir();
    const dir = path.join(this.scratchRoot, VLT_DIR);
    await mkdir(dir, { recursive: true });
    await copyFile(from, path.join(dir, INDEX_FILE));
    // With the files index.db names: the snapshots (search, symbols) and text segments, without
    // which the first run would rebuild the search index from every stored chunk, and the
    // chunk text packs, without which no stored chunk has its text.
    const sidecars = (await readdir(path.dirname(from))).filter((n) => /^[a-z]+-\d+-[0-9a-z]+\.bin$/.test(n) || PACK_NAME.test(n));
    await Promise.all(sidecars.map((n) => copyFile(path.join(path.dirname(from), n), path.join(dir, n))));
    return true;
  }

  async dispose(): Promise<void> {
    if (this.scratch !== undefined) await rm(this.scratch, { recursive: true, force: true });
    this.scratch = undefined;
  }
}
