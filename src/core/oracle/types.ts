import type { ReportClass } from './report';
/**
 * The oracle's data model: what a question is analysed into, what every retrieval path
 * returns, what the assembled context looks like, and what an answer carries. Every
 * retriever, the fusion, the context assembly and both synthesis paths (LLM and extractive)
 * speak these types and nothing else.
 */

/**
 * What kind of answer a question asks for; decides the retrieval paths and the context budget.
 * `report`: not a question but an issue report, a feature request, a change description or
 * error output (see report.ts): the files to change are the answer.
 */
export type QuestionType = 'definition' | 'references' | 'conceptual' | 'behavioural' | 'structural' | 'history' | 'report';

export const QUESTION_TYPES: readonly QuestionType[] = ['definition', 'references', 'conceptual', 'behavioural', 'structural', 'history', 'report'];

/** The result of the pattern-based question analyzer (no model involved). */
export interface AnalyzedQuestion {
  /** The question as the retrievers use it (after conversational rewriting, when any). */
  text: string;
  type: QuestionType;
  /** Why the analyzer chose `type`: the pattern that matched, for `--explain`. */
  typeReason: string;
  /** Identifiers the question names (`UserService`, `http.HandlerFunc`, `parse_duration`). */
  symbols: string[];
  /** Paths the question names, with a line when one was given (`net/http/server.go:2047`). */
  paths: Array<{ path: string; line?: number }>;
  /**
   * Directories the question names: slash paths without an extension (`crypto/tls`) and
   * `X package` / `the X module` names (`bufio`), as written; resolved against the index later.
   */
  dirs?: string[];
  /** Languages the question names or implies (`in Go`, a `.py` path). */
  languages: string[];
  /** Content words, stop words removed, as the user wrote them. */
  terms: string[];
  /** A pasted document (a report, a log) rather than a one-line question: many words. */
  isLong: boolean;
  /** With type `report`: what kind of report, and why (report.ts). */
  report?: ReportClass;
}

/** Where a piece of evidence comes from. `lsp` is an exact navigation answer. */
export type SourceType = 'code' | 'note' | 'thread' | 'test' | 'git' | 'lsp';

/**
 * One piece of evidence, the universal currency of retrieval. Code results are line ranges of
 * files; notes are vault paths; threads are `thread#entry`; git results are commits.
 */
export interface RetrievalResult {
  /** Stable identity used to deduplicate across paths: `source:path:start-end` or `thread:id#n`. */
  key: string;
  source: SourceType;
  /** Workspace-relative path for code, tests and git; the vault path for notes; the thread id for threads. */
  path: string;
  /** 1-based inclusive line range, for code-like sources. */
  startLine?: number;
  endLine?: number;
  /** The evidence text (a snippet, a note summary, a thread entry, a commit message). */
  content: string;
  /** The path's own score; only comparable within one retrieval path. */
  score: number;
  /** The retrieval method inside the path: `bm25+symbols`, `vector`, `definition`, `callers`, `notes-bm25`, `git-log`, … */
  method: string;
  /** The citation an answer uses for this evidence: `[path:line]`, `[note:path]`, `[thread:id#n]`, `[commit:abc1234]`. */
  citation: string;
  /** The file's content hash when retrieved, for freshness checks (code sources). */
  contentHash?: string;
  /** Source-specific facts: symbol, kind, language, exact, provenance, author, date, … */
  metadata: Record<string, unknown>;
}

/** What each retrieval path receives. */
export interface RetrievalRequest {
  question: AnalyzedQuestion;
  /** How many results the path should return at most. */
  limit: number;
  /** Aborted when the path's time budget runs out or the caller cancels. */
  signal: AbortSignal;
}

/** One retrieval path. Paths run in parallel, each with its own timeout. */
export interface Retriever {
  /** Short stable name, shown by `--explain` and used by `--source` filters. */
  readonly name: string;
  /** The source family the path belongs to (for `--source code,notes,threads,git`). */
  readonly family: 'code' | 'notes' | 'threads' | 'git';
  /**
   * Whether the path has anything to do for this question; a string is the reason it is
   * skipped (shown by `--explain`). Cheap: no I/O.
   */
  applies(q: AnalyzedQuestion): true | string;
  retrieve(req: RetrievalRequest): Promise<RetrievalResult[]>;
}

/** How one retrieval path went, for `--explain` and for the "what was searched" of a no-context answer. */
export interface RetrieverRun {
  name: string;
  family: Retriever['family'];
  status: 'ok' | 'skipped' | 'timeout' | 'failed';
  ms: number;
  /** Why it was skipped or failed. */
  reason?: string;
  results: RetrievalResult[];
}

/** One fused, reranked piece of evidence. */
export interface RankedEvidence {
  result: RetrievalResult;
  /** Reciprocal-rank fusion score over the paths that found it. */
  fused: number;
  /** The final score after reranking; evidence is sorted by it. */
  score: number;
  /** 1-based rank in each path that found it. */
  ranks: Record<string, number>;
  /** Reranker features that fired, with their contribution, for `--explain`. */
  features: Record<string, number>;
}

/** Context assembly tiers, in priority order (seed 002): trimmed from the bottom. */
export type ContextTier = 'selected' | 'primary' | 'conversation' | 'neighbour' | 'map';

