/**
 * The oracle: one question in, one short cited answer out. It reads top to bottom as a
 * pipeline of small stages:
 *
 *   rewrite (conversational follow-ups) → analyze → retrieve (parallel paths, a timeout each)
 *   → expand (graph neighbours, git history of the best files) → fuse (RRF) → dedupe spans
 *   → rerank (features, then an endpoint or the model when configured) → "is there context?"
 *   → assemble (token budget by question type) → synthesize (model) or brief (extractive)
 *   → log the exchange and its sources. A model that reads the evidence and finds nothing in it
 *   that answers turns the answer into a no-context one, in its words.
 *
 * Every stage that can fail without making the answer wrong degrades instead: a slow or
 * broken path is skipped and reported, a failing model turns the answer into the extractive
 * brief, clearly marked.
 */
import type { Engine } from '../engine';
import { VltError, toVltError } from '../errors';
import type { LanguageServers } from '../intel/lsp';
import type { TagsProvider } from '../intel/navigate';
import type { LocateHistory } from '../locate/locate';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { recordToolExchange, type Memory } from '../memory';
import type { SessionEvent } from '../memory/session';
import { loadTokenCounter } from '../tokens';
import { silentLogger, systemClock, type Clock, type Logger, type WorkspaceFs } from '../ports';
import { FreshnessChecker } from '../tools/freshness';
import { runAgent, type AgentTool } from './agent';
import { analyzeQuestion } from './analyze';
import { extractiveBrief, searchedSummary } from './brief';
import { assembleContext, evidenceText } from './prompt-context';
import { dedupeSpans, featureRerank, fuseRuns, leadEvidence, pathWeights } from './fuse';
import { GitRetriever, type GitHistory } from './git-retriever';
import { LlmReranker } from './llm-rerank';
import { LocateRetriever } from './locate-retriever';
import { DiagnosticsRetriever } from './diagnostics-retriever';
import type { Reranker } from './rerank-endpoint';
import { CodeSearchRetriever, GraphRetriever, NavigationRetriever, NotesRetriever, ScopedSearchRetriever, StructureRetriever, TestsRetriever, ThreadsRetriever, type MemoryFreshness } from './retrievers';
import { codeChangedSince } from '../context/memory-freshness';
import { rewriteQuestion } from './rewrite';
import { decideContext, MAX_ABSENT, MIN_COOCCURRENCE, MIN_NAMED, type ContextDecision } from './relevance';
import { declinesToAnswer, noContextAnswer, synthesize } from './synthesize';
import type { AnalyzedQuestion, AssembledContext, Citation, OracleAnswer, OracleEvent, OracleExplain, RankedEvidence, RetrievalResult, Retriever, RetrieverRun } from './types';

export type SourceFamily = Retriever['family'];
export const SOURCE_FAMILIES: readonly SourceFamily[] = ['code', 'notes', 'threads', 'git'];

/** Per-path time budget: a path slower than this is skipped and reported, never awaited. */
export const DEFAULT_PATH_TIMEOUT_MS = 4000;
/** Results each path contributes to the fusion. */
const PATH_LIMIT = 12;
/** The head of the ranking an endpoint or model reranker may reorder. */
const RERANK_HEAD = 20;
/** A question longer than this is cut: it is a pasted document, and its head says the most. */
const MAX_QUESTION_CHARS = 20_000;

