/**
 * Git history as evidence for "why / when / who changed this" questions.
 *
 * The engine does not run programs: the host supplies the narrow {@link GitHistory} port
 * (`src/node/git-history.ts` runs the `git` program; tests may fake it). {@link GitRetriever} turns
 * what the port finds into commits as {@link RetrievalResult}s, by three methods run in
 * parallel:
 *
 * - `git-blame`: the commits that last touched the line range the question asks about (a
 *   named `path:line`, or the line range of the best code hit);
 * - `git-log`: the recent commits of the files the question names, then of the files the
 *   first retrieval phase found;
 * - `git-grep`: commits whose message mentions the question's symbols or salient terms.
 *
 * A commit found by several methods is one result (`key: git:<shortHash>`) whose methods and
 * scores add up: agreement between independent methods is the best signal there is.
 */
import { posix } from 'node:path';
import { raceAbort } from '../abort';
import { VltError, toVltError } from '../errors';
import type { AnalyzedQuestion, RetrievalRequest, RetrievalResult, Retriever } from './types';

/** One commit, as {@link GitHistory.log} returns it. */
export interface GitCommit {
  /** The full object name. */
  hash: string;
  /** The abbreviated name git itself would print (unique in the repository). */
  shortHash: string;
  author: string;
  /** Author date, ISO 8601 with the author's offset (`2024-03-01T10:00:00+01:00`). */
  date: string;
  subject: string;
  body: string;
  /** Workspace-relative paths the commit changed (files outside the workspace left out), at most ~20. */
  files: string[];
}

/** One line of `git blame`: the commit that last changed it. */
export interface BlameLine {
  /** 1-based line number in the working-tree file. */
  line: number;
  hash: string;
  shortHash: string;
  author: string;
  /** Author date, ISO 8601. */
  date: string;
  /** The commit's subject line. */
  summary: string;
}

/** What {@link GitHistory.log} selects. */
export interface GitLogOptions {
  /**
   * Workspace-relative paths: only commits that touched one of them. A single path is
   * followed across renames.
   */
  paths?: string[];
  /**
   * Fixed strings (not patterns), matched case-insensitively against the commit message; a
   * commit matching any of them is selected. With `paths` too, a commit must satisfy both.
   */
  grep?: string[];
  /** At most this many commits. */
  limit: number;
  signal?: AbortSignal;
}

/**
 * Read-only access to the workspace's git history, supplied by the host. Paths in and out
 * are workspace-relative with `/` separators. Failures are VltErrors (`IO`, or `CANCELLED`
 * when `signal` aborts); nothing here may hang past the implementation's timeout.
 */
export interface GitHistory {
  /** Commits, newest first. */
  log(opts: GitLogOptions): Promise<GitCommit[]>;
  /** The commit that last changed each line of `startLine..endLine` (1-based, inclusive) of the working-tree file. Uncommitted lines are left out. */
  blame(path: string, startLine: number, endLine: number, signal?: AbortSignal): Promise<BlameLine[]>;
  /** `true`, or why history cannot be read (not a git work tree, git not installed, no commits yet). */
  available(): Promise<true | string>;
  /**
   * The full commits with these (full or abbreviated) names, in the order given; unknown names
   * are left out. Optional: without it a blamed commit that no log found is shown with its
   * subject only.
   */
  commits?(hashes: string[], signal?: AbortSignal): Promise<GitCommit[]>;
}

/** A code location the first retrieval phase found, best first. */
export interface GitFileHint {
  path: string;
  startLine?: number;
  endLine?: number;
}

export interface GitRetrieverOptions {
  git: GitHistory;
  /** The best code locations for the question (supplied by the Oracle), so that history is read for the files that matter. */
  files?: (q: AnalyzedQuestion, signal: AbortSignal) => Promise<GitFileHint[]>;
}

