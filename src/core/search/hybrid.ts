/**
 * Hybrid code search as a pipeline of small stages:
 *   1. analyse the query (query.ts);
 *   2. run each retriever: BM25F over chunks, exact symbol lookup, path/stack-frame lookup,
 *      and vectors when an embedding provider is configured;
 *   3. fuse the ranked lists with weighted reciprocal-rank fusion (per-retriever k), the symbol
 *      list weighted by the query's intent (rank.ts);
 *   4. rerank the best fused candidates with the ranking layer's stages (rank.ts);
 *   5. cut to k. Language and path filters apply inside each retriever, before its own cut.
 * Every stage records what it did, so `--explain` can show each list and the fusion.
 */
import picomatch from 'picomatch';
import { analyzeQuery, type AnalyzedQuery } from './query';
import type { SearchIndex } from './orama-index';
import { LONG_QUERY_TERMS } from './orama-index';
import type { SymbolKind } from '../types';
import { VltError } from '../errors';
import { abbreviationExpansions, chunkIsKind, feedbackExpansions, queryIntent, RANK, rankCandidates, STAGES_OFF_BY_DEFAULT, stemExpansions, symbolMatchWeight, type ChunkKindFilter, type QueryIntent, type RankStage, type StageTrace } from './rank';
import { normalizeSymbolName } from './symbol-name';

export type RetrieverName = 'symbol' | 'bm25' | 'path' | 'vector';

export interface SymbolCandidate {
  name: string;
  qualifiedName: string;
  kind: SymbolKind;
  fileId: number;
  path: string;
  startLine: number;
  container?: string;
  /** Number of sub-words of the name (ParseDuration → 2), for part coverage. */
  parts: number;
}

/** What hybrid search needs from the engine: the index plus a few cheap lookups. */
export interface SearchSources {
  index: SearchIndex;
  /** Definitions whose {@link normalizeSymbolName normalized} name equals `key`. */
  symbolsNamed(key: string): SymbolCandidate[];
  /** Definitions whose name has `part` among its sub-words (see identifierParts). */
  /** Definitions of two or more sub-words, all among `parts`, in the order the parts' lists first name them. */
  symbolsCoveredBy(parts: readonly string[]): SymbolCandidate[];
  /** The chunk of a file that contains a line. */
  chunkAt(fileId: number, line: number): number | undefined;
  /** First chunks of files whose path ends with `suffix`. */
  filesEndingWith(suffix: string): Array<{ fileId: number; path: string }>;
  /** How many files reference a name: a cheap importance prior for definitions. */
  referenceCount(name: string): number;
  /**
   * Reads ahead, in a few queries, what {@link chunkAt} and {@link referenceCount} will be
   * asked about these files and names (one query each cost ~0.1 ms; a search ranks hundreds).
   */
  prefetch(fileIds: Iterable<number>, names: Iterable<string>): void;
  /** Present when embeddings are configured. */
  embedQuery?: (query: string, signal?: AbortSignal) => Promise<Float32Array>;
  /** The text of chunks (the feedback stage reads the first pass's best). */
  texts(ids: readonly number[]): Map<number, string>;
  /** What the ranking layer needs to know of candidate chunks: file, language, kind, main definition. */
  describe(ids: readonly number[]): Map<number, { path: string; language: string; kind: string; symbol: string | undefined }>;
}

export interface RetrieverHit {
  id: number;
  score: number;
  /** Short reason, e.g. the matched symbol. */
  why?: string;
  /** The definition this hit stands for, when a retriever matched one inside the chunk. */
  symbol?: string;
  symbolKind?: string;
  /** The line that definition starts at. */
  symbolLine?: number;
  /** The symbol retriever matched the name by one query word only (not a join, not an identifier). */
  wordOnly?: boolean;
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
  symbol?: string;
  symbolKind?: string;
  symbolLine?: number;
}

export interface HybridOptions {
  k: number;
  language?: string;
  pathGlob?: string;
  /** Only chunks of these kinds (any of them). */
  kinds?: readonly ChunkKindFilter[];
  signal?: AbortSignal;
  /** Ranking stages to leave out (benchmarks measure each stage by ablation); default {@link STAGES_OFF_BY_DEFAULT}. */
  disabledStages?: readonly RankStage[];
}

