/**
 * Hybrid code search as a pipeline of small stages:
 *   1. analyse the query (query.ts);
 *   2. run each retriever: BM25F over chunks, exact symbol lookup, path/stack-frame lookup,
 *      and vectors when an embedding provider is configured;
 *   3. fuse the ranked lists with weighted reciprocal-rank fusion;
 *   4. filter by language and path glob, cut to k.
 * Every stage records what it did, so `--explain` can show each list and the fusion.
 */
import picomatch from 'picomatch';
import { analyzeQuery, type AnalyzedQuery } from './query';
import type { SearchIndex } from './orama-index';
import { LONG_QUERY_TERMS } from './orama-index';
import type { SymbolKind } from '../types';

export type RetrieverName = 'symbol' | 'bm25' | 'path' | 'vector';

export interface SymbolCandidate {
  name: string;
  qualifiedName: string;
  kind: SymbolKind;
  fileId: number;
  path: string;
  startLine: number;
  container?: string;
}

/** What hybrid search needs from the engine: the index plus a few cheap lookups. */
export interface SearchSources {
  index: SearchIndex;
  /** Definitions whose name, lower-cased, equals `lowerName`. */
  symbolsNamed(lowerName: string): SymbolCandidate[];
  /** The chunk of a file that contains a line. */
  chunkAt(fileId: number, line: number): number | undefined;
  /** First chunks of files whose path ends with `suffix`. */
  filesEndingWith(suffix: string): Array<{ fileId: number; path: string }>;
  /** How many files reference a name: a cheap importance prior for definitions. */
  referenceCount(name: string): number;
  /** Present when embeddings are configured. */
  embedQuery?: (query: string, signal?: AbortSignal) => Promise<Float32Array>;
}

export interface RetrieverHit {
  id: number;
  score: number;
  /** Short reason, e.g. the matched symbol. */
  why?: string;
}

export interface RetrieverRun {
  name: RetrieverName;
  hits: RetrieverHit[];
  ms: number;
  /** Set when the retriever did not run, with the reason. */
  skipped?: string;
}

export interface FusedHit {
  id: number;
  score: number;
  /** Rank (1-based) of this chunk in each retriever that found it. */
  ranks: Partial<Record<RetrieverName, number>>;
  why?: string;
}

export interface HybridOptions {
  k: number;
  language?: string;
  pathGlob?: string;
  signal?: AbortSignal;
}

export interface HybridResult {
  analysis: AnalyzedQuery;
  runs: RetrieverRun[];
  fused: FusedHit[];
}

/** RRF constant: 60 is the value from Cormack et al. and what most engines default to. */
const RRF_K = 60;
/** Exact symbol and path evidence is rarer and more precise than term overlap. */
const WEIGHTS: Record<RetrieverName, number> = { symbol: 1.6, path: 1.3, bm25: 1, vector: 1 };
const PER_RETRIEVER = 100;
const TYPE_KINDS = new Set<SymbolKind>(['class', 'interface', 'struct', 'trait', 'enum', 'type']);
const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$|\.(test|spec)\.[jt]sx?$|Tests?\.(java|cs|kt|swift)$/;

export async function hybridSearch(sources: SearchSources, query: string, opts: HybridOptions): Promise<HybridResult> {
  const analysis = analyzeQuery(query);
  const accept = makeFilter(sources.index, opts);
  const runs: RetrieverRun[] = [
    timed('symbol', () => symbolRetriever(sources, analysis)),
    timed('path', () => pathRetriever(sources, analysis)),
    timed('bm25', () => bm25Retriever(sources, analysis, opts.language)),
    await vectorRetriever(sources, analysis, opts),
  ];
  for (const run of runs) run.hits = run.hits.filter((h) => accept(h.id)).slice(0, PER_RETRIEVER);
  return { analysis, runs, fused: fuse(runs).slice(0, opts.k) };
}

function timed(name: RetrieverName, fn: () => RetrieverHit[] | { skipped: string }): RetrieverRun {
  const t0 = performance.now();
  const out = fn();
  const ms = performance.now() - t0;
  return Array.isArray(out) ? { name, hits: out, ms } : { name, hits: [], ms, skipped: out.skipped };
}

function makeFilter(index: SearchIndex, opts: HybridOptions): (id: number) => boolean {
  const glob = opts.pathGlob ? picomatch(opts.pathGlob, { dot: true }) : undefined;
  const globBase = opts.pathGlob && !opts.pathGlob.includes('/') ? picomatch(opts.pathGlob, { dot: true, basename: true }) : undefined;
  if (!glob && !opts.language) return () => true;
  return (id) => {
    const meta = index.docMeta(id);
    if (!meta) return false;
    if (opts.language && meta.language !== opts.language) return false;
    if (glob && !glob(meta.path) && !(globBase && globBase(meta.path)) && !meta.path.startsWith(opts.pathGlob!.replace(/\/?\*\*.*$/, '/'))) return false;
    return true;
  };
}

/**
 * Finds definitions named like the query's identifiers, words or word joins, and scores
 * them: how exactly the name matched, whether the enclosing type and the path also match
 * query words, the kind (types and functions over variables), tests last unless asked
 * for, and how widely the definition's name is referenced.
 */
