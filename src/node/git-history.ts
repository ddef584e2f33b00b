/**
 * {@link GitHistory} over the `git` program, for the Node hosts.
 *
 * Every git run is one `execFile` with an argument array (never a shell), a timeout and
 * the caller's abort signal; a timed-out or cancelled call is answered at once, whether or
 * not the process has gone yet, so nothing here can hang the oracle. Output is parsed from
 * `--format` records delimited by the ASCII record and unit separators, which no commit
 * field contains in practice, instead of from human-readable text.
 *
 * The workspace root may be a subdirectory of the work tree (one package of a monorepo):
 * git runs in the root, so pathspecs given workspace-relative resolve as they should, and
 * the repository-relative names git prints are translated back, files outside the
 * workspace dropped. Message searches are limited to commits that touched the workspace.
 *
 * Injection: paths always follow `--` and are literal (`:(literal)`: no globs, no magic),
 * search terms are one `--grep=<term>` argument each and fixed strings (`--fixed-strings`),
 * and commit names are checked to be hexadecimal.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { cancelledError, raceAbort } from '../core/abort';
import { VltError, errorMessage } from '../core/errors';
import { normalizeWorkspacePath, type BlameLine, type GitCommit, type GitHistory, type GitLogOptions } from '../core/oracle/git-retriever';
import { silentLogger, type Logger } from '../core/ports';

/** Per-call upper bound; `git log` over a long history with a rare `--grep` is the slow case. */
export const DEFAULT_GIT_TIMEOUT_MS = 10_000;

export interface NodeGitHistoryOptions {
  /** Upper bound for one git call, in ms. */
  timeoutMs?: number;
  logger?: Logger;
  /** The git program; `git` on PATH by default. */
  command?: string;
}

/** Output bigger than this is an error rather than memory use without bound. */
const MAX_BUFFER = 32 * 1024 * 1024;
/** Changed files kept per commit: a commit touching more is a sweep, and its list says little. */
const MAX_FILES_PER_COMMIT = 20;
/** The longest search term passed to git. */
const MAX_TERM_CHARS = 200;
/** The record and unit separators `LOG_FORMAT` prints (`%x1e`, `%x1f`). */
const RS = '\x1e';
const US = '\x1f';
/** hash, short hash, author, author date (strict ISO), subject, body — then `--name-only`'s list. */
const LOG_FORMAT = '--format=%x1e%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1f%b%x1f';
const HEX_RE = /^[0-9a-f]{4,64}$/i;
const ZERO_HASH_RE = /^0+$/;

/**
 * Options for every call: no pager, raw UTF-8 names, pathspecs taken literally, and the user
 * configuration that would change the output's shape turned off.
 */
const GLOBAL_ARGS = [
  '--no-pager',
  '-c',
  'core.quotepath=off',
  '-c',
  'color.ui=false',
  '-c',
  'log.showSignature=false',
  '-c',
  'diff.relative=false',
];

type Probe = { ok: true; prefix: string; abbrev: number } | { ok: false; reason: string; final: boolean };

/** A failed git run, before it becomes a VltError. */
class GitRunError extends Error {
  constructor(
    message: string,
    readonly kind: 'missing' | 'timeout' | 'cancelled' | 'exit' | 'spawn',
    readonly stderr = '',
  ) {
    super(message);
  }
}

export class NodeGitHistory implements GitHistory {
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  private readonly command: string;
  private probe: Promise<Probe> | undefined;

  constructor(
    readonly root: string,
    opts: NodeGitHistoryOptions = {},
  ) {
    this.timeoutMs = Math.max(1, Math.round(opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS));
    this.logger = opts.logger ?? silentLogger;
    this.command = opts.command ?? 'git';
  }

  async available(): Promise<true | string> {
    const p = await this.repo();
    return p.ok ? true : p.reason;
  }