export interface HybridResult {
  analysis: AnalyzedQuery;
  runs: RetrieverRun[];
  fused: FusedHit[];
  /** The query's intent and what each ranking stage did. */
  rank: { intent: QueryIntent; stages: StageTrace[] };
}

/** How many fused candidates the ranking layer reorders before the cut. */
const RANK_POOL = 60;

/**
 * Weighted RRF parameters per retriever. k = 60 (Cormack et al.) flattens rank differences,
 * which suits the fuzzy retrievers; the precise ones (a definition with the queried name, a
 * file named in a stack frame) get a small k so their top ranks dominate the fused list and
 * term overlap only orders what they did not find.
 */
const RRF: Record<RetrieverName, { k: number; weight: number; scaled: boolean }> = {
  symbol: { k: 15, weight: 1.5, scaled: true },
  path: { k: 10, weight: 1.5, scaled: true },
  bm25: { k: 60, weight: 1, scaled: false },
  vector: { k: 60, weight: 1, scaled: false },
};
/** How much of the query a definition's name covers. */
const NAME_STRENGTH = { identifier: 4, join4: 5.5, join3: 4.5, join2: 3.5, word: 2 } as const;
/** How much less an order-free sub-word cover counts than a join of adjacent query words. */
const COVERAGE_DISCOUNT = 0.5;
/** The enclosing type matching another query word ("gzip writer close" → Writer.Close). */
const CONTAINER_BONUS = 1.2;
const PER_RETRIEVER = 100;
/** Definitions of one name a search scores at most (a name such as `String` has thousands). */
const MAX_DEFS_PER_NAME = 5000;
const TYPE_KINDS = new Set<SymbolKind>(['class', 'interface', 'struct', 'trait', 'enum', 'type']);
const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$|\.(test|spec)\.[jt]sx?$|Tests?\.(java|cs|kt|swift)$/;

export { normalizeSymbolName };

/**
 * Most `*` wildcards (runs of stars, outside whole `**` segments) a path glob may hold. The
 * glob becomes a backtracking regular expression; its cost grows with the path length to the
 * power of the wildcard count (measured with picomatch 4: `*a*a*a*a*ab` takes 3 s against one
 * 250-character name), and one such call would stall the server for every client request.
 */
const MAX_GLOB_WILDCARDS = 3;

/**
 * Checks the path filter before it reaches the matcher. It matches workspace-relative paths,
 * so an absolute pattern or one that climbs out with `..` can never match anything: say so,
 * rather than return an empty list the model would read as "no such code".
 */
export function checkPathGlob(glob: string): void {
  const g = glob.replace(/\\/g, '/');
  const shown = g.length > 80 ? `${g.slice(0, 80)}…` : g;
  if (g.startsWith('/') || /^[A-Za-z]:/.test(g) || g.split('/').includes('..')) {
    throw new VltError('PATH_OUTSIDE_WORKSPACE', `path "${shown}" is not inside the workspace; use a glob relative to the workspace root, such as "src/**"`);
  }
  let wildcards = 0;
  for (const segment of g.split('/')) if (segment !== '**') wildcards += segment.match(/\*+/g)?.length ?? 0;
  if (wildcards > MAX_GLOB_WILDCARDS) {
    throw new VltError('USAGE', `path "${shown}" has ${wildcards} "*" wildcards; at most ${MAX_GLOB_WILDCARDS} are allowed (plus any number of whole "**" segments), e.g. "src/**/*_test.go"`);
  }
}