// Scores. The methods differ in how directly they answer a history question, and the
// weights encode exactly that order; within a method, a quality in (0, 1] scales the weight.
// A commit found by several methods gets the sum, so agreement can lift e.g. a file-log hit
// whose message also matches the question above a lone blame hit.

/** The commit that last touched the very lines asked about is the most direct answer to "why is this line like this". */
export const GIT_WEIGHT_BLAME = 1.0;
/**
 * The commits that shaped the best code hit's lines (no line was asked about): they made the
 * relevant code, but the original author of a function says less about "why did it change"
 * than the change's own message.
 */
export const GIT_WEIGHT_BLAME_FOUND = 0.6;
/** A commit of a file the question names: on topic by construction, but not necessarily about the asked part. */
export const GIT_WEIGHT_LOG_NAMED = 0.8;
/** A message that mentions the question's words: often the explanation itself, but common words match unrelated commits. */
export const GIT_WEIGHT_GREP = 0.6;
/** A commit of a file the search found: the file is only probably the one meant. */
export const GIT_WEIGHT_LOG_FOUND = 0.5;
/** How fast a log hit's quality falls with its age rank in the file's history (newest first): rank 5 keeps ~0.6. */
const LOG_RANK_DECAY = 0.15;
/** How fast a found file's weight falls with its rank among the found files. */
const FOUND_FILE_DECAY = 0.25;

/** Named files whose log is read. */
const MAX_NAMED_FILES = 3;
/** Found files whose log is read. */
const MAX_FOUND_FILES = 3;
/** Commits read per file: the recent history says why a file is as it is; older history rarely does. */
const PER_FILE_LIMIT = 6;
/** Terms given to `git log --grep`: beyond a few, OR-ed terms match nearly every commit. */
const MAX_GREP_TERMS = 4;
/** Lines blamed around a named line: the asked line and its immediate neighbours. */
const BLAME_WINDOW = 2;
/** The longest range blamed; a whole big file's blame is slow and says little. */
const MAX_BLAME_LINES = 80;
/** Characters of a commit body kept in the evidence: the explanation is nearly always at the top. */
const MAX_BODY_CHARS = 600;
/** Changed files listed in the evidence text. */
const MAX_LISTED_FILES = 8;

/**
 * Words that a history question uses for its form, not its subject: grepping commit messages
 * for "changed" or "why" matches everything.
 */
const HISTORY_WORDS =
  /^(?:chang(?:e|ed|es|ing)|add(?:ed|s|ing)?|remov(?:e|ed|es|ing)|introduc(?:e|ed|es|ing)|modif(?:y|ied|ies|ying)|refactor(?:ed|s|ing)?|renam(?:e|ed|es|ing)|deprecat(?:e|ed|es|ing)|rewr(?:ite|ites|ote|itten|iting)|revert(?:ed|s|ing)?|switch(?:ed|es|ing)?|mov(?:e|ed|es|ing)|delet(?:e|ed|es|ing)|wr(?:ote|itten|ite|ites)|updat(?:e|ed|es|ing)|commits?|history|blame|git|last|first|recent(?:ly)?|lines?|files?|reason|why|when|who|ago)$/i;

type Method = 'git-blame' | 'git-log' | 'git-grep';
/** The order methods are listed in a merged result's `method`. */
const METHOD_ORDER: readonly Method[] = ['git-blame', 'git-log', 'git-grep'];

interface Found {
  commit: GitCommit;
  /** The best score per method. */
  scores: Map<Method, number>;
  /** The file the evidence is about: the blamed file, or the file whose log found it. */
  path?: string;
  /** Lines of the blamed file the commit last touched. */
  lines?: number[];
  blamedPath?: string;
}

/** Commit history for history questions: blame of the asked lines, logs of the relevant files, and message search. */
export class GitRetriever implements Retriever {
  readonly name = 'git';
  readonly family = 'git';

  constructor(private readonly opts: GitRetrieverOptions) {}

