/**
 * `vlt eval history`: file localization measured on the repository's own history.
 *
 * A fix-like commit is a bug report with its answer: the message is the query, the source files
 * it changed are the gold, and the parent commit's tree is the corpus the answer must be found
 * in. This file holds the definitions (which commits count, how they are sampled, what Acc@k and
 * MRR mean) and the runner that moves one scratch tree from parent to parent, indexes only what
 * changed between them, and ranks files with each method in the same run. The git side is a
 * port ({@link HistoryRepo}) that a host supplies.
 */
import { createHash } from 'node:crypto';
import type { Engine } from '../engine';
import { cancelledError } from '../abort';
import { isTestPath } from '../intel/repomap-rank';
import { locatorFor, type LocatedFile, type PastChange } from '../locate/locate';
import { Oracle } from '../oracle/oracle';
import { languageForPath } from '../parse/languages';
import type { ProgressSink } from '../ports';

export interface HistoryCommit {
  sha: string;
  parent: string;
  /** Commit time, Unix seconds. */
  time: number;
  subject: string;
  body: string;
  /** Name-status of the change against the parent: `M`, `A`, `D` or `R` with its new path. */
  files: Array<{ status: string; path: string }>;
}

export interface HistoryInstance {
  sha: string;
  parent: string;
  time: number;
  query: string;
  /** Source files the fix modified, as they are named in the parent's tree. */
  gold: string[];
  /** The message names a gold file (its base name, with or without extension). */
  namesGold: boolean;
}

export type EvalMethod = 'locate' | 'search' | 'bm25' | 'oracle';
/** The methods compared unless others are asked for. */
export const EVAL_METHODS: readonly EvalMethod[] = ['locate', 'search', 'bm25'];
/**
 * Every method: `oracle` is the oracle's extractive answer (`vlt oracle --no-llm`) to the message,
 * its cited code files in order; it also records whether the oracle declined ("no relevant
 * context"), which on a project's own commit messages is always wrong.
 */
export const ALL_EVAL_METHODS: readonly EvalMethod[] = [...EVAL_METHODS, 'oracle'];

export interface MethodMetrics {
  n: number;
  acc1: number;
  acc5: number;
  acc10: number;
  mrr: number;
}

export interface InstanceResult extends HistoryInstance {
  /** 1-based rank of the first gold file per method; 0 when not in the first {@link RANK_DEPTH}. */
  ranks: Record<EvalMethod, number>;
  /** The first files each method ranked. */
  top: Record<EvalMethod, string[]>;
  ms: Record<EvalMethod, number>;
  /** The locate mode's first files with each channel's share (for studying its weights). */
  locateDetail?: LocatedFile[];
  /** With the `oracle` method: the oracle declined, and why. */
  oracle?: { noContext: boolean; why?: string; type: string; paths: string[]; threshold?: Record<string, unknown> };
}

export interface HistoryEvalReport {
  instances: InstanceResult[];
  /** Candidates that passed the filters, before sampling. */
  candidates: number;
  overall: Record<EvalMethod, MethodMetrics>;
  /** The instances whose message names no gold file: the honest half of the test. */
  namesNoGold: Record<EvalMethod, MethodMetrics>;
  /** With the `oracle` method: how many messages the oracle declined as having no relevant context. */
  oracleNoContext?: { n: number; declined: number; rate: number };
  /** Instances not run because the time cap was reached. */
  skippedForTime: number;
  indexMs: number;
  ms: number;
}

/** Ranks deeper than this count as misses. */
export const RANK_DEPTH = 10;
/** Files of the locate mode kept per instance with `detail`. */
export const DETAIL_DEPTH = 40;
/** Words of a message that mark a fix (matched as whole words, case-insensitive). */
export const FIX_WORDS = /\b(?:fix|fixe[sd]|fixing|bug|bugs|crash(?:es|ed)?|wrong|incorrect|regression|broken|error|errors)\b/i;
/** A fix that changes more source files than this is a sweep, not a localized bug. */
export const MAX_GOLD_FILES = 5;
const MIN_QUERY_WORDS = 3;
/** Paths never gold: build output, vendored code, minified bundles. */
const NOT_SOURCE = /(?:^|\/)(?:dist|build|node_modules|vendor|third_party)\/|\.min\.js$|\.d\.ts$/;