export async function hybridSearch(sources: SearchSources, query: string, opts: HybridOptions): Promise<HybridResult> {
  if (opts.pathGlob) checkPathGlob(opts.pathGlob);
  const analysis = analyzeQuery(query);
  const disabled = new Set(opts.disabledStages ?? STAGES_OFF_BY_DEFAULT);
  const intent = queryIntent(analysis);
  // The filters run inside each retriever, before its cut: a scope holds its own best hits
  // even when the whole index's best lie elsewhere.
  const filter = makeFilter(sources.index, opts);
  // What the text retriever added to the query (stems, short forms, feedback), for --explain.
  const expansionTrace: StageTrace[] = [];
  const runs: RetrieverRun[] = [
    timed('symbol', () => symbolRetriever(sources, analysis)),
    timed('path', () => pathRetriever(sources, analysis, filter)),
    timed('bm25', () => bm25Retriever(sources, analysis, intent, opts.language, filter, disabled, expansionTrace)),
    await vectorRetriever(sources, analysis, opts, filter),
  ];
  // A name match is judged by the definition it matched (what the hit shows), the rest by the chunk.
  for (const run of runs) run.hits = (filter ? run.hits.filter((h) => filter.id(h.id, run.name === 'symbol' ? h.symbolKind : undefined)) : run.hits).slice(0, PER_RETRIEVER);
  const fused = fuse(runs, disabled.has('intent') ? undefined : intent);
  const pool = fused.slice(0, Math.max(RANK_POOL, opts.k));
  const about = sources.describe(pool.map((f) => f.id));
  const { ranked, trace } = rankCandidates(
    pool.flatMap((f) => {
      const d = about.get(f.id);
      return d ? [{ id: f.id, score: f.score, path: d.path, language: d.language, kind: d.kind, symbol: d.symbol, matchedSymbol: f.symbol }] : [];
    }),
    analysis,
    intent,
    disabled,
  );
  const byId = new Map(pool.map((f) => [f.id, f]));
  const reranked = ranked.map((c) => ({ ...byId.get(c.id)!, score: c.score }));
  // The query's intent first, then what the text retriever added, then the stages after fusion.
  const stages = [...trace];
  stages.splice(stages.findIndex((st) => st.stage === 'intent') + 1, 0, ...expansionTrace);
  return { analysis, runs, fused: reranked.slice(0, opts.k), rank: { intent, stages } };
}

function timed(name: RetrieverName, fn: () => RetrieverHit[] | { skipped: string }): RetrieverRun {
  const t0 = performance.now();
  const out = fn();
  const ms = performance.now() - t0;
  return Array.isArray(out) ? { name, hits: out, ms } : { name, hits: [], ms, skipped: out.skipped };
}

/** A search's scope: which chunks (by id) and which files (by path) it may return. */
interface ScopeFilter {
  /** `kind`: the kind to judge the chunk by, when a retriever matched a definition in it. */
  id(id: number, kind?: string): boolean;
  path(path: string): boolean;
}

function makeFilter(index: SearchIndex, opts: HybridOptions): ScopeFilter | undefined {
  const glob = opts.pathGlob ? picomatch(opts.pathGlob, { dot: true }) : undefined;
  const globBase = opts.pathGlob && !opts.pathGlob.includes('/') ? picomatch(opts.pathGlob, { dot: true, basename: true }) : undefined;
  const kinds = opts.kinds?.length ? opts.kinds : undefined;
  if (!glob && !opts.language && !kinds) return undefined;
  const prefix = opts.pathGlob?.replace(/\/?\*\*.*$/, '/');
  // Many chunks share a file: each path is matched once.
  const matched = new Map<string, boolean>();
  const pathOk = (p: string): boolean => {
    if (!glob) return true;
    let ok = matched.get(p);
    if (ok === undefined) {
      ok = glob(p) || (globBase !== undefined && globBase(p)) || (prefix !== undefined && p.startsWith(prefix));
      matched.set(p, ok);
    }
    return ok;
  };
  return {
    id: (id, kind) => {
      const meta = index.docMeta(id);
      if (!meta) return false;
      if (opts.language && meta.language !== opts.language) return false;
      if (kinds && !kinds.some((k) => chunkIsKind(k, kind ? { ...meta, kind } : meta))) return false;
      return pathOk(meta.path);
    },
    path: pathOk,
  };
}

/**
 * Finds definitions named like the query's identifiers, words or word joins, and scores
 * them: how much of the query the name covers (an identifier as typed, a join of two or
 * three words, or one word), how specific the name is (few definitions share it), whether
 * the enclosing type and the path also match query words, the kind (types and functions over
 * variables), tests last unless asked for, and how widely the enclosing name is referenced.
 */