  applies(q: AnalyzedQuestion): true | string {
    return q.type === 'history' ? true : 'only for history questions';
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const { question: q, signal } = req;
    const limit = Math.max(0, Math.floor(req.limit));
    throwIfAborted(signal);
    if (limit === 0) return [];
    const git = this.opts.git;
    const ok = await raceAbort(git.available(), signal, 'git history lookup');
    if (ok !== true) throw new VltError('IO', `git history is unavailable: ${ok}`);

    const named = uniquePaths(q.paths.map((p) => ({ path: p.path, ...(p.line !== undefined ? { startLine: p.line } : {}) }))).slice(0, MAX_NAMED_FILES);
    const hints = await this.hints(q, signal);
    const namedSet = new Set(named.map((f) => f.path));
    const found = uniquePaths(hints)
      .filter((f) => !namedSet.has(f.path))
      .slice(0, MAX_FOUND_FILES);
    const terms = grepTerms(q);
    const blameTarget = pickBlameTarget(named, found);

    const byHash = new Map<string, Found>();
    const add = (commit: GitCommit, method: Method, score: number, path: string | undefined): Found => {
      let f = byHash.get(commit.hash);
      if (!f) {
        f = { commit, scores: new Map() };
        byHash.set(commit.hash, f);
      }
      f.scores.set(method, Math.max(f.scores.get(method) ?? 0, score));
      if (f.path === undefined && path !== undefined) f.path = path;
      return f;
    };

    const perFile = Math.min(limit, PER_FILE_LIMIT);
    const tasks: Array<Promise<void>> = [];
    const logFile = (path: string, weight: number) =>
      git.log({ paths: [path], limit: perFile, signal }).then((commits) => {
        commits.forEach((c, rank) => add(c, 'git-log', weight / (1 + LOG_RANK_DECAY * rank), path));
      });
    for (const f of named) tasks.push(logFile(f.path, GIT_WEIGHT_LOG_NAMED));
    found.forEach((f, i) => tasks.push(logFile(f.path, GIT_WEIGHT_LOG_FOUND / (1 + FOUND_FILE_DECAY * i))));
    if (terms.length > 0) {
      tasks.push(
        git.log({ grep: terms, limit, signal }).then((commits) => {
          for (const c of commits) {
            const message = `${c.subject}\n${c.body}`.toLowerCase();
            const matched = terms.filter((t) => message.includes(t.toLowerCase())).length;
            // git may match where a plain substring test does not (e.g. across its own
            // case-folding); such a commit still matched one term.
            const share = Math.max(1, matched) / terms.length;
            add(c, 'git-grep', GIT_WEIGHT_GREP * share, relevantFile(c, q, [...namedSet, ...found.map((x) => x.path)]));
          }
        }),
      );
    }
    let blameLines: BlameLine[] = [];
    if (blameTarget) {
      tasks.push(
        git.blame(blameTarget.path, blameTarget.start, blameTarget.end, signal).then((lines) => {
          blameLines = lines;
        }),
      );
    }

    const settled = await raceAbort(Promise.allSettled(tasks), signal, 'git history lookup');
    throwIfAborted(signal);
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [toVltError(s.reason, 'IO')] : []));
    const cancelled = failures.find((e) => e.code === 'CANCELLED');
    if (cancelled) throw cancelled;
    // One method failing (a file not in git yet, a line range past the end of a file edited
    // since) leaves the others' evidence; only when every method failed is that the answer.
    if (failures.length > 0 && failures.length === tasks.length) throw failures[0]!;

    if (blameTarget && blameLines.length > 0) {
      await this.addBlame(blameLines, blameTarget, byHash, add, signal);
    }

    const results = [...byHash.values()].map((f) => toResult(f));
    results.sort((a, b) => b.score - a.score || String(b.metadata.date).localeCompare(String(a.metadata.date)));
    return results.slice(0, limit);
  }

  /** The found code locations; a failing callback costs only their history, not the path. */
  private async hints(q: AnalyzedQuestion, signal: AbortSignal): Promise<GitFileHint[]> {
    if (!this.opts.files) return [];
    try {
      return await raceAbort(this.opts.files(q, signal), signal, 'git history lookup');
    } catch (e) {
      const err = toVltError(e);
      if (err.code === 'CANCELLED' || signal.aborted) throw err;
      return [];
    }
  }

  /** Turns blamed lines into one hit per commit, completing commits no log found. */
  private async addBlame(
    lines: BlameLine[],
    target: BlameTarget,
    byHash: Map<string, Found>,
    add: (c: GitCommit, m: Method, s: number, p: string | undefined) => Found,
    signal: AbortSignal,
  ): Promise<void> {
    const perCommit = new Map<string, BlameLine[]>();
    for (const l of lines) {
      const list = perCommit.get(l.hash);
      if (list) list.push(l);
      else perCommit.set(l.hash, [l]);
    }
    const missing = [...perCommit.keys()].filter((h) => !byHash.has(h));
    const completed = new Map<string, GitCommit>();
    if (missing.length > 0 && this.opts.git.commits) {
      try {
        for (const c of await raceAbort(this.opts.git.commits(missing, signal), signal, 'git history lookup')) completed.set(c.hash, c);
      } catch (e) {
        const err = toVltError(e, 'IO');
        if (err.code === 'CANCELLED') throw err;
        // The subjects from blame still say something; the bodies are a bonus.
      }
    }
    for (const [hash, touched] of perCommit) {
      const first = touched[0]!;
      const known = byHash.get(hash)?.commit ?? completed.get(hash);
      const commit: GitCommit = known ?? { hash, shortHash: first.shortHash, author: first.author, date: first.date, subject: first.summary, body: '', files: [target.path] };
      const share = touched.length / lines.length;
      // With a named line, the commit of that very line is the answer and its neighbours are
      // context; over a found range, the more lines a commit shaped, the more it matters.
      const score =
        target.asked !== undefined
          ? GIT_WEIGHT_BLAME * (touched.some((l) => l.line === target.asked) ? 1 : 0.5 + 0.4 * share)
          : GIT_WEIGHT_BLAME_FOUND * (0.5 + 0.5 * share);
      const f = add(commit, 'git-blame', score, target.path);
      f.path = target.path;
      f.blamedPath = target.path;
      f.lines = touched.map((l) => l.line).sort((a, b) => a - b);
    }
  }
}