  async log(opts: GitLogOptions): Promise<GitCommit[]> {
    const { signal } = opts;
    const limit = Math.floor(opts.limit);
    const paths = (opts.paths ?? []).map((p) => this.checkPath(p));
    const terms = (opts.grep ?? []).map((t) => t.replace(/[\x00-\x1f]+/g, ' ').trim().slice(0, MAX_TERM_CHARS)).filter((t) => t !== '');
    // Asked for terms that are all empty: nothing can match them (an empty --grep matches all).
    if (limit <= 0 || (opts.grep !== undefined && opts.grep.length > 0 && terms.length === 0)) return [];
    const repo = await this.ready(signal);
    const select = ['-n', String(limit)];
    if (terms.length > 0) select.push('--regexp-ignore-case', '--fixed-strings', ...terms.map((t) => `--grep=${t}`));
    const pathspecs = paths.length > 0 ? paths.map(literal) : repo.prefix !== '' ? ['.'] : [];
    if (paths.length === 1) {
      // A single file is followed across renames. git cannot follow and list every changed
      // file (`--full-diff`) at once, so the commits are found first and then read in full.
      const found = await this.run(['log', '--format=%H', '--follow', ...select, '--', ...pathspecs], 'log', signal);
      return this.show(
        found.split('\n').filter((h) => HEX_RE.test(h)),
        repo,
        signal,
      );
    }
    // `--full-diff`: the changed files of a selected commit are all of them, not only the
    // files that matched the paths.
    const out = await this.run(['log', LOG_FORMAT, '--name-only', '--full-diff', ...select, '--', ...pathspecs], 'log', signal);
    return this.parseLog(out, repo);
  }

  /** Full commits by exact name, in the order given. */
  private async show(hashes: string[], repo: { prefix: string }, signal: AbortSignal | undefined): Promise<GitCommit[]> {
    if (hashes.length === 0) return [];
    return this.parseLog(await this.run(['log', LOG_FORMAT, '--name-only', '--no-walk=unsorted', ...hashes, '--'], 'log', signal), repo);
  }

  async commits(hashes: string[], signal?: AbortSignal): Promise<GitCommit[]> {
    const names = [...new Set(hashes.filter((h) => HEX_RE.test(h) && !ZERO_HASH_RE.test(h)))];
    if (names.length === 0) return [];
    const repo = await this.ready(signal);
    const show = (list: string[]) => this.show(list, repo, signal);
    try {
      return await show(names);
    } catch (e) {
      if (!(e instanceof VltError) || e.code === 'CANCELLED' || names.length === 1) throw e;
    }
    // One unknown name fails the whole call; asked one by one, only it is left out.
    const out: GitCommit[] = [];
    for (const name of names) {
      try {
        out.push(...(await show([name])));
      } catch (e) {
        if (e instanceof VltError && e.code === 'CANCELLED') throw e;
      }
    }
    return out;
  }

  async blame(path: string, startLine: number, endLine: number, signal?: AbortSignal): Promise<BlameLine[]> {
    const file = this.checkPath(path);
    const start = Math.max(1, Math.floor(startLine));
    const end = Math.max(start, Math.floor(endLine));
    const repo = await this.ready(signal);
    const blameRange = (a: number, b: number) => this.run(['blame', '--porcelain', '-L', `${a},${b}`, '--', file], 'blame', signal);
    let out: string;
    try {
      out = await blameRange(start, end);
    } catch (e) {
      // The range comes from the index, and the file may have shrunk since: blame what is left.
      const lines = e instanceof VltError ? /has only (\d+) lines?/.exec(e.message) : null;
      const total = lines ? Number(lines[1]) : 0;
      if (total < start) throw e;
      out = await blameRange(start, total);
    }
    return parseBlame(out, repo.abbrev);
  }

  /** The probe result once known; a timed-out probe is tried again by the next call. */
  private repo(): Promise<Probe> {
    if (!this.probe) {
      const p = this.runProbe();
      this.probe = p;
      const forget = (): void => {
        if (this.probe === p) this.probe = undefined;
      };
      p.then((r) => (!r.ok && !r.final ? forget() : undefined), forget);
    }
    return this.probe;
  }

  /** The repository facts, or a VltError saying why there is no history to read. */
  private async ready(signal: AbortSignal | undefined): Promise<Extract<Probe, { ok: true }>> {
    if (signal?.aborted) throw cancelled(signal.reason);
    const p = await raceAbort(this.repo(), signal, 'git history lookup');
    if (!p.ok) throw new VltError('IO', `git history is unavailable: ${p.reason}`, { root: this.root });
    return p;
  }