/** The names the symbol retriever looks up for a query, each with the strength of its match. */
function wantedNames(q: AnalyzedQuery): Map<string, number> {
  const wanted = new Map<string, number>();
  const want = (name: string, strength: number, short = false) => {
    const key = normalizeSymbolName(name);
    if (key.length < (short ? 1 : 2)) return;
    wanted.set(key, Math.max(wanted.get(key) ?? 0, strength));
  };
  // Long pasted reports mention many plain words; only code-like identifiers count there. The
  // last part of a qualified name is a name however short (`flask.g`, `np.e`).
  for (const id of q.identifiers) {
    const parts = id.split(/\.|::|->|#/);
    parts.forEach((part, i) => want(part, NAME_STRENGTH.identifier, parts.length > 1 && i === parts.length - 1));
  }
  if (!q.isLong) {
    for (const w of q.words) want(w, NAME_STRENGTH.word);
    for (const j of q.joins) want(j, NAME_STRENGTH.join2);
    for (const j of q.joins3) want(j, NAME_STRENGTH.join3);
    for (const j of q.joins4) want(j, NAME_STRENGTH.join4);
  }
  // A query that is one short name and nothing else (`g`, Flask's request globals; `_`) looks it
  // up as typed: too short to be a word the text index keeps, it is still a name.
  const bare = q.raw.trim();
  if (wanted.size === 0 && /^[A-Za-z_$]$/.test(bare)) wanted.set(normalizeSymbolName(bare) || bare, NAME_STRENGTH.identifier);
  return wanted;
}

function symbolRetriever(sources: SearchSources, q: AnalyzedQuery): RetrieverHit[] | { skipped: string } {
  const wanted = wantedNames(q);
  if (wanted.size === 0) return { skipped: 'no identifiers or words in the query' };

  const queryWords = new Set([...q.terms, ...q.words.map((w) => w.toLowerCase())]);
  const exactIdents = new Set(q.identifiers.flatMap((i) => i.split(/\.|::|->|#/)));
  const mentionsTests = queryWords.has('test') || queryWords.has('tests');
  const importance = new Map<string, number>();
  const best = new Map<number, RetrieverHit>();

  // Order-free coverage: every sub-word of a multi-word name appears in the query
  // ("render template to string" covers render_to_string).
  const byCoverage = new Map<string, SymbolCandidate[]>();
  for (const def of q.isLong ? [] : sources.symbolsCoveredBy(q.terms)) {
    const key = `parts:${def.parts}`;
    let list = byCoverage.get(key);
    if (!list) byCoverage.set(key, (list = []));
    list.push(def);
  }

  const groups: Array<[string, number, SymbolCandidate[]]> = [];
  for (const [key, strength] of wanted) groups.push([key, strength, sources.symbolsNamed(key)]);
  for (const [key, defs] of byCoverage) {
    const parts = Number(key.slice(6));
    // Weaker than a join of the same length: the query words need not be adjacent or in order.
    groups.push([key, NAME_STRENGTH.join2 + (Math.min(parts, 4) - 2) - COVERAGE_DISCOUNT, defs]);
  }

  const importanceKey = (def: SymbolCandidate) => {
    const key = def.container ?? def.name;
    return key.split(/\.|::/).pop() ?? key;
  };
  const considered = groups.flatMap(([, , defs]) => defs.slice(0, MAX_DEFS_PER_NAME));
  sources.prefetch(
    considered.map((d) => d.fileId),
    considered.map(importanceKey),
  );

  for (const [lowerName, strength, defs] of groups) {
    if (defs.length === 0) continue;
    // Like IDF for names: a name shared by hundreds of definitions (String, Close) says less.
    const specificity = 1.5 / Math.log2(2 + defs.length);
    for (const def of defs.slice(0, MAX_DEFS_PER_NAME)) {
      let score = strength + specificity + (exactIdents.has(def.name) ? 1 : 0);
      const containerLeaf = def.container ? normalizeSymbolName(def.container.split(/\.|::/).pop() ?? '') : undefined;
      if (containerLeaf && containerLeaf !== lowerName && queryWords.has(containerLeaf)) score += CONTAINER_BONUS;
      const pathLower = def.path.toLowerCase();
      let pathHits = 0;
      for (const w of queryWords) if (w.length > 2 && w !== lowerName && w !== containerLeaf && pathLower.includes(w)) pathHits++;
      score += Math.min(1, pathHits * 0.4);
      if (TYPE_KINDS.has(def.kind)) score += 0.4;
      else if (def.kind === 'function' || def.kind === 'method') score += 0.3;
      if (!mentionsTests && TEST_PATH.test(def.path)) score -= 1;
      const key = def.container ?? def.name;
      let imp = importance.get(key);
      if (imp === undefined) {
        imp = Math.log10(1 + sources.referenceCount(importanceKey(def)));
        importance.set(key, imp);
      }
      score += 0.25 * imp;
      const chunk = sources.chunkAt(def.fileId, def.startLine);
      if (chunk === undefined) continue;
      const prev = best.get(chunk);
      const wordOnly = strength <= NAME_STRENGTH.word && !exactIdents.has(def.name);
      if (!prev || prev.score < score) best.set(chunk, { id: chunk, score, why: `${def.kind} ${def.qualifiedName}`, symbol: def.qualifiedName, symbolKind: def.kind, symbolLine: def.startLine, wordOnly });
    }
  }
  return [...best.values()].sort((a, b) => b.score - a.score || a.id - b.id);
}

/** Chunks of files the query names, at the named line when it gives one (stack frames). */
function pathRetriever(sources: SearchSources, q: AnalyzedQuery, filter: ScopeFilter | undefined): RetrieverHit[] | { skipped: string } {
  if (q.paths.length === 0) return { skipped: 'no file paths in the query' };
  const hits: RetrieverHit[] = [];
  const seen = new Set<number>();
  q.paths.forEach((mention, order) => {
    // Match on the longest suffix we can: absolute paths from tracebacks carry a machine prefix.
    const segments = mention.path.split('/');
    let files: Array<{ fileId: number; path: string }> = [];
    for (let s = 0; s < segments.length && files.length === 0; s++) files = sources.filesEndingWith(segments.slice(s).join('/')).filter((f) => !filter || filter.path(f.path));
    for (const f of files.slice(0, 5)) {
      const chunk = sources.chunkAt(f.fileId, mention.line ?? 1);
      if (chunk === undefined || seen.has(chunk)) continue;
      seen.add(chunk);
      hits.push({ id: chunk, score: 1 / (1 + order), why: mention.line ? `${f.path}:${mention.line}` : f.path });
    }
  });
  return hits;
}

/** `word 0.25, …`: the words a stage added to the query, with their weights. */
function addedWords(added: ReadonlyMap<string, number>, max = 8): string {
  const shown = [...added].slice(0, max).map(([w, x]) => `${w} ${x.toFixed(2)}`);
  return added.size > max ? `${shown.join(', ')}, …` : shown.join(', ');
}

function bm25Retriever(
  sources: SearchSources,
  q: AnalyzedQuery,
  intent: QueryIntent,
  language: string | undefined,
  filter: ScopeFilter | undefined,
  disabled: ReadonlySet<RankStage>,
  trace: StageTrace[],
): RetrieverHit[] {
  let text = q.raw;
  if (q.terms.length > LONG_QUERY_TERMS && q.isLong) {
    // For a pasted report, identifiers and path words carry the signal; prose is noise.
    const strong = [...q.identifiers, ...q.paths.map((p) => p.path)].join(' ');
    if (strong.trim()) text = `${strong} ${strong} ${q.raw}`;
  }
  const indexHas = (t: string) => sources.index.hasTerm(t);
  const stems = q.isLong || disabled.has('stems') ? undefined : stemExpansions(q, indexHas);
  if (stems?.size) trace.push({ stage: 'stems', changed: stems.size, note: addedWords(stems) });
  const short = q.isLong || disabled.has('abbrev') ? undefined : abbreviationExpansions(q, indexHas, new Set(stems?.keys()));
  if (short?.size) trace.push({ stage: 'abbrev', changed: short.size, note: addedWords(short) });
  const expansions = stems || short ? new Map([...(short ?? []), ...(stems ?? [])]) : undefined;
  const boost = intent === 'sentence' && !disabled.has('intent') ? { name: RANK.sentenceNameBoost, path: RANK.sentencePathBoost, sig: RANK.sentenceSigBoost } : undefined;
  const search = (extra: ReadonlyMap<string, number> | undefined) =>
    sources.index.searchText(text, { limit: PER_RETRIEVER * 2, ...(language ? { language } : {}), ...(filter ? { accept: (id: number) => filter.id(id) } : {}), ...(extra?.size ? { expansions: extra } : {}), ...(boost ? { boost } : {}) });
  let hits = search(expansions);
  if (intent === 'sentence' && !disabled.has('feedback') && hits.length > 0) {
    // A second pass with the words the best chunks share (rank.ts, feedbackExpansions).
    const first = hits.slice(0, RANK.feedbackDocs);
    const texts = sources.texts(first.map((h) => h.id));
    const live = Math.max(1, sources.index.size);
    const feedback = feedbackExpansions(
      first.flatMap((h) => (texts.has(h.id) ? [{ text: texts.get(h.id)!, score: h.score }] : [])),
      q,
      (t) => Math.log(1 + (live - sources.index.docFrequency(t) + 0.5) / (sources.index.docFrequency(t) + 0.5)),
    );
    if (feedback.size > 0) {
      trace.push({ stage: 'feedback', changed: feedback.size, note: addedWords(feedback) });
      hits = search(new Map([...feedback, ...(expansions ?? [])]));
    }
  }
  return hits.map((h) => ({ id: h.id, score: h.score }));
}

/** Vector search compares every vector anyway: a scoped one asks for this many more, then filters. */
const SCOPED_VECTOR_FACTOR = 50;

async function vectorRetriever(sources: SearchSources, q: AnalyzedQuery, opts: HybridOptions, filter: ScopeFilter | undefined): Promise<RetrieverRun> {
  if (!sources.embedQuery) return { name: 'vector', hits: [], ms: 0, skipped: 'vectors are off (no embedding provider configured)' };
  if (sources.index.vectorCount() === 0) return { name: 'vector', hits: [], ms: 0, skipped: 'no chunk has a vector yet' };
  const t0 = performance.now();
  try {
    const v = await sources.embedQuery(q.raw.slice(0, 8000), opts.signal);
    const hits = sources.index.searchVector(v, { limit: filter ? PER_RETRIEVER * SCOPED_VECTOR_FACTOR : PER_RETRIEVER, ...(opts.language ? { language: opts.language } : {}) });
    return { name: 'vector', hits, ms: performance.now() - t0 };
  } catch (e) {
    return { name: 'vector', hits: [], ms: performance.now() - t0, skipped: `embedding the query failed: ${(e as Error).message}` };
  }
}

/**
 * Weighted reciprocal-rank fusion. Ties break on the lower chunk id for stable output. With an
 * `intent`, a symbol hit that matched one word of a sentence counts less (rank.ts): "running
 * total of the cart" is not a question about every definition named `total`.
 */
export function fuse(runs: RetrieverRun[], intent?: QueryIntent): FusedHit[] {
  const fused = new Map<number, FusedHit>();
  for (const run of runs) {
    const { k, weight, scaled } = RRF[run.name];
    // The precise retrievers' scores mean something (an exact name vs a one-word match), so
    // their contribution is also scaled by the score relative to their best hit.
    const top = run.hits[0]?.score ?? 0;
    run.hits.forEach((h, i) => {
      const rank = i + 1;
      let f = fused.get(h.id);
      if (!f) {
        f = { id: h.id, score: 0, ranks: {} };
        fused.set(h.id, f);
      }
      const confidence = scaled && top > 0 ? Math.max(0, h.score) / top : 1;
      const byIntent = intent && run.name === 'symbol' ? symbolMatchWeight(intent, h.wordOnly === true) : { factor: 1, flatten: false };
      f.score += (weight * confidence * byIntent.factor) / ((byIntent.flatten ? RRF.bm25.k : k) + rank);
      f.ranks[run.name] = rank;
      if (h.why && !f.why) f.why = h.why;
      if (h.symbol && !f.symbol) {
        f.symbol = h.symbol;
        if (h.symbolKind) f.symbolKind = h.symbolKind;
        if (h.symbolLine !== undefined) f.symbolLine = h.symbolLine;
      }
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.id - b.id);
}
