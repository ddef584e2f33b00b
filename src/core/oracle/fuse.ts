/**
 * Fusion and reranking, as three small pure stages:
 *
 * 1. {@link fuseRuns}: weighted reciprocal-rank fusion over the paths' ranked lists. Scores of
 *    different paths are not comparable (BM25 against an LSP answer against a thread match);
 *    ranks are.
 * 2. {@link dedupeSpans}: one piece of evidence per overlapping span of a file; the merged
 *    evidence keeps the best score and every path's rank.
 * 3. {@link featureRerank}: the default reranker: a few named, explainable features on top of
 *    the fused score. An LLM or a cross-encoder endpoint may reorder the head afterwards.
 */
import { inNamedDir, isTestPath } from './paths';
import type { AnalyzedQuestion, RankedEvidence, RetrievalResult, RetrieverRun } from './types';

/** The usual RRF constant: dampens the gap between rank 1 and rank 2. */
export const RRF_K = 60;

/**
 * Per-path weights. Navigation answers are exact or nearly so, and a named-symbol question is
 * best answered by them; notes and threads are context, not code.
 */
export const PATH_WEIGHTS: Readonly<Record<string, number>> = {
  navigation: 1.5,
  code: 1,
  scoped: 1,
  tests: 1,
  structure: 1,
  graph: 0.5,
  notes: 0.8,
  threads: 0.6,
  git: 1,
};

/**
 * For a report, the locate path ranks files by everything a report holds (frames, named files
 * and symbols, the history of similar changes) and measures ahead of search on real reports and
 * commit messages; at this weight its first files lead the fusion, and a file search alone
 * found still follows.
 */
export const REPORT_LOCATE_WEIGHT = 3;

/** The path weights for a question of this type. */
export function pathWeights(q: Pick<AnalyzedQuestion, 'type' | 'report'>): Readonly<Record<string, number>> {
  return locateLeads(q) ? { ...PATH_WEIGHTS, locate: REPORT_LOCATE_WEIGHT } : PATH_WEIGHTS;
}

/**
 * Whether the locate path leads: for a report that says what went wrong or what changed. A
 * statement that only describes behaviour ("parse a Range header into byte ranges") reads the
 * same as a search for it, and search leads it as it leads a question.
 */
function locateLeads(q: Pick<AnalyzedQuestion, 'type' | 'report'>): boolean {
  return q.type === 'report' && q.report?.kind !== 'statement';
}

export function fuseRuns(runs: readonly RetrieverRun[], weights: Readonly<Record<string, number>> = PATH_WEIGHTS): RankedEvidence[] {
  const byKey = new Map<string, RankedEvidence>();
  for (const run of runs) {
    if (run.status !== 'ok') continue;
    const w = weights[run.name] ?? 1;
    run.results.forEach((r, i) => {
      const add = w / (RRF_K + i + 1);
      const cur = byKey.get(r.key);
      if (cur) {
        cur.fused += add;
        cur.ranks[run.name] = i + 1;
        // Keep the richer content: a navigation hit carries the definition's exact lines.
        if (run.name === 'navigation') cur.result = { ...r, metadata: { ...cur.result.metadata, ...r.metadata } };
      } else {
        byKey.set(r.key, { result: r, fused: add, score: add, ranks: { [run.name]: i + 1 }, features: {} });
      }
    });
  }
  return [...byKey.values()].sort((a, b) => b.fused - a.fused || a.result.key.localeCompare(b.result.key));
}

function overlaps(a: RetrievalResult, b: RetrievalResult): boolean {
  if (a.path !== b.path || a.startLine === undefined || b.startLine === undefined) return false;
  if (a.source === 'note' || a.source === 'thread' || a.source === 'git' || b.source === 'note' || b.source === 'thread' || b.source === 'git') return false;
  const aEnd = a.endLine ?? a.startLine;
  const bEnd = b.endLine ?? b.startLine;
  return a.startLine <= bEnd && b.startLine <= aEnd;
}

/**
 * Merges evidence whose line ranges overlap in the same file into the better-ranked one. The
 * survivor adds the other's fused score (both paths agreed on this place) and keeps its ranks.
 */