  private async runProbe(): Promise<Probe> {
    try {
      const st = await stat(this.root);
      if (!st.isDirectory()) return { ok: false, reason: `${this.root} is not a directory`, final: true };
    } catch {
      return { ok: false, reason: `${this.root} does not exist`, final: true };
    }
    let lines: string[];
    try {
      lines = (await this.exec(['rev-parse', '--show-toplevel', '--show-prefix'])).split('\n');
    } catch (e) {
      const err = e instanceof GitRunError ? e : new GitRunError(String(e), 'spawn');
      if (err.kind === 'missing') return { ok: false, reason: `git is not installed (no "${this.command}" program found)`, final: true };
      if (err.kind === 'exit') return { ok: false, reason: `${this.root} is not in a git work tree (${firstLine(err.stderr) || err.message})`, final: true };
      return { ok: false, reason: err.message, final: false };
    }
    const prefix = (lines[1] ?? '').trim();
    let abbrev = 7;
    try {
      abbrev = (await this.exec(['rev-parse', '--short', '--verify', '--quiet', 'HEAD^{commit}'])).trim().length || abbrev;
    } catch (e) {
      if (e instanceof GitRunError && e.kind === 'exit') return { ok: false, reason: `the git repository at ${lines[0]?.trim() ?? this.root} has no commits yet`, final: false };
      return { ok: false, reason: errorMessage(e), final: false };
    }
    return { ok: true, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`, abbrev };
  }

  /** A workspace-relative path, checked: git must never see one leaving the workspace. */
  private checkPath(p: string): string {
    const n = normalizeWorkspacePath(p);
    if (n === undefined) throw new VltError('PATH_OUTSIDE_WORKSPACE', `not a workspace-relative path: ${JSON.stringify(p)}`, { path: p });
    if (n.includes('\0')) throw new VltError('IO', `invalid path: ${JSON.stringify(p)}`, { path: p });
    return n;
  }

  /** Runs git and turns every failure into a VltError naming the command and the workspace. */
  private async run(args: string[], what: string, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await this.exec(args, signal);
    } catch (e) {
      if (!(e instanceof GitRunError)) throw e;
      if (e.kind === 'cancelled') throw cancelled(signal?.reason);
      const detail = e.kind === 'exit' ? firstLine(e.stderr) || e.message : e.message;
      throw new VltError('IO', `git ${what} failed in ${this.root}: ${detail}`, { root: this.root, command: what });
    }
  }

  /** One git process; settles on the first of: its exit, the timeout, the abort. */
  private exec(args: string[], signal?: AbortSignal): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new GitRunError('cancelled', 'cancelled'));
        return;
      }
      const t0 = performance.now();
      const kill = new AbortController();
      let done = false;
      const finish = (err: GitRunError | undefined, out = ''): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        // Whatever is still running is of no use now; execFile kills it on abort.
        kill.abort();
        this.logger.debug(`git ${args[0] ?? ''}: ${err ? err.kind : 'ok'} in ${(performance.now() - t0).toFixed(1)} ms`);
        if (err) reject(err);
        else resolve(out);
      };
      const onAbort = (): void => finish(new GitRunError('cancelled', 'cancelled'));
      const timer = setTimeout(() => finish(new GitRunError(`git did not answer within ${this.timeoutMs} ms`, 'timeout')), this.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const child = execFile(
          this.command,
          [...GLOBAL_ARGS, ...args],
          { cwd: this.root, env: gitEnv(), maxBuffer: MAX_BUFFER, signal: kill.signal, windowsHide: true, encoding: 'utf8' },
          (err: ExecFileException | null, stdout: string, stderr: string) => {
            if (!err) return finish(undefined, stdout);
            if (err.code === 'ENOENT') return finish(new GitRunError(`the "${this.command}" program was not found`, 'missing'));
            if (err.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return finish(new GitRunError(`git printed more than ${MAX_BUFFER} bytes`, 'spawn'));
            if (typeof err.code === 'number') return finish(new GitRunError(`git exited with ${err.code}`, 'exit', stderr));
            finish(new GitRunError(err.message, 'spawn', stderr));
          },
        );
        // Nothing is ever written to git; an open stdin could only make it wait.
        child.stdin?.end();
        child.on('error', () => undefined);
      } catch (e) {
        // execFile throws synchronously on arguments it cannot pass (a NUL byte).
        finish(new GitRunError(errorMessage(e), 'spawn'));
      }
    });
  }

  private parseLog(out: string, repo: { prefix: string }): GitCommit[] {
    const commits: GitCommit[] = [];
    for (const record of out.split(RS)) {
      if (record.trim() === '') continue;
      const fields: string[] = [];
      let at = 0;
      // Five fields up to the subject; the body runs to the last separator (it may contain
      // anything), and the changed files follow it.
      for (let i = 0; i < 5; i++) {
        const next = record.indexOf(US, at);
        if (next < 0) break;
        fields.push(record.slice(at, next));
        at = next + 1;
      }
      const last = record.lastIndexOf(US);
      if (fields.length < 5 || last < at) continue;
      const [hash = '', shortHash = '', author = '', date = '', subject = ''] = fields;
      const body = record.slice(at, Math.max(at, last));
      const files: string[] = [];
      for (const line of record.slice(last + 1).split('\n')) {
        if (line === '') continue;
        const local = toWorkspace(unquoteC(line), repo.prefix);
        if (local !== undefined && !files.includes(local) && files.length < MAX_FILES_PER_COMMIT) files.push(local);
      }
      commits.push({ hash, shortHash, author, date, subject, body: body.trim(), files });
    }
    return commits;
  }
}

/** The environment git runs in: no prompts, no optional locks, English messages, and none of the variables a git hook would leak that point git at another repository. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', GIT_PAGER: 'cat', LC_MESSAGES: 'C' };
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_PREFIX', 'GIT_COMMON_DIR', 'LANGUAGE']) delete env[k];
  // LC_ALL would override LC_MESSAGES; keep its character set, drop its language.
  if (env.LC_ALL) {
    env.LC_CTYPE = env.LC_ALL;
    delete env.LC_ALL;
  }
  return env;
}

/**
 * A pathspec that matches exactly this path: no globs, no `:(magic)` of its own. (Not the
 * global `--literal-pathspecs`: git 2.39 refuses `--follow` with it.)
 */
function literal(path: string): string {
  return `:(literal)${path}`;
}

/** A repository-relative name as a workspace-relative one, or undefined when outside the workspace. */
function toWorkspace(repoPath: string, prefix: string): string | undefined {
  if (prefix === '') return repoPath;
  return repoPath.startsWith(prefix) ? repoPath.slice(prefix.length) : undefined;
}

/** Undoes git's C-style quoting of unusual file names (`"a\tb"`, octal-escaped bytes). */
export function unquoteC(s: string): string {
  if (s.length < 2 || !s.startsWith('"') || !s.endsWith('"')) return s;
  const bytes: number[] = [];
  const inner = s.slice(1, -1);
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = inner[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(inner.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else if (next in simple) {
      bytes.push(simple[next]!);
      i += 1;
    } else {
      bytes.push(92);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `git blame --porcelain` output as one entry per committed line. */
export function parseBlame(out: string, abbrev = 7): BlameLine[] {
  const info = new Map<string, { author: string; time: number; tz: string; summary: string }>();
  const rows: Array<{ hash: string; line: number }> = [];
  let current: { author: string; time: number; tz: string; summary: string } | undefined;
  for (const line of out.split('\n')) {
    if (line.startsWith('\t')) continue;
    const header = /^([0-9a-f]{40,64}) \d+ (\d+)(?: \d+)?$/.exec(line);
    if (header) {
      const hash = header[1]!;
      rows.push({ hash, line: Number(header[2]) });
      current = info.get(hash);
      if (!current) {
        current = { author: '', time: 0, tz: '+0000', summary: '' };
        info.set(hash, current);
      }
      continue;
    }
    if (!current) continue;
    const sp = line.indexOf(' ');
    const key = sp < 0 ? line : line.slice(0, sp);
    const value = sp < 0 ? '' : line.slice(sp + 1);
    if (key === 'author') current.author = value;
    else if (key === 'author-time') current.time = Number(value);
    else if (key === 'author-tz') current.tz = value;
    else if (key === 'summary') current.summary = value;
  }
  const out2: BlameLine[] = [];
  for (const r of rows) {
    // Lines changed in the working tree carry the all-zero name: no commit to cite.
    if (ZERO_HASH_RE.test(r.hash)) continue;
    const c = info.get(r.hash)!;
    out2.push({ line: r.line, hash: r.hash, shortHash: r.hash.slice(0, abbrev), author: c.author, date: isoDate(c.time, c.tz), summary: c.summary });
  }
  return out2.sort((a, b) => a.line - b.line);
}

/** Unix seconds and a `+hhmm` offset as ISO 8601 in that offset, as `%aI` prints it. */
function isoDate(seconds: number, tz: string): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(tz);
  const sign = m?.[1] === '-' ? -1 : 1;
  const offsetMin = m ? sign * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = new Date((seconds + offsetMin * 60) * 1000).toISOString().slice(0, 19);
  const abs = Math.abs(offsetMin);
  const off = offsetMin === 0 ? '+00:00' : `${offsetMin < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${local}${off}`;
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? ''
  );
}

function cancelled(cause?: unknown): VltError {
  return cancelledError('git history lookup', cause);
}