export interface ContextItem {
  tier: ContextTier;
  citation: string;
  /** The text given to the model (or printed by the extractive brief). */
  text: string;
  tokens: number;
  /** The evidence it came from; absent for the repo-map slice and conversation subjects. */
  evidence?: RankedEvidence;
}

/** The token-budgeted context an answer is built from. */
export interface AssembledContext {
  items: ContextItem[];
  /** The repository-map slice around the evidence, always included when any code was found. */
  repoMap: string;
  tokens: number;
  budget: number;
  /** Items (by citation) left out because the budget ran out, lowest priority first. */
  dropped: Array<{ citation: string; tier: ContextTier; tokens: number }>;
}

/** Progress of one oracle call, streamed to the host (CLI stderr, chat webview, MCP progress). */
export type OracleEvent =
  | { type: 'phase'; phase: 'index' | 'analyze' | 'retrieve' | 'rerank' | 'assemble' | 'synthesize' | 'agent'; message: string }
  /** One retrieval path started (`running`) or ended: hosts show "Searching code…", "Reading notes…". */
  | { type: 'step'; name: string; family: 'code' | 'notes' | 'threads' | 'git'; state: 'running' | 'ok' | 'failed' | 'timeout'; results?: number; ms?: number }
  | { type: 'text'; text: string }
  | { type: 'tool'; name: string; args: string };

/** One citation of an answer, resolved to what it points at. */
export interface Citation {
  /** As written in the answer: `[path:line]`, `[note:path]`, `[thread:id#n]`, `[commit:abc1234]`. */
  citation: string;
  source: SourceType;
  path: string;
  line?: number;
  /** The cited file changed (or went away) since it was indexed: its lines may have moved. */
  changed?: true;
}

/** What `Oracle.ask` returns: the stable `--json` contract of `vlt oracle`. */
export interface OracleAnswer {
  question: string;
  /** The standalone question the retrievers used, when conversational rewriting changed it. */
  rewritten?: string;
  type: QuestionType;
  /** `llm`: synthesised by a model; `agent`: by a model calling tools; `extractive`: the offline evidence brief. */
  mode: 'llm' | 'agent' | 'extractive';
  /** Markdown: the answer, or the evidence brief. Every claim cites its source. */
  answer: string;
  /**
   * Markdown, with the evidence brief: how it was found (the question's type, the repository-map
   * slice of the evidence files, what was searched and what was not). Surfaces show it folded or
   * after the answer.
   */
  details?: string;
  /**
   * True when nothing relevant was found: either the evidence was below the threshold (the
   * answer says so and no model was called), or the model, reading the evidence, found nothing
   * in it that answers the question (the answer is its words, citing nothing).
   */
  noContext: boolean;
  /** Citations in order of first use; for the extractive brief, the ranked evidence. */
  citations: Citation[];
  /** Files the answer cites, in order of first citation (Recall@k is measured on these). */
  files: string[];
  /** Why the model path was not taken or failed (no LLM configured, 429 after retries, …). */
  degraded?: string;
  /** The model that wrote the answer (`llm` and `agent` modes). */
  model?: string;
  /** Tokens the model read and wrote, when the endpoint reports them. */
  usage?: { promptTokens: number; completionTokens: number };
  /** The ids of the consulted sources, stored with the answer in the session (audit). */
  sources: string[];
  /** Wall time per phase, in ms. */
  timings: Record<string, number>;
  /** Present with `explain`: every path's raw results, the fusion, the rerank and the context. */
  explain?: OracleExplain;
}

export interface OracleExplain {
  analysis: AnalyzedQuestion;
  runs: Array<Omit<RetrieverRun, 'results'> & { results: Array<{ citation: string; method: string; score: number }> }>;
  ranked: Array<{ citation: string; fused: number; score: number; ranks: Record<string, number>; features: Record<string, number> }>;
  context: { tokens: number; budget: number; items: Array<{ tier: ContextTier; citation: string; tokens: number }>; dropped: AssembledContext['dropped'] };
  /**
   * The no-context decision (oracle/relevance.ts): `best` against `min` is the co-occurrence of the
   * question's concepts (with `cooccurrence`: the best chunk's and the best file's share, where the
   * best chunk is, the concepts weighed), or for a pasted report the top evidence's coverage of its
   * terms; absent weight against `maxAbsent`; names the index never mentions.
   */
  threshold: {
    best: number;
    min: number;
    absent: number;
    maxAbsent: number;
    unknownSymbols: string[];
    /** Which test found no context, in words; absent when there is context. */
    why?: string;
    cooccurrence?: { chunk: number; file: number; where?: string; concepts: string[] };
    /** Share of the known concepts' weight on words the code names things with, against `minNamed`. */
    named?: number;
    /** How many of its words the code names things with (the test needs at most one). */
    namedWords?: number;
    minNamed?: number;
    /** Share of the user's own words' weight on words the index never mentions. */
    ownAbsent?: number;
    /** Words the index never mentions that are common English, left out of the absence tests. */
    ordinary?: string[];
    /** Co-occurrence within the folders the question names. */
    scoped?: number;
    /** What showed the subject exists when that settled the decision. */
    vouched?: string;
  };
}