export interface OracleDeps {
  engine: Engine;
  /** File access for the freshness check: evidence from files changed since indexing is re-read. */
  fs?: WorkspaceFs;
  logger?: Logger;
  clock?: Clock;
  /** Notes, threads and the shared session; without it those paths are skipped. */
  memory?: Memory | (() => Promise<Memory | undefined>);
  /** Language servers and ctags for the navigation path. */
  intel?: { lsp?: LanguageServers; tags?: TagsProvider };
  git?: GitHistory;
  chat?: ChatModel;
  /** Required with `chat`: the prompt templates. */
  prompts?: PromptLibrary;
  /** An optional cross-encoder endpoint; reorders the head of the ranking. */
  reranker?: Reranker;
  /** Let the chat model rerank the head of the ranking (an extra round trip per question). */
  llmRerank?: boolean;
  /** Tools the model may call in agent mode. */
  agentTools?: () => AgentTool[];
  pathTimeoutMs?: number;
  /** The repository's past changes, for the locate path's history channel (the host reads git). */
  locateHistory?: () => Promise<LocateHistory | undefined>;
  /** Adjusts the first-phase retrieval paths (a host adding its own, tests adding faulty ones). */
  paths?: (defaults: Retriever[]) => Retriever[];
}

export interface AskOptions {
  /** Source families to consult (default: all). */
  sources?: readonly SourceFamily[];
  explain?: boolean;
  /** The shared conversation context to read (for follow-ups) and to record into. */
  session?: string;
  /** Who asks: an agent id or `user`. */
  author?: string;
  /** Answer extractively even when a model is configured. */
  noLlm?: boolean;
  /** Let the model call tools in a loop (needs a tool-calling model). */
  agent?: boolean;
  maxTurns?: number;
  /** Context budget in tokens (default by question type). */
  budgetTokens?: number;
  /** Do not write the exchange to threads or the session (benchmarks). */
  noLog?: boolean;
  /**
   * Record the question and answer in `session` (default true). A host that records every tool
   * call itself (the MCP server) turns this off so that the exchange is not there twice.
   */
  recordSession?: boolean;
  signal?: AbortSignal;
  onEvent?: (e: OracleEvent) => void;
  /**
   * The model for this question instead of the configured one (the editor's models, chosen in
   * the chat). Used only when the oracle has its prompt templates; `noLlm` still wins.
   */
  chat?: ChatModel;
}