interface BlameTarget {
  path: string;
  start: number;
  end: number;
  /** The line the question names, when it names one. */
  asked?: number;
}

/** The range to blame: a named `path:line` first, else the best found location with a line range. */
function pickBlameTarget(named: GitFileHint[], found: GitFileHint[]): BlameTarget | undefined {
  const withLine = named.find((f) => f.startLine !== undefined);
  if (withLine?.startLine !== undefined) {
    const line = Math.max(1, Math.floor(withLine.startLine));
    return { path: withLine.path, start: Math.max(1, line - BLAME_WINDOW), end: line + BLAME_WINDOW, asked: line };
  }
  const top = found[0];
  if (top?.startLine !== undefined) {
    const start = Math.max(1, Math.floor(top.startLine));
    const end = Math.max(start, Math.floor(top.endLine ?? start));
    return { path: top.path, start, end: Math.min(end, start + MAX_BLAME_LINES - 1) };
  }
  return undefined;
}

/** Paths normalised (`./a/../b` → `b`), first occurrence kept, unusable ones dropped. */
function uniquePaths(files: readonly GitFileHint[]): GitFileHint[] {
  const seen = new Set<string>();
  const out: GitFileHint[] = [];
  for (const f of files) {
    const path = normalizeWorkspacePath(f.path);
    if (path === undefined || seen.has(path)) continue;
    seen.add(path);
    out.push({ ...f, path });
  }
  return out;
}