/** A source file by the index's languages: code, not markdown, not a test, not build output. */
export function isSourceFile(path: string): boolean {
  const lang = languageForPath(path);
  return lang !== undefined && lang !== 'markdown' && !isTestPath(path) && !NOT_SOURCE.test(path);
}

/**
 * The query a commit message makes: subject and body without trailers (`Signed-off-by:`),
 * issue and pull-request references, or a list of co-authors. Those name people and numbers,
 * never the code.
 */
export function messageQuery(subject: string, body: string): string {
  const lines = `${subject}\n${body}`
    .split('\n')
    .filter((l) => !/^\s*(?:[A-Z][\w-]+-by|Co-authored-by|Signed-off-by|Change-Id|Reviewed-on|Cc|Fixes|Closes|Refs?)\s*:/i.test(l))
    .filter((l) => !/^\s*(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see)\s+(?:#|gh-|https?:\/\/)\S+\s*$/i.test(l))
    .map((l) => l.replace(/\(#\d+\)|#\d+\b|\bgh-\d+\b/gi, '').trimEnd());
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** Whether a message names one of the files: its base name, with or without the extension. */
export function namesAnyFile(query: string, files: readonly string[]): boolean {
  const q = query.toLowerCase();
  return files.some((f) => {
    const base = (f.split('/').pop() ?? f).toLowerCase();
    const stem = base.replace(/\.[^.]+$/, '');
    if (q.includes(base)) return true;
    // A stem like `index` or `utils` is a word in any message; only distinctive stems count.
    if (stem.length < 4 || ['index', 'init', '__init__', 'main', 'utils', 'util', 'types', 'core', 'base', 'common', 'helpers'].includes(stem)) return false;
    return new RegExp(`(?:^|[^a-z0-9_])${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|[^a-z0-9_])`).test(q);
  });
}

/** The commits that count as localized fixes, each with its query and gold. */
export function selectInstances(commits: readonly HistoryCommit[]): HistoryInstance[] {
  const out: HistoryInstance[] = [];
  for (const c of commits) {
    const message = `${c.subject}\n${c.body}`;
    if (!FIX_WORDS.test(message)) continue;
    const source = c.files.filter((f) => isSourceFile(f.path));
    if (source.length === 0 || source.length > MAX_GOLD_FILES) continue;
    // Only files the parent had can be found in it.
    const gold = [...new Set(source.filter((f) => f.status === 'M').map((f) => f.path))].sort();
    if (gold.length === 0) continue;
    const query = messageQuery(c.subject, c.body);
    if (query.split(/\s+/).filter(Boolean).length < MIN_QUERY_WORDS) continue;
    out.push({ sha: c.sha, parent: c.parent, time: c.time, query, gold, namesGold: namesAnyFile(query, gold) });
  }
  return out;
}

/**
 * A deterministic sample: the `max` instances whose commit hashes hash lowest, so a run picks
 * the same commits on every machine and a longer history adds instances without reshuffling
 * the others. Returned newest first, the order the runner walks the history in.
 */
export function sampleInstances(instances: readonly HistoryInstance[], max: number): HistoryInstance[] {
  const key = (sha: string) => createHash('sha256').update(sha).digest('hex');
  return [...instances]
    .map((i) => ({ i, k: key(i.sha) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .slice(0, max)
    .map((x) => x.i)
    .sort((a, b) => b.time - a.time || (a.sha < b.sha ? -1 : 1));
}

/** 1-based rank of the first gold file in a ranking (0: not within {@link RANK_DEPTH}). */
export function firstGoldRank(ranked: readonly string[], gold: readonly string[]): number {
  const g = new Set(gold);
  const i = ranked.slice(0, RANK_DEPTH).findIndex((p) => g.has(p));
  return i + 1;
}

export function metrics(ranks: readonly number[]): MethodMetrics {
  const n = ranks.length;
  const share = (k: number) => (n === 0 ? 0 : ranks.filter((r) => r > 0 && r <= k).length / n);
  const round = (x: number) => Number(x.toFixed(4));
  return {
    n,
    acc1: round(share(1)),
    acc5: round(share(5)),
    acc10: round(share(10)),
    mrr: round(n === 0 ? 0 : ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n),
  };
}

/** The git side of the eval: the history, and a scratch tree that can be moved to any commit. */
export interface HistoryRepo {
  /** Non-merge commits reachable from HEAD, newest first, with their name-status lists. */
  log(opts: { since?: string; maxCommits: number; signal?: AbortSignal }): Promise<HistoryCommit[]>;
  /**
   * Moves the scratch tree to a commit. Returns the paths that differ from where it was, or
   * undefined on the first move (everything is new).
   */
  checkout(sha: string): Promise<string[] | undefined>;
  /** The scratch tree's root: the workspace the runner indexes. */
  readonly scratchRoot: string;
  /** The commits reachable from `sha` (itself included), newest first, at most `max`. */
  ancestors(sha: string, max: number): Promise<Set<string>>;
}

/** Commits read from the log before filtering for fixes. */
export const LOG_DEPTH = 20_000;

/** Past commits the history channel may read for one instance: the parent's most recent ancestors. */
export const HISTORY_DEPTH = 5000;

export interface HistoryEvalOptions {
  max: number;
  since?: string;
  /** Stop starting instances after this many ms (the report says how many were left). */
  timeLimitMs: number;
  /** Commits read from the log before filtering. */
  maxCommits?: number;
  /** Replay these instances instead of selecting from the log (a frozen set). */
  instances?: readonly HistoryInstance[];
  methods?: readonly EvalMethod[];
  signal?: AbortSignal;
  onProgress?: ProgressSink;
  /** Keep the locate mode's first {@link DETAIL_DEPTH} files with their channel shares in each result. */
  detail?: boolean;
  /** false: locate without the history channel (an ablation). */
  history?: boolean;
  /** Opens the scratch tree's engine for writing, once. */
  openEngine(root: string): Promise<Engine>;
}

/** The log as the locate mode's past changes. */
export function toPastChanges(commits: readonly HistoryCommit[]): PastChange[] {
  return commits.map((c) => ({ id: c.sha, message: `${c.subject}\n${c.body}`, files: c.files.map((f) => f.path) }));
}

/** Files in a search answer, in the order of their first hit. */
function filesOfHits(hits: ReadonlyArray<{ path: string }>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of hits) {
    if (seen.has(h.path)) continue;
    seen.add(h.path);
    out.push(h.path);
  }
  return out;
}

// eslint-disable-next-line max-lines-per-function -- the eval's steps in order over one scratch tree (check out, index, locate, score), each commented; they share the tree and the running metrics
export async function runHistoryEval(repo: HistoryRepo, opts: HistoryEvalOptions): Promise<HistoryEvalReport> {
  const t0 = performance.now();
  const methods = opts.methods ?? EVAL_METHODS;
  let log: Promise<HistoryCommit[]> | undefined;
  const readLog = () => (log ??= repo.log({ maxCommits: opts.maxCommits ?? LOG_DEPTH, ...(opts.since ? { since: opts.since } : {}), ...(opts.signal ? { signal: opts.signal } : {}) }));
  let candidates: number;
  let chosen: HistoryInstance[];
  if (opts.instances) {
    candidates = opts.instances.length;
    chosen = sampleInstances(opts.instances, opts.max);
  } else {
    const all = selectInstances(await readLog());
    candidates = all.length;
    chosen = sampleInstances(all, opts.max);
  }
  // The history channel reads the log from HEAD once; each instance sees only its parent's ancestors.
  const past = opts.history === false ? undefined : toPastChanges(await readLog());
  const results: InstanceResult[] = [];
  let engine: Engine | undefined;
  let indexMs = 0;
  let skippedForTime = 0;
  try {
    for (const [i, inst] of chosen.entries()) {
      if (opts.signal?.aborted) throw cancelledError('the history eval', opts.signal.reason);
      if (performance.now() - t0 > opts.timeLimitMs) {
        skippedForTime = chosen.length - i;
        break;
      }
      opts.onProgress?.({ phase: 'eval', done: i, total: chosen.length, message: `${inst.sha.slice(0, 10)} ${inst.query.split('\n')[0]!.slice(0, 60)}` });
      const changed = await repo.checkout(inst.parent);
      const ti = performance.now();
      engine ??= await opts.openEngine(repo.scratchRoot);
      await engine.index({ ...(changed && changed.length < 2000 ? { paths: changed } : {}), ...(opts.signal ? { signal: opts.signal } : {}), persist: false });
      indexMs += performance.now() - ti;
      const locator = locatorFor(engine);
      const ranks = {} as Record<EvalMethod, number>;
      const top = {} as Record<EvalMethod, string[]>;
      const ms = {} as Record<EvalMethod, number>;
      let detail: LocatedFile[] | undefined;
      let oracleRun: InstanceResult['oracle'];
      for (const m of methods) {
        const tm = performance.now();
        let ranked: string[];
        if (m === 'locate') {
          const history = past ? { changes: past, allowed: await repo.ancestors(inst.parent, HISTORY_DEPTH) } : undefined;
          const located = await locator.locate(inst.query, { k: opts.detail ? DETAIL_DEPTH : RANK_DEPTH, ...(history ? { history } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
          ranked = located.files.map((f) => f.path);
          if (opts.detail) detail = located.files;
        }
        else if (m === 'search') ranked = filesOfHits((await engine.search(inst.query, { k: 50, ...(opts.signal ? { signal: opts.signal } : {}) })).hits);
        else if (m === 'oracle') {
          const allowed = past ? await repo.ancestors(inst.parent, HISTORY_DEPTH) : undefined;
          const history = past && allowed ? { changes: past, allowed } : undefined;
          const oracle = new Oracle({ engine, ...(history ? { locateHistory: async () => history } : {}) });
          const answer = await oracle.ask(inst.query, { noLlm: true, noLog: true, explain: true, ...(opts.signal ? { signal: opts.signal } : {}) });
          ranked = answer.files;
          const why = answer.explain?.threshold.why;
          oracleRun = { noContext: answer.noContext, ...(why ? { why } : {}), type: answer.type, paths: answer.explain?.runs.filter((p) => p.status === 'ok').map((p) => p.name) ?? [], ...(answer.explain ? { threshold: { ...answer.explain.threshold } } : {}) };
        }
        else ranked = locator.baseline(inst.query, RANK_DEPTH).map((f) => f.path);
        ms[m] = Number((performance.now() - tm).toFixed(1));
        ranks[m] = firstGoldRank(ranked, inst.gold);
        top[m] = ranked.slice(0, 5);
      }
      results.push({ ...inst, ranks, top, ms, ...(detail ? { locateDetail: detail } : {}), ...(oracleRun ? { oracle: oracleRun } : {}) });
    }
  } finally {
    // The scratch index is thrown away with the scratch tree.
    await engine?.close({ discard: true });
  }
  opts.onProgress?.({ phase: 'eval', done: chosen.length, total: chosen.length });
  const summary = (subset: InstanceResult[]) => Object.fromEntries(methods.map((m) => [m, metrics(subset.map((r) => r.ranks[m]))])) as Record<EvalMethod, MethodMetrics>;
  const asked = results.filter((r) => r.oracle);
  const declined = asked.filter((r) => r.oracle?.noContext).length;
  return {
    instances: results,
    candidates,
    overall: summary(results),
    ...(asked.length ? { oracleNoContext: { n: asked.length, declined, rate: Number((declined / asked.length).toFixed(4)) } } : {}),
    namesNoGold: summary(results.filter((r) => !r.namesGold)),
    skippedForTime,
    indexMs: Math.round(indexMs),
    ms: Math.round(performance.now() - t0),
  };
}