function symbolRetriever(sources: SearchSources, q: AnalyzedQuery): RetrieverHit[] | { skipped: string } {
  const wanted = new Map<string, number>();
  const want = (name: string, strength: number) => {
    const key = name.toLowerCase();
    if (key.length < 2) return;
    wanted.set(key, Math.max(wanted.get(key) ?? 0, strength));
  };
  // Long pasted reports mention many plain words; only code-like identifiers count there.
  for (const id of q.identifiers) for (const part of id.split(/\.|::|->|#/)) want(part, 3);
  if (!q.isLong) {
    for (const w of q.words) want(w, 2);
    for (const j of q.joins) want(j, 2.5);
  }
  if (wanted.size === 0) return { skipped: 'no identifiers or words in the query' };

  const queryWords = new Set([...q.terms, ...q.words.map((w) => w.toLowerCase())]);
  const exactIdents = new Set(q.identifiers.flatMap((i) => i.split(/\.|::|->|#/)));
  const mentionsTests = queryWords.has('test') || queryWords.has('tests');
  const importance = new Map<string, number>();
  const best = new Map<number, RetrieverHit>();

  for (const [lowerName, strength] of wanted) {
    const defs = sources.symbolsNamed(lowerName);
    if (defs.length === 0) continue;
    for (const def of defs.slice(0, 5000)) {
      let score = strength + (exactIdents.has(def.name) ? 1 : 0);
      const containerLeaf = def.container?.split(/\.|::/).pop()?.toLowerCase();
      if (containerLeaf && queryWords.has(containerLeaf)) score += 1.5;
      const pathLower = def.path.toLowerCase();
      let pathHits = 0;
      for (const w of queryWords) if (w.length > 2 && w !== lowerName && pathLower.includes(w)) pathHits++;
      score += Math.min(1, pathHits * 0.4);
      if (TYPE_KINDS.has(def.kind)) score += 0.4;
      else if (def.kind === 'function' || def.kind === 'method') score += 0.3;
      if (!mentionsTests && TEST_PATH.test(def.path)) score -= 1;
      const key = def.container ?? def.name;
      let imp = importance.get(key);
      if (imp === undefined) {
        imp = Math.log10(1 + sources.referenceCount(key.split(/\.|::/).pop() ?? key));
        importance.set(key, imp);
      }
      score += 0.3 * imp;
      const chunk = sources.chunkAt(def.fileId, def.startLine);
      if (chunk === undefined) continue;
      const prev = best.get(chunk);
      if (!prev || prev.score < score) best.set(chunk, { id: chunk, score, why: `${def.kind} ${def.qualifiedName}` });
    }
  }
  return [...best.values()].sort((a, b) => b.score - a.score || a.id - b.id);
}

/** Chunks of files the query names, at the named line when it gives one (stack frames). */
function pathRetriever(sources: SearchSources, q: AnalyzedQuery): RetrieverHit[] | { skipped: string } {
  if (q.paths.length === 0) return { skipped: 'no file paths in the query' };
  const hits: RetrieverHit[] = [];
  const seen = new Set<number>();
  q.paths.forEach((mention, order) => {
    // Match on the longest suffix we can: absolute paths from tracebacks carry a machine prefix.
    const segments = mention.path.split('/');
    let files: Array<{ fileId: number; path: string }> = [];
    for (let s = 0; s < segments.length && files.length === 0; s++) files = sources.filesEndingWith(segments.slice(s).join('/'));
    for (const f of files.slice(0, 5)) {
      const chunk = sources.chunkAt(f.fileId, mention.line ?? 1);
      if (chunk === undefined || seen.has(chunk)) continue;
      seen.add(chunk);
      hits.push({ id: chunk, score: 1 / (1 + order), why: mention.line ? `${f.path}:${mention.line}` : f.path });
    }
  });
  return hits;
}

function bm25Retriever(sources: SearchSources, q: AnalyzedQuery, language?: string): RetrieverHit[] {
  let text = q.raw;
  if (q.terms.length > LONG_QUERY_TERMS && q.isLong) {
    // For a pasted report, identifiers and path words carry the signal; prose is noise.
    const strong = [...q.identifiers, ...q.paths.map((p) => p.path)].join(' ');
    if (strong.trim()) text = `${strong} ${strong} ${q.raw}`;
  }
  return sources.index.searchText(text, { limit: PER_RETRIEVER * 2, ...(language ? { language } : {}) }).map((h) => ({ id: h.id, score: h.score }));
}

async function vectorRetriever(sources: SearchSources, q: AnalyzedQuery, opts: HybridOptions): Promise<RetrieverRun> {
  if (!sources.embedQuery) return { name: 'vector', hits: [], ms: 0, skipped: 'vectors are off (no embedding provider configured)' };
  if (sources.index.vectorCount() === 0) return { name: 'vector', hits: [], ms: 0, skipped: 'no chunk has a vector yet' };
  const t0 = performance.now();
  try {
    const v = await sources.embedQuery(q.raw.slice(0, 8000), opts.signal);
    const hits = sources.index.searchVector(v, { limit: PER_RETRIEVER, ...(opts.language ? { language: opts.language } : {}) });
    return { name: 'vector', hits, ms: performance.now() - t0 };
  } catch (e) {
    return { name: 'vector', hits: [], ms: performance.now() - t0, skipped: `embedding the query failed: ${(e as Error).message}` };
  }
}

/** Weighted reciprocal-rank fusion. Ties break on the lower chunk id for stable output. */
export function fuse(runs: RetrieverRun[]): FusedHit[] {
  const fused = new Map<number, FusedHit>();
  for (const run of runs) {
    const w = WEIGHTS[run.name];
    run.hits.forEach((h, i) => {
      const rank = i + 1;
      let f = fused.get(h.id);
      if (!f) {
        f = { id: h.id, score: 0, ranks: {} };
        fused.set(h.id, f);
      }
      f.score += w / (RRF_K + rank);
      f.ranks[run.name] = rank;
      if (h.why && !f.why) f.why = h.why;
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.id - b.id);
}