/**
 * A workspace-relative `/` path in canonical form, or undefined for one that is empty or
 * leaves the workspace (absolute, or `..` above the root): history is only read inside it.
 */
export function normalizeWorkspacePath(p: string): string | undefined {
  const trimmed = p.trim();
  if (trimmed === '' || posix.isAbsolute(trimmed) || /^[A-Za-z]:[\\/]/.test(trimmed)) return undefined;
  const n = posix.normalize(trimmed);
  if (n === '.' || n === '..' || n.startsWith('../')) return undefined;
  return n.replace(/\/+$/, '');
}

/**
 * The question's symbols, then its salient terms (longest first: a long word is a specific
 * one), without the words every history question uses.
 */
export function grepTerms(q: AnalyzedQuestion): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const push = (t: string): void => {
    const term = t.replace(/[\r\n]+/g, ' ').trim();
    const k = term.toLowerCase();
    if (term.length < 3 || seen.has(k) || out.length >= MAX_GREP_TERMS) return;
    seen.add(k);
    out.push(term);
  };
  for (const s of q.symbols) push(s.replace(/\(\)$/, ''));
  const terms = q.terms.filter((t) => !HISTORY_WORDS.test(t) && !/^\d+$/.test(t));
  const byLength = terms.map((t, i) => ({ t, i })).sort((a, b) => b.t.length - a.t.length || a.i - b.i);
  for (const { t } of byLength) push(t);
  return out;
}

/** The commit's first changed file that the question is about, else its first changed file. */
function relevantFile(c: GitCommit, q: AnalyzedQuestion, relevant: readonly string[]): string | undefined {
  const set = new Set(relevant);
  const direct = c.files.find((f) => set.has(f));
  if (direct) return direct;
  const words = [...q.symbols, ...q.terms].map((w) => w.toLowerCase()).filter((w) => w.length >= 3);
  const named = c.files.find((f) => words.some((w) => f.toLowerCase().includes(w)));
  return named ?? c.files[0];
}

function toResult(f: Found): RetrievalResult {
  const c = f.commit;
  const methods = METHOD_ORDER.filter((m) => f.scores.has(m));
  const score = [...f.scores.values()].reduce((a, b) => a + b, 0);
  const day = c.date.slice(0, 10);
  let body = c.body.trim();
  if (body.length > MAX_BODY_CHARS) body = `${body.slice(0, MAX_BODY_CHARS).trimEnd()}…`;
  const listed = c.files.slice(0, MAX_LISTED_FILES);
  const more = c.files.length > listed.length ? ` (+${c.files.length - listed.length} more)` : '';
  const parts = [`${c.shortHash} ${day} ${c.author}: ${c.subject}`];
  if (body) parts.push(body);
  if (listed.length) parts.push(`files: ${listed.join(', ')}${more}`);
  if (f.blamedPath && f.lines?.length) parts.push(`last changed lines: ${f.blamedPath}:${compactLines(f.lines)}`);
  const metadata: Record<string, unknown> = { hash: c.hash, author: c.author, date: c.date, files: c.files, methods };
  if (f.lines) metadata.lines = f.lines;
  return {
    key: `git:${c.shortHash}`,
    source: 'git',
    path: f.path ?? c.files[0] ?? '',
    content: parts.join('\n'),
    score,
    method: methods.join('+'),
    citation: `[commit:${c.shortHash}]`,
    metadata,
  };
}

/** `[3,4,5,9]` → `3-5, 9`. */
function compactLines(lines: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const start = lines[i]!;
    let end = start;
    while (i + 1 < lines.length && lines[i + 1] === end + 1) end = lines[++i]!;
    out.push(end > start ? `${start}-${end}` : `${start}`);
    i++;
  }
  return out.join(', ');
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new VltError('CANCELLED', 'git history lookup cancelled', undefined, { cause: signal.reason });
}