/** Runs `fn` with its own abort signal that fires after `ms` or when `outer` aborts. */
async function withTimeout<T>(ms: number, outer: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; timeout: boolean; error?: unknown }> {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      ctl.abort(new VltError('CANCELLED', `timed out after ${ms} ms`));
      resolve('timeout');
    }, ms);
  });
  try {
    const r = await Promise.race([fn(ctl.signal).then((value) => ({ value })), timeout]);
    return r === 'timeout' ? { ok: false, timeout: true } : { ok: true, value: r.value };
  } catch (e) {
    return { ok: false, timeout: false, error: e };
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

/** The token counts an answer reports, from a model's usage when it sent any. */
function usageOf(u: { promptTokens: number; completionTokens: number } | undefined): { usage?: { promptTokens: number; completionTokens: number } } {
  return u ? { usage: { promptTokens: u.promptTokens, completionTokens: u.completionTokens } } : {};
}

export class Oracle {
  private readonly logger: Logger;
  private readonly clock: Clock;
  /** Kept across questions: it caches the workspace's directory names per index state. */
  private readonly scoped: ScopedSearchRetriever;

  constructor(private readonly deps: OracleDeps) {
    if (deps.chat && !deps.prompts) throw new VltError('INTERNAL', 'Oracle: a chat model needs the prompt templates (prompts)');
    this.logger = deps.logger ?? silentLogger;
    this.clock = deps.clock ?? systemClock;
    this.scoped = new ScopedSearchRetriever(deps.engine);
  }

  private async memory(): Promise<Memory | undefined> {
    const m = this.deps.memory;
    return typeof m === 'function' ? m() : m;
  }

  /** The retrieval paths of the first phase, in the order `--explain` lists them. */
  private paths(): Retriever[] {
    const memory = () => this.memory();
    const { engine, fs } = this.deps;
    const freshness: MemoryFreshness = (text, writtenAt) => codeChangedSince(engine, fs, text, Date.parse(writtenAt));
    const defaults: Retriever[] = [
      new CodeSearchRetriever(this.deps.engine),
      this.scoped,
      new NavigationRetriever({ engine: this.deps.engine, ...(this.deps.intel ? { intel: this.deps.intel } : {}) }),
      new TestsRetriever(this.deps.engine),
      new LocateRetriever(this.deps.engine, this.deps.locateHistory),
      new DiagnosticsRetriever(this.deps.engine, this.deps.intel?.lsp),
      new StructureRetriever(this.deps.engine),
      new NotesRetriever(memory, freshness),
      new ThreadsRetriever(memory, freshness),
    ];
    return this.deps.paths ? this.deps.paths(defaults) : defaults;
  }

  private async runPath(p: Retriever, q: AnalyzedQuestion, sources: ReadonlySet<SourceFamily>, signal: AbortSignal | undefined, emit: (e: OracleEvent) => void): Promise<RetrieverRun> {
    const run = await this.runPathQuietly(p, q, sources, signal, emit);
    if (run.status !== 'skipped') emit({ type: 'step', name: p.name, family: p.family, state: run.status, results: run.results.length, ms: Math.round(run.ms) });
    return run;
  }

  private async runPathQuietly(p: Retriever, q: AnalyzedQuestion, sources: ReadonlySet<SourceFamily>, signal: AbortSignal | undefined, emit: (e: OracleEvent) => void): Promise<RetrieverRun> {
    const base = { name: p.name, family: p.family };
    if (!sources.has(p.family)) return { ...base, status: 'skipped', ms: 0, reason: 'source not selected', results: [] };
    const applies = p.applies(q);
    if (applies !== true) return { ...base, status: 'skipped', ms: 0, reason: applies, results: [] };
    emit({ type: 'step', name: p.name, family: p.family, state: 'running' });
    const t0 = performance.now();
    const ms = this.deps.pathTimeoutMs ?? DEFAULT_PATH_TIMEOUT_MS;
    const r = await withTimeout(ms, signal, (s) => p.retrieve({ question: q, limit: PATH_LIMIT, signal: s }));
    const took = performance.now() - t0;
    if (r.ok) return { ...base, status: 'ok', ms: took, results: r.value };
    if (signal?.aborted) throw new VltError('CANCELLED', 'the question was cancelled');
    if (r.timeout) {
      this.logger.warn(`oracle: the ${p.name} path timed out after ${ms} ms; answering without it`);
      return { ...base, status: 'timeout', ms: took, reason: `no answer within ${ms} ms`, results: [] };
    }
    const err = toVltError(r.error);
    this.logger.warn(`oracle: the ${p.name} path failed (${err.code}): ${err.message}; answering without it`);
    return { ...base, status: 'failed', ms: took, reason: `${err.code}: ${err.message}`, results: [] };
  }

  /** The model that writes answers, when one is configured; without one answers are extractive. */
  get modelName(): string | undefined {
    return this.deps.chat && this.deps.prompts ? this.deps.chat.model : undefined;
  }

  // eslint-disable-next-line max-lines-per-function -- the oracle's pipeline in order (analyze, retrieve, fuse, rerank, decide, answer), each step a call; what stays inline is the explain record they all add to
  async ask(question: string, opts: AskOptions = {}): Promise<OracleAnswer> {
    const raw = question.trim();
    if (!raw) throw new VltError('USAGE', 'the question is empty');
    const asked = raw.length > MAX_QUESTION_CHARS ? raw.slice(0, MAX_QUESTION_CHARS) : raw;
    const emit = opts.onEvent ?? (() => {});
    const timings: Record<string, number> = {};
    const tStart = performance.now();
    let mark = tStart;
    const lap = (name: string) => {
      const now = performance.now();
      timings[name] = Number((now - mark).toFixed(2));
      mark = now;
    };
    const sources = new Set<SourceFamily>(opts.sources?.length ? opts.sources : SOURCE_FAMILIES);
    const chat = this.deps.prompts && !opts.noLlm ? (opts.chat ?? this.deps.chat) : undefined;
    const useModel = chat !== undefined;

    // 1. Conversational rewriting: a follow-up becomes a standalone question.
    const memory = opts.session !== undefined ? await this.memory() : undefined;
    const session = memory && opts.session !== undefined ? memory.session(opts.session) : undefined;
    let text = asked;
    let rewritten: string | undefined;
    let conversation = '';
    if (session) {
      const [events, focus] = await Promise.all([session.events(), session.focus()]);
      const recent = events.slice(-6).map((e) => ({ role: e.kind === 'question' ? ('user' as const) : e.kind === 'answer' ? ('assistant' as const) : ('tool' as const), text: e.text.slice(0, 1500) }));
      const asked_ = askedSymbols(events);
      const symbols = [...focus.symbols.filter((s) => !asked_.includes(s)), ...asked_];
      const rw = await rewriteQuestion(asked, { recent, focus: { symbols, files: focus.files } }, { ...(chat && this.deps.prompts ? { chat, prompts: this.deps.prompts } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
      if (rw.rewritten) {
        text = rw.text;
        rewritten = rw.text;
      }
      const subjects = [...focus.symbols.slice(-8), ...focus.files.slice(-5)];
      if (subjects.length) conversation = `Subjects so far: ${subjects.join(', ')}`;
    }
    lap('rewrite');

    // 2. Analysis.
    emit({ type: 'phase', phase: 'analyze', message: 'analysing the question' });
    const q = analyzeQuestion(text);
    lap('analyze');

    // 3. Retrieval, every path in parallel.
    emit({ type: 'phase', phase: 'retrieve', message: `searching ${[...sources].join(', ')}` });
    const runs = await Promise.all(this.paths().map((p) => this.runPath(p, q, sources, opts.signal, emit)));
    lap('retrieve');

    // 4. Second phase: neighbours and history of what the first phase found.
    let ranked = featureRerank(dedupeSpans(fuseRuns(runs, pathWeights(q))), q, this.clock.now());
    runs.push(...(await Promise.all([this.expandGraph(ranked, sources, opts.signal), this.runPath(this.gitPath(ranked), q, sources, opts.signal, emit)])));
    lap('expand');

    // 5. Fusion over every path, then the rerankers.
    emit({ type: 'phase', phase: 'rerank', message: 'ranking the evidence' });
    ranked = featureRerank(dedupeSpans(fuseRuns(runs, pathWeights(q))), q, this.clock.now());
    ranked = await this.rerankHead(leadEvidence(ranked, q), q, opts.signal, !useModel);
    lap('rerank');

    // No answer quotes silently stale code: evidence from files changed since indexing is re-read.
    ranked = await this.refresh(ranked);

    // 6. Is there anything relevant at all?
    // Calibration and the held-out check: see relevance.ts and the README's no-context table.
    let decision = decideContext(this.deps.engine, q, ranked, rewritten ? analyzeQuestion(asked) : q);
    let noContext = decision.noContext;

    // 7. Context.
    const count = await loadTokenCounter();
    const ctx = assembleContext(noContext ? [] : ranked, q, { count, engine: this.deps.engine, ...(opts.budgetTokens ? { budget: opts.budgetTokens } : {}), ...(conversation ? { conversation } : {}) });
    lap('assemble');

    // 8. The answer.
    let mode: OracleAnswer['mode'] = 'extractive';
    let answer: string;
    let citations: Citation[];
    let degraded: string | undefined;
    let details: string | undefined;
    let model: Pick<OracleAnswer, 'model' | 'usage'> = {};
    if (noContext) {
      const searched = searchedSummary(runs);
      answer = this.deps.prompts ? noContextAnswer(asked, searched, this.deps.prompts, decision.why) : fallbackNoContext(searched, decision.why);
      citations = [];
    } else {
      const synthesized = useModel ? await this.synthesize(text, q, ctx, conversation, opts) : undefined;
      if (synthesized && 'text' in synthesized) {
        mode = synthesized.mode;
        model = { model: synthesized.model, ...(synthesized.usage ? { usage: synthesized.usage } : {}) };
        answer = synthesized.text;
        citations = synthesized.citations;
        // The model read the evidence and found nothing in it that answers: that is no context,
        // in the model's own words (already streamed), not an uncited answer to replace.
        if (synthesized.declined) {
          noContext = true;
          decision = { ...decision, noContext: true, why: `${synthesized.model} found nothing in the evidence that answers it` };
        }
      } else {
        degraded = synthesized?.degraded ?? ((opts.chat ?? this.deps.chat) && opts.noLlm ? 'a model is configured but --no-llm was given' : undefined);
        ({ answer, details } = extractiveBrief({ question: q, context: ctx, runs, ...(degraded ? { degraded } : {}) }));
        citations = ctx.items.filter((i) => i.evidence).map((i) => citationOf(i.evidence!.result));
      }
    }
    // Citations are checked against the files as they are now: a file edited since it was
    // indexed may no longer hold the cited lines there.
    if (citations.length > 0) {
      const changed = await markChanged(citations, ctx, this.deps.engine);
      if (changed.length > 0) answer += `\n\n*Changed since it was indexed, so the cited lines may have moved: ${changed.join(', ')}.*`;
    }
    lap('answer');

    const files = [...new Set(citations.filter((c) => c.source === 'code' || c.source === 'lsp' || c.source === 'test').map((c) => c.path))];
    const consulted = ctx.items.flatMap((i) => (i.evidence ? [i.evidence.result.citation] : []));
    const result: OracleAnswer = {
      question: asked,
      ...(rewritten ? { rewritten } : {}),
      type: q.type,
      mode,
      answer,
      noContext,
      citations,
      files,
      ...(degraded ? { degraded } : {}),
      ...(details ? { details } : {}),
      ...model,
      sources: consulted,
      timings,
    };
    if (opts.explain) result.explain = explainOf(q, runs, ranked, ctx, decision);

    // 9. Memory: the dated oracle thread, and the session when one was named.
    if (!opts.noLog) await this.log(result, opts);
    timings.total = Number((performance.now() - tStart).toFixed(2));
    return result;
  }

  private async expandGraph(ranked: readonly RankedEvidence[], sources: ReadonlySet<SourceFamily>, signal: AbortSignal | undefined): Promise<RetrieverRun> {
    const g = new GraphRetriever(this.deps.engine);
    const base = { name: g.name, family: g.family };
    if (!sources.has('code')) return { ...base, status: 'skipped', ms: 0, reason: 'source not selected', results: [] };
    const top = ranked.slice(0, 5).map((e) => e.result);
    if (top.length === 0) return { ...base, status: 'skipped', ms: 0, reason: 'nothing to expand', results: [] };
    const t0 = performance.now();
    const r = await withTimeout(this.deps.pathTimeoutMs ?? DEFAULT_PATH_TIMEOUT_MS, signal, (s) => g.expand(top, 6, s));
    const ms = performance.now() - t0;
    if (r.ok) return { ...base, status: 'ok', ms, results: r.value };
    return { ...base, status: r.timeout ? 'timeout' : 'failed', ms, reason: r.timeout ? 'timed out' : toVltError(r.error).message, results: [] };
  }

  /** The git path, fed with the best files of the first phase. */
  private gitPath(ranked: readonly RankedEvidence[]): Retriever {
    const git = this.deps.git;
    if (!git) {
      return { name: 'git', family: 'git', applies: (q) => (q.type === 'history' ? 'no git history available' : 'only for history questions'), retrieve: () => Promise.resolve([]) };
    }
    const files = ranked
      .filter((e) => e.result.source === 'code' || e.result.source === 'lsp' || e.result.source === 'test')
      .slice(0, 5)
      .map((e) => ({ path: e.result.path, ...(e.result.startLine !== undefined ? { startLine: e.result.startLine } : {}), ...(e.result.endLine !== undefined ? { endLine: e.result.endLine } : {}) }));
    return new GitRetriever({ git, files: () => Promise.resolve(files) });
  }

  /**
   * Checks the files of the evidence that can reach the context against the disk: a changed
   * file has its lines re-read live and the evidence is marked `stale_index`; a vanished file's
   * evidence is dropped, since there is nothing left to cite.
   */
  private async refresh(ranked: RankedEvidence[]): Promise<RankedEvidence[]> {
    const fs = this.deps.fs;
    if (!fs) return ranked;
    const engine = this.deps.engine;
    const fresh = new FreshnessChecker(engine.root, fs, engine.config.index.maxFileBytes);
    const head = ranked.slice(0, 16);
    const checked = await Promise.all(
      head.map(async (e) => {
        const r = e.result;
        if (!r.contentHash || r.startLine === undefined || r.source === 'note' || r.source === 'thread' || r.source === 'git') return e;
        const live = await fresh.snippet(r.path, r.contentHash, r.startLine, r.endLine ?? r.startLine, r.content, Math.max(1, (r.endLine ?? r.startLine) - r.startLine + 1));
        if (!live.stale) return e;
        if (!live.snippet) return undefined;
        return { ...e, result: { ...r, content: live.snippet, metadata: { ...r.metadata, stale_index: true, why: live.note } } };
      }),
    );
    return [...checked.filter((e): e is RankedEvidence => e !== undefined), ...ranked.slice(16)];
  }

  /** Reorders the head with the cross-encoder endpoint, or the model when asked to, if either is configured. */
  private async rerankHead(ranked: RankedEvidence[], q: AnalyzedQuestion, signal: AbortSignal | undefined, noLlm: boolean): Promise<RankedEvidence[]> {
    const reranker =
      this.deps.reranker ?? (this.deps.llmRerank && this.deps.chat && this.deps.prompts && !noLlm ? new LlmReranker(this.deps.chat, this.deps.prompts, q.type) : undefined);
    if (!reranker || ranked.length < 2) return ranked;
    const head = ranked.slice(0, RERANK_HEAD);
    try {
      const scores = await reranker.rerank(q.text, head.map((e) => evidenceText(e).slice(0, 2000)), { topN: head.length, ...(signal ? { signal } : {}) });
      const byIndex = new Map(scores.map((s) => [s.index, s.score]));
      const reordered = head
        .map((e, i) => ({ ...e, features: { ...e.features, rerank: byIndex.get(i) ?? 0 } }))
        .sort((a, b) => (b.features.rerank ?? 0) - (a.features.rerank ?? 0));
      return [...reordered, ...ranked.slice(RERANK_HEAD)];
    } catch (e) {
      this.logger.warn(`oracle: the ${reranker.name} reranker failed (${toVltError(e).message}); keeping the feature ranking`);
      return ranked;
    }
  }

  private async synthesize(
    text: string,
    q: AnalyzedQuestion,
    ctx: AssembledContext,
    conversation: string,
    opts: AskOptions,
  ): Promise<{ text: string; citations: Citation[]; declined: boolean; mode: 'llm' | 'agent'; model: string; usage?: { promptTokens: number; completionTokens: number } } | { degraded: string }> {
    const chat = (opts.chat ?? this.deps.chat)!;
    const prompts = this.deps.prompts!;
    const onEvent = opts.onEvent;
    try {
      const agent = Boolean(opts.agent && this.deps.agentTools);
      const req = { question: text, analysis: q, context: ctx, ...(conversation ? { conversation } : {}) };
      opts.onEvent?.({ type: 'phase', phase: agent ? 'agent' : 'synthesize', message: agent ? `asking ${chat.model} with tools` : `asking ${chat.model}` });
      const r = agent
        ? await runAgent(req, { chat, prompts, tools: await this.agentTools(opts), ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}), ...(onEvent ? { onEvent } : {}), ...(opts.signal ? { signal: opts.signal } : {}) })
        : await synthesize(req, { chat, prompts, ...(onEvent ? { onEvent } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
      const declined = declinesToAnswer(r);
      if (r.citations.length === 0 && !declined) return { degraded: `${chat.model} answered without citing the evidence${agent ? ' or what its tools found' : ''}; showing the evidence instead` };
      return { text: r.text, citations: r.citations, declined, mode: agent ? 'agent' : 'llm', model: r.model, ...usageOf(r.usage) };
    } catch (e) {
      const err = toVltError(e);
      if (err.code === 'CANCELLED') throw err;
      this.logger.warn(`oracle: the language model failed (${err.message}); answering with the evidence brief`);
      return { degraded: `the language model failed: ${err.message}` };
    }
  }

  /**
   * The agent's tools; with a session, each call and its result also go into it (as every MCP
   * call does), so that a later question can refer to what the agent looked up.
   */
  private async agentTools(opts: AskOptions): Promise<AgentTool[]> {
    const tools = this.deps.agentTools?.() ?? [];
    const memory = opts.session !== undefined && opts.recordSession !== false ? await this.memory() : undefined;
    if (!memory || opts.session === undefined) return tools;
    const session = memory.session(opts.session);
    const author = `oracle-agent${opts.author ? ` for ${opts.author}` : ''}`;
    return tools.map((t) => ({
      ...t,
      run: async (args: unknown, signal?: AbortSignal): Promise<string> => {
        const record = (output: string | undefined, error?: string) =>
          recordToolExchange(session, { tool: t.name, author, input: args, output, ...(error !== undefined ? { error } : {}) }).catch((e: unknown) =>
            this.logger.warn(`oracle: could not record ${t.name} in the session: ${toVltError(e).message}`),
          );
        try {
          const out = await t.run(args, signal);
          await record(out);
          return out;
        } catch (e) {
          const err = toVltError(e);
          await record(undefined, `${err.code}: ${err.message}`);
          throw e;
        }
      },
    }));
  }

  private async log(result: OracleAnswer, opts: AskOptions): Promise<void> {
    const memory = await this.memory().catch(() => undefined);
    if (!memory) return;
    try {
      const sources = result.sources.length ? `\n\nSources: ${result.sources.join(' ')}` : '';
      await memory.logOracleExchange({
        question: result.question,
        answer: `${result.answer}${sources}`,
        ...(opts.author ? { author: opts.author } : {}),
        ...(opts.session !== undefined && opts.recordSession !== false ? { session: opts.session } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (e) {
      // The answer stands even when memory cannot be written (locked, read-only disk).
      this.logger.warn(`oracle: could not record the exchange: ${toVltError(e).message}`);
    }
  }
}

/**
 * The symbols the conversation asked about, oldest first: the subjects of earlier questions and
 * the symbol arguments of earlier tool calls. They say what "it" refers to far better than the
 * names an answer happened to mention, so they go last (the most recent focus).
 */
function askedSymbols(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  const add = (s: string) => {
    const i = out.indexOf(s);
    if (i >= 0) out.splice(i, 1);
    out.push(s);
  };
  for (const e of events.slice(-20)) {
    if (e.kind === 'question') for (const s of analyzeQuestion(e.text).symbols.slice(0, 2)) add(s);
    else if (e.kind === 'tool_call') {
      const args = /^[\w.-]+\((.*)\)$/s.exec(e.text)?.[1];
      try {
        const parsed = args ? (JSON.parse(args) as Record<string, unknown>) : {};
        for (const k of ['symbol', 'query', 'focus']) {
          const v = parsed[k];
          if (typeof v === 'string' && /^[A-Za-z_$][\w$.:#]*$/.test(v)) add(v);
        }
        // An ask_oracle call (the chat's questions, an agent's) is a question like any other.
        if (typeof parsed.question === 'string') for (const s of analyzeQuestion(parsed.question).symbols.slice(0, 2)) add(s);
      } catch {
        // A tool call recorded with arguments that are not JSON names nothing.
      }
    }
  }
  return out;
}

/**
 * Marks, in place, the code citations whose file no longer has the content it was indexed with
 * (re-hashed now, once per file), and returns them as written.
 */
async function markChanged(citations: Citation[], ctx: AssembledContext, engine: Engine): Promise<string[]> {
  const indexed = new Map<string, string>();
  for (const i of ctx.items) {
    const r = i.evidence?.result;
    if (r?.contentHash && (r.source === 'code' || r.source === 'test' || r.source === 'lsp')) indexed.set(r.path, r.contentHash);
  }
  if (indexed.size === 0) return [];
  const checker = new FreshnessChecker(engine.root, engine.workspaceFs, engine.config.index.maxFileBytes);
  const out: string[] = [];
  for (const c of citations) {
    const hash = indexed.get(c.path);
    if (!hash) continue;
    const state = await checker.state(c.path, hash);
    if (state.kind === 'same') continue;
    c.changed = true;
    out.push(c.citation);
  }
  return out;
}

function citationOf(r: RetrievalResult): Citation {
  // A reference is cited at the line of the use, not at the start of the lines shown around it.
  const line = r.method === 'reference' && typeof r.metadata.line === 'number' ? r.metadata.line : r.startLine;
  return { citation: r.citation, source: r.source, path: r.path, ...(line !== undefined ? { line } : {}) };
}

function fallbackNoContext(searched: readonly string[], why: string | undefined): string {
  return `No relevant project context was found for this question${why ? ` (${why})` : ''}. Searched: ${searched.join('; ')}.`;
}

function explainOf(q: AnalyzedQuestion, runs: readonly RetrieverRun[], ranked: readonly RankedEvidence[], ctx: AssembledContext, decision: ContextDecision): OracleExplain {
  const r = decision.relevance;
  return {
    analysis: q,
    runs: runs.map((r) => ({
      name: r.name,
      family: r.family,
      status: r.status,
      ms: Number(r.ms.toFixed(2)),
      ...(r.reason ? { reason: r.reason } : {}),
      results: r.results.map((x) => ({ citation: x.citation, method: x.method, score: Number(x.score.toFixed(4)) })),
    })),
    ranked: ranked.slice(0, 20).map((e) => ({ citation: e.result.citation, fused: Number(e.fused.toFixed(5)), score: Number(e.score.toFixed(4)), ranks: e.ranks, features: e.features })),
    context: { tokens: ctx.tokens, budget: ctx.budget, items: ctx.items.map((i) => ({ tier: i.tier, citation: i.citation, tokens: i.tokens })), dropped: ctx.dropped },
    threshold: {
      best: Number(decision.covered.toFixed(3)),
      min: r && q.type !== 'report' ? MIN_COOCCURRENCE : 0,
      absent: Number(decision.absent.toFixed(3)),
      maxAbsent: MAX_ABSENT,
      unknownSymbols: decision.unknownSymbols,
      ...(decision.why ? { why: decision.why } : {}),
      ...(decision.vouched ? { vouched: decision.vouched } : {}),
      ...(r
        ? {
            cooccurrence: { chunk: Number(r.chunk.toFixed(3)), file: Number(r.file.toFixed(3)), ...(r.where ? { where: r.where } : {}), concepts: r.concepts },
            named: Number(r.named.toFixed(3)),
            namedWords: r.namedWords,
            minNamed: MIN_NAMED,
            ownAbsent: Number(r.ownAbsent.toFixed(3)),
            ...(r.ordinary ? { ordinary: r.ordinary } : {}),
            ...(r.scoped !== undefined ? { scoped: Number(r.scoped.toFixed(3)) } : {}),
          }
        : {}),
    },
  };
}