export function dedupeSpans(ranked: readonly RankedEvidence[]): RankedEvidence[] {
  const kept: RankedEvidence[] = [];
  for (const e of ranked) {
    const twin = kept.find((k) => overlaps(k.result, e.result));
    if (!twin) {
      kept.push({ ...e, ranks: { ...e.ranks }, features: { ...e.features } });
      continue;
    }
    twin.fused += e.fused;
    for (const [k, v] of Object.entries(e.ranks)) twin.ranks[k] = Math.min(twin.ranks[k] ?? v, v);
    // A navigation answer names the exact lines (the definition, the use); a search chunk
    // around them is coarser, so the merged evidence shows the navigation answer's span.
    const precise = (r: RetrievalResult) => r.method === 'definition' || r.method === 'reference';
    if (precise(e.result) && !precise(twin.result)) twin.result = { ...e.result, metadata: { ...twin.result.metadata, ...e.result.metadata } };
    // An exact navigation answer makes the merged evidence exact too.
    if (e.result.source === 'lsp' && twin.result.source !== 'lsp') twin.result = { ...twin.result, source: 'lsp', metadata: { ...twin.result.metadata, ...e.result.metadata } };
  }
  return kept.sort((a, b) => b.fused - a.fused);
}

/**
 * The feature weights of the default reranker, relative to the best fused score (1.0). Named so
 * `--explain` can say which fired; sized so that one strong signal (an exact symbol, a path the
 * question names) moves evidence up a few places but never buries a hit all paths agreed on.
 */
export const FEATURES = {
  /** The evidence defines or is named by a symbol the question names. */
  exactSymbol: 0.6,
  /** A definition, for a definition question (over a use of the name). */
  definitionOverUse: 0.4,
  /** An exact (language-server) answer. */
  exactProvenance: 0.3,
  /** A test file, for a behavioural question. */
  testForBehaviour: 0.5,
  /** A test file for a question that is not about behaviour: usually noise. */
  testElsewhere: -0.25,
  /** A path (or file name) the question names. */
  namedPath: 0.8,
  /** Vendored, generated or fixture code: rarely what a question is about. */
  pathPenalty: -0.4,
  /** Recent history (commits, thread entries) for history questions. */
  recency: 0.2,
  /** The evidence lies in a directory the question names (`crypto/tls`, "the bufio package"). */
  namedDir: 0.5,
  /** A directory of the evidence's path is a word of the question ("runtime", "base64"). */
  pathTerm: 0.25,
  /** A file of the directory a structural question names ("what does X consist of"). */
  partOfStructure: 0.4,
} as const;

function stemOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '').toLowerCase();
}

/** The stem of the file a test file tests: `x_test.go`, `test_x.py`, `x.test.ts`, `XTest.java` → `x`. */
function testedStem(p: string): string {
  return stemOf(p).replace(/(?:[._-](?:test|spec)|tests?)$/, '').replace(/^test_/, '');
}

function dirOf(p: string): string {
  return p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
}

/** Path segments too generic to say anything about a question. */
const GENERIC_SEGMENTS = new Set(['src', 'lib', 'pkg', 'internal', 'cmd', 'test', 'tests', 'core', 'app', 'main', 'util', 'utils', 'common']);


const PENALISED_PATH = /(?:^|\/)(?:vendor|third_party|node_modules|testdata|fixtures?|generated|dist|build)\//;

function symbolMatches(result: RetrievalResult, symbols: readonly string[]): boolean {
  const s = result.metadata.symbol;
  if (typeof s !== 'string' || !s) return false;
  const last = s.split(/[.:#]/).pop() ?? s;
  return symbols.some((q) => {
    const ql = q.split(/[.:#]|->/).pop() ?? q;
    return q === s || ql === last;
  });
}

export function featureRerank(ranked: readonly RankedEvidence[], q: AnalyzedQuestion, now: number): RankedEvidence[] {
  const max = ranked[0]?.fused ?? 1;
  const terms = new Set(q.terms.map((t) => t.toLowerCase()).filter((t) => t.length >= 3));
  const topCode = ranked.slice(0, 10).filter((e) => (e.result.source === 'code' || e.result.source === 'lsp') && !isTestPath(e.result.path));
  // Tests beside the code (Go's `x_test.go`), or named after it (`test/…/x.test.ts` for `src/…/x.ts`).
  const besideCode = new Set(topCode.map((e) => dirOf(e.result.path)));
  const codeStems = new Set(topCode.map((e) => stemOf(e.result.path)));
  const out = ranked.map((e) => {
    const f: Record<string, number> = {};
    const r = e.result;
    const isDefinition = r.metadata.definition === true || (typeof r.metadata.kind === 'string' && !['block', 'module', 'file', 'reference', 'gap'].includes(r.metadata.kind) && r.metadata.symbol != null);
    if (q.symbols.length > 0 && symbolMatches(r, q.symbols) && isDefinition) f.exactSymbol = FEATURES.exactSymbol;
    if (q.type === 'definition' && isDefinition && r.method !== 'reference') f.definitionOverUse = FEATURES.definitionOverUse;
    if (r.source === 'lsp') f.exactProvenance = FEATURES.exactProvenance;
    if (r.source === 'test' || (r.source === 'code' && isTestPath(r.path))) {
      // A test shows how the code it sits beside behaves: it counts when it sits beside the
      // code found for the question, not because it is a test.
      if (q.type === 'behavioural') f.testForBehaviour = besideCode.has(dirOf(r.path)) || codeStems.has(testedStem(r.path)) ? FEATURES.testForBehaviour : FEATURES.testForBehaviour / 5;
      else if (q.type !== 'references') f.testElsewhere = FEATURES.testElsewhere;
    }
    if (q.paths.some((p) => r.path === p.path || r.path.endsWith(`/${p.path}`) || p.path.endsWith(`/${r.path}`))) f.namedPath = FEATURES.namedPath;
    if (PENALISED_PATH.test(r.path)) f.pathPenalty = FEATURES.pathPenalty;
    if (q.type === 'structural' && e.ranks.structure !== undefined && !isTestPath(r.path)) f.partOfStructure = FEATURES.partOfStructure;
    if (r.source !== 'note' && r.source !== 'thread' && r.source !== 'git') {
      if (q.dirs?.length && inNamedDir(r.path, q.dirs)) f.namedDir = FEATURES.namedDir;
      else {
        const segments = r.path.split('/').slice(0, -1).map((x) => x.toLowerCase());
        if (segments.some((seg) => !GENERIC_SEGMENTS.has(seg) && terms.has(seg))) f.pathTerm = FEATURES.pathTerm;
      }
    }
    if (q.type === 'history' && typeof r.metadata.date === 'string') {
      const ageDays = (now - Date.parse(r.metadata.date)) / 86_400_000;
      if (Number.isFinite(ageDays) && ageDays < 90) f.recency = FEATURES.recency;
    }
    const boost = Object.values(f).reduce((a, b) => a + b, 0);
    return { ...e, features: f, score: e.fused / max + boost };
  });
  return out.sort((a, b) => b.score - a.score || b.fused - a.fused);
}

/**
 * The evidence's head, after the feature reranker (whose boosts were made for questions):
 * - a report that says what went wrong or changed: the locate path's files first, in its order.
 *   Locate measures ahead of search and of the fused list on real reports and commit messages
 *   (the real-text bench), and a test or doc page must not move above the file it ranks first;
 * - a question in words, or a statement of behaviour: search's first {@link SEARCH_LEAD} hits
 *   first, in search's order. Search ranks with its own stages (code over docs and tests, the
 *   query's intent), and the oracle must not put the implementation below where search puts it.
 * Questions about definitions, uses, structure, behaviour and history keep the fused order,
 * where navigation, the named folder or the tests lead by design.
 */
export function leadEvidence(ranked: readonly RankedEvidence[], q: Pick<AnalyzedQuestion, 'type' | 'report'>): RankedEvidence[] {
  if (locateLeads(q)) return leadWith(ranked, 'locate', Infinity);
  if (q.type === 'conceptual' || q.type === 'report') return leadWith(ranked, 'code', SEARCH_LEAD);
  return [...ranked];
}

/** Search hits that lead a question in words. */
export const SEARCH_LEAD = 3;

function leadWith(ranked: readonly RankedEvidence[], path: string, n: number): RankedEvidence[] {
  const lead = ranked.filter((e) => (e.ranks[path] ?? Infinity) <= n).sort((a, b) => a.ranks[path]! - b.ranks[path]!);
  return [...lead, ...ranked.filter((e) => !lead.includes(e))];
}
