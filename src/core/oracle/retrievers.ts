/**
 * The oracle's retrieval paths over the engine and the memory. Each path turns one kind of
 * source into {@link RetrievalResult}s and nothing more: fusion, reranking and budgets happen
 * later, once, for all of them.
 *
 * - `code`: the engine's hybrid search (BM25, symbol names, paths, and vectors when configured).
 * - `tests`: the same search restricted to test files, for behavioural questions.
 * - `navigation`: definitions and references of the symbols the question names, through the
 *   provider chain (language server, ctags, the symbol graph, search).
 * - `notes` and `threads`: the markdown vault and the development threads.
 * - `graph` (a second-phase path): 1-hop neighbours of the best code hits: the files that
 *   import them and the callers of their definitions.
 * - `git` lives in `git.ts`.
 */
import type { Engine, SearchHit } from '../engine';
import type { LanguageServers } from '../intel/lsp';
import type { NavLocation, TagsProvider } from '../intel/navigate';
import type { Memory } from '../memory';
import { ORACLE_LOG_PREFIX } from '../memory/threads';
import type { CodeChange } from '../context/memory-freshness';
import { inNamedDir, isTestPath } from './paths';
export { isTestPath } from './paths';
import type { AnalyzedQuestion, RetrievalRequest, RetrievalResult, Retriever, SourceType } from './types';


/** The citation of a code location: `[path:line]` or `[path:start-end]`. */
export function codeCitation(path: string, start: number, end?: number): string {
  return end !== undefined && end > start ? `[${path}:${start}-${end}]` : `[${path}:${start}]`;
}

/**
 * A hit on a chunk that holds several small definitions, narrowed to the one the search matched:
 * from its doc comment to its end. Otherwise the evidence would be the search snippet, which
 * starts at the definition's first line and leaves its doc comment out.
 */
function narrowToSymbol(engine: Engine, h: SearchHit): SearchHit {
  if (!h.symbol || h.end_line - h.start_line < 12) return h;
  const file = engine.store.getFile(h.path);
  if (!file) return h;
  const last = h.symbol.split(/[.:#]/).pop();
  const sym = engine.store.symbolsOfFile(file.id).find((x) => (x.qualifiedName === h.symbol || x.name === last) && x.startLine >= h.start_line && x.startLine <= h.end_line);
  if (!sym || sym.startLine - h.start_line < 3) return h;
  const chunk = engine.chunkAround(h.path, sym.startLine);
  if (!chunk) return h;
  const start = docStart(chunk, sym.startLine);
  const end = Math.min(chunk.endLine, Math.max(sym.endLine, start + 11));
  const lines = chunk.text.split('\n').slice(start - chunk.startLine, end - chunk.startLine + 1);
  return { ...h, start_line: start, end_line: end, snippet: lines.slice(0, 24).join('\n') };
}

/**
 * A hit whose snippet starts inside its chunk (at the matched definition, or at the lines with
 * the query's words) narrowed to the snippet's lines, so that the evidence's range says which
 * lines its content holds.
 */
function narrowToSnippet(h: SearchHit): SearchHit {
  if (h.snippet_line === undefined || h.snippet_line === h.start_line) return h;
  return { ...h, start_line: h.snippet_line, end_line: h.snippet_line + h.snippet.split('\n').length - 1 };
}

function fromHit(engine: Engine, hit: SearchHit, method: string, source: SourceType = isTestPath(hit.path) ? 'test' : 'code'): RetrievalResult {
  const narrowed = narrowToSymbol(engine, hit);
  const h = narrowed === hit ? narrowToSnippet(hit) : narrowed;
  return {
    key: `code:${h.path}:${h.start_line}-${h.end_line}`,
    source,
    path: h.path,
    startLine: h.start_line,
    endLine: h.end_line,
    content: h.snippet,
    score: h.score,
    method,
    citation: codeCitation(h.path, h.start_line, h.end_line),
    contentHash: h.content_hash,
    metadata: { symbol: h.symbol, kind: h.kind, retrievers: h.retrievers },
  };
}

/** Runs the search with the question's language filter, and without it when that finds nothing. */
async function searchCode(engine: Engine, q: AnalyzedQuestion, k: number, signal: AbortSignal): Promise<SearchHit[]> {
  const lang = q.languages.length === 1 ? q.languages[0] : undefined;
  if (lang) {
    const filtered = await engine.search(q.text, { k, language: lang, signal, withSnippetLine: true });
    if (filtered.hits.length > 0) return filtered.hits;
  }
  return (await engine.search(q.text, { k, signal, withSnippetLine: true })).hits;
}

export class CodeSearchRetriever implements Retriever {
  readonly name = 'code';
  readonly family = 'code';
  constructor(private readonly engine: Engine) {}

  applies(): true {
    return true;
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const hits = await searchCode(this.engine, req.question, req.limit, req.signal);
    return hits.map((h) => fromHit(this.engine, h, h.retrievers.join('+') || 'search'));
  }
}

/** The first line of the comment block right above `line` (or `line`), within the chunk. */
function docStart(chunk: { startLine: number; text: string }, line: number): number {
  if (line <= chunk.startLine) return chunk.startLine;
  const lines = chunk.text.split('\n');
  let start = line;
  while (start > chunk.startLine && line - start < 12) {
    const above = lines[start - 1 - chunk.startLine]?.trim() ?? '';
    if (!/^(?:\/\/|#|\*|\/\*|\*\/|"""|@)/.test(above)) break;
    start--;
  }
  return start;
}

/** Test files about the question: how the code is expected to behave. */
export class TestsRetriever implements Retriever {
  readonly name = 'tests';
  readonly family = 'code';
  constructor(private readonly engine: Engine) {}

  applies(q: AnalyzedQuestion): true | string {
    return q.type === 'behavioural' ? true : 'only for behavioural questions';
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    // The search has no "any of these globs" filter; asking for more and keeping the test
    // files is simpler and, at these sizes, as fast.
    const hits = await searchCode(this.engine, { ...req.question, text: `${req.question.text} test` }, req.limit * 6, req.signal);
    return hits
      .filter((h) => isTestPath(h.path))
      .slice(0, req.limit)
      .map((h) => fromHit(this.engine, h, 'tests', 'test'));
  }
}

export interface NavigationRetrieverDeps {
  engine: Engine;
  intel?: { lsp?: LanguageServers; tags?: TagsProvider };
  /** Upper bound for the language server's part; the fallback chain answers after it. */
  lspTimeoutMs?: number;
  /** Upper bound for resolving references (default {@link REFERENCES_BUDGET_MS}). */
  referencesBudgetMs?: number;
}

/** How long the navigation path may spend resolving references before it gives up on them. */
export const REFERENCES_BUDGET_MS = 600;

/**
 * Definitions of the symbols a question names, and their references for reference questions.
 * Answers that a language server gave are `lsp` evidence (exact); the fallback chain's answers
 * are code evidence with the provenance in their metadata.
 */
export class NavigationRetriever implements Retriever {
  readonly name = 'navigation';
  readonly family = 'code';
  constructor(private readonly deps: NavigationRetrieverDeps) {}

  applies(q: AnalyzedQuestion): true | string {
    return q.symbols.length > 0 ? true : 'the question names no symbol';
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const q = req.question;
    const nav = this.deps.engine.navigator(this.deps.intel ?? {});
    const opts = { signal: req.signal, lspTimeoutMs: this.deps.lspTimeoutMs ?? 2000, ...(this.deps.intel?.lsp ? {} : { noLsp: true }) };
    // The subject first; a long report names many identifiers, and only the first few matter.
    const symbols = q.symbols.slice(0, q.type === 'definition' || q.type === 'references' ? 2 : 3);
    const out: RetrievalResult[] = [];
    const seen = new Set<string>();
    const push = (loc: NavLocation, symbol: string, method: 'definition' | 'reference', rank: number) => {
      // Generated code is found by navigation but is no evidence (see `[index] generated`).
      if (this.deps.engine.isNavigationOnly(loc.path)) return;
      const chunk = this.deps.engine.chunkAround(loc.path, loc.line);
      // A reference is shown as the lines around it; a definition from its doc comment to the
      // end of its chunk (a chunk may hold several small definitions before this one).
      const start = method === 'reference' ? Math.max(chunk?.startLine ?? loc.line, loc.line - 3) : chunk ? docStart(chunk, loc.line) : loc.line;
      const end = method === 'reference' ? Math.min(chunk?.endLine ?? loc.line, loc.line + 3) : (chunk?.endLine ?? loc.line);
      const key = `code:${loc.path}:${start}-${end}`;
      if (seen.has(key)) return;
      seen.add(key);
      const text = chunk ? chunk.text.split('\n').slice(start - chunk.startLine, end - chunk.startLine + 1).join('\n') : (loc.signature ?? '');
      out.push({
        key,
        source: loc.provenance === 'lsp' ? 'lsp' : isTestPath(loc.path) ? 'test' : 'code',
        path: loc.path,
        startLine: start,
        endLine: end,
        content: text,
        // Exact answers outrank guesses; within each, the chain's own order.
        score: (loc.exact ? 2 : loc.confidence === 'high' ? 1.5 : loc.confidence === 'medium' ? 1 : 0.5) / (1 + rank * 0.1),
        method,
        citation: method === 'reference' ? codeCitation(loc.path, loc.line) : codeCitation(loc.path, start, end),
        ...(chunk ? { contentHash: chunk.contentHash } : {}),
        metadata: { symbol, kind: loc.kind ?? chunk?.kind, line: loc.line, provenance: loc.provenance, exact: loc.exact, confidence: loc.confidence, how: loc.how, ...(method === 'definition' ? { definition: true } : {}) },
      });
    };
    for (const symbol of symbols) {
      if (req.signal.aborted) break;
      const def = await nav.definition(symbol, opts);
      // A guess from plain text search is not a definition: the code path finds text anyway,
      // and calling it one would make an unknown name look like a known symbol.
      const sure = def.locations.filter((l) => l.provenance !== 'search' && (l.exact || l.confidence !== 'low'));
      const defs = sure.length > 0 || !def.ambiguous ? sure : oneDeclaration(def.locations);
      defs.slice(0, 5).forEach((l, i) => push(l, def.symbol || symbol, 'definition', i));
      if (q.type === 'references' && defs.length > 0) {
        // Resolving every use of a common name parses many files; past the budget the code
        // path's matches stand in for the references, rather than the whole answer waiting.
        const budget = AbortSignal.any([req.signal, AbortSignal.timeout(this.deps.referencesBudgetMs ?? REFERENCES_BUDGET_MS)]);
        try {
          const refs = await nav.references(symbol, { ...opts, signal: budget, limit: req.limit });
          refs.locations.forEach((l, i) => push(l, refs.symbol || symbol, 'reference', i));
        } catch (e) {
          if (req.signal.aborted || !budget.aborted) throw e;
        }
      }
    }
    return out.slice(0, req.limit * 2);
  }
}

/** The kinds that declare something by itself, not a member or a value inside another definition. */
const DECLARATION_KINDS: ReadonlySet<string> = new Set(['function', 'class', 'interface', 'struct', 'enum', 'trait', 'type', 'module']);

/**
 * Of an ambiguous name's candidates, the one declaration among fields, methods and locals of the
 * same name: RxJS's `timeout` operator (its overload signatures in one file) beside the
 * `timeout` fields of two config types. Several declarations in different files (Go's many
 * `Reader` types) stay ambiguous: nothing chooses between them, so none is evidence.
 */
function oneDeclaration(candidates: readonly NavLocation[]): NavLocation[] {
  const decls = candidates.filter((l) => l.provenance !== 'search' && l.kind !== undefined && DECLARATION_KINDS.has(l.kind));
  const first = decls[0];
  return first !== undefined && decls.every((l) => l.path === first.path) ? decls : [];
}

/** Memory is searched by words: a question of question words alone has nothing to look for. */
function hasSearchTerms(q: AnalyzedQuestion): true | string {
  return q.terms.length > 0 || q.symbols.length > 0 ? true : 'no search terms';
}

/** A retriever over the workspace's memory, searched by the question's words; nothing when memory is unavailable. */
/** The files a memory text names that changed after `writtenAt` (ISO); see context/memory-freshness.ts. */
export type MemoryFreshness = (text: string, writtenAt: string) => Promise<CodeChange[]>;

abstract class MemoryRetriever implements Retriever {
  abstract readonly name: string;
  abstract readonly family: Retriever['family'];
  constructor(
    private readonly memory: () => Promise<Memory | undefined>,
    protected readonly freshness?: MemoryFreshness,
  ) {}

  /**
   * The evidence with what changed in the code it names since it was written: said in its text,
   * so that the answer (a model's or the brief) can say the note or entry may be out of date.
   */
  protected async marked(r: RetrievalResult, fullText: string, writtenAt: string | undefined): Promise<RetrievalResult> {
    if (!this.freshness || !writtenAt) return r;
    const changed = await this.freshness(fullText, writtenAt).catch(() => []);
    if (changed.length === 0) return r;
    const list = changed.map((c) => `${c.path} (${c.changed_at.slice(0, 10)})`).join(', ');
    return { ...r, content: `${r.content}\n(The code this names changed after it was written: ${list}.)`, metadata: { ...r.metadata, code_changed: changed } };
  }

  applies(q: AnalyzedQuestion): true | string {
    return hasSearchTerms(q);
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const memory = await this.memory();
    return memory ? this.search(memory, req) : [];
  }

  protected abstract search(memory: Memory, req: RetrievalRequest): Promise<RetrievalResult[]>;
}

/** The notes vault: each hit is a note with its best snippet. */
export class NotesRetriever extends MemoryRetriever {
  readonly name = 'notes';
  readonly family = 'notes';

  protected async search(memory: Memory, req: RetrievalRequest): Promise<RetrievalResult[]> {
    const hits = await memory.vault.search(req.question.text, { k: req.limit });
    const results = hits.map((h) => ({
      key: `note:${h.path}`,
      source: 'note' as const,
      path: h.path,
      startLine: h.line,
      endLine: h.line,
      content: `${h.title}\n${h.snippet}`,
      score: h.score,
      method: 'notes-bm25',
      citation: `[note:${h.path}]`,
      metadata: { title: h.title, tags: h.tags, line: h.line },
    }));
    if (!this.freshness) return results;
    return Promise.all(
      results.map(async (r) => {
        const note = await memory.vault.read(r.path).catch(() => undefined);
        return note ? this.marked(r, note.content, note.modified) : r;
      }),
    );
  }
}

/** Development threads: entries that match the question. */
export class ThreadsRetriever extends MemoryRetriever {
  readonly name = 'threads';
  readonly family = 'threads';

  protected async search(memory: Memory, req: RetrievalRequest): Promise<RetrievalResult[]> {
    // The oracle's own logged answers would cite themselves back: they are not evidence, and
    // are left out before ranking, so that they never fill the places of the threads that are.
    const hits = await memory.threads.seek(req.question.text, { k: req.limit, skipPrefix: ORACLE_LOG_PREFIX, signal: req.signal });
    return Promise.all(
      hits.map((h) =>
        this.marked(
          {
            key: `thread:${h.thread}#${h.seq}`,
            source: 'thread' as const,
            path: h.thread,
            content: h.text,
            score: h.score,
            method: `thread-${h.retrievers.join('+')}`,
            citation: `[thread:${h.thread}#${h.seq}]`,
            metadata: { author: h.author, date: h.created_at, seq: h.seq },
          },
          h.text,
          h.created_at,
        ),
      ),
    );
  }
}

/**
 * 1-hop neighbours of the best code evidence (a second-phase path): callers of the definitions
 * found, and the files importing the evidence's files. They go into the context after the
 * primary matches, as neighbours.
 */
export class GraphRetriever {
  readonly name = 'graph';
  readonly family = 'code' as const;
  constructor(private readonly engine: Engine) {}

  async expand(top: readonly RetrievalResult[], limit: number, signal: AbortSignal): Promise<RetrievalResult[]> {
    const out: RetrievalResult[] = [];
    const seen = new Set(top.map((t) => t.key));
    const add = (path: string, line: number, method: string, why: string, score: number) => {
      const chunk = this.engine.chunkAround(path, line);
      if (!chunk) return;
      const key = `code:${path}:${chunk.startLine}-${chunk.endLine}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push({
        key,
        source: isTestPath(path) ? 'test' : 'code',
        path,
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        content: chunk.text.split('\n').slice(0, 12).join('\n'),
        score,
        method,
        citation: codeCitation(path, chunk.startLine, chunk.endLine),
        contentHash: chunk.contentHash,
        metadata: { symbol: chunk.symbol, kind: chunk.kind, why },
      });
    };
    const code = top.filter((t) => (t.source === 'code' || t.source === 'lsp') && t.startLine !== undefined).slice(0, 3);
    // Callers of the definitions among the best hits.
    for (const [i, t] of code.entries()) {
      if (signal.aborted) break;
      const symbol = typeof t.metadata.symbol === 'string' ? t.metadata.symbol.split(/[.:#]/).pop() : undefined;
      if (!symbol || symbol.length < 3) continue;
      const refs = this.engine.store.findRefs(symbol, 200).filter((r) => r.path !== t.path && r.kind === 'call');
      for (const r of refs.slice(0, 3)) add(r.path, r.line, 'callers', `calls ${symbol} (${t.citation})`, 1 / (1 + i));
    }
    // Importers of the best files.
    const graph = await this.engine.graph();
    for (const [i, t] of code.entries()) {
      if (signal.aborted) break;
      const node = graph.file(t.path);
      if (!node) continue;
      for (const id of graph.importers(node.id).slice(0, 2)) {
        const imp = graph.file(id);
        if (imp) add(imp.path, 1, 'importers', `imports ${t.path}`, 0.5 / (1 + i));
      }
    }
    return out.slice(0, limit);
  }
}

/**
 * The files of a directory the question names ("the crypto/tls package", `src/core/memory`),
 * each with its top-level definitions: what a structural question is answered from. Files
 * directly in the directory come first, the file named like the directory (`tls.go`,
 * `index.ts`, `__init__.py`) and `doc.go` before the rest, tests last.
 */
export class StructureRetriever implements Retriever {
  readonly name = 'structure';
  readonly family = 'code';
  constructor(private readonly engine: Engine) {}

  applies(q: AnalyzedQuestion): true | string {
    return q.dirs?.length ? true : 'the question names no directory or package';
  }

  retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const dirs = req.question.dirs ?? [];
    const files = this.engine.store.listFiles().filter((f) => inNamedDir(f.path, dirs) && !this.engine.isNavigationOnly(f));
    const dirOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
    const depth = (p: string) => Math.min(...dirs.map((d) => {
      const dir = dirOf(p);
      const at = dir === d ? 0 : dir.endsWith(`/${d}`) ? 0 : 1 + dir.split('/').length;
      return at;
    }));
    const stem = (p: string) => p.slice(p.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '').toLowerCase();
    const lead = (p: string) => {
      const base = dirOf(p).split('/').pop()?.toLowerCase() ?? '';
      const s = stem(p);
      return s === base || s === 'doc' || s === 'index' || s === '__init__' || s === 'mod' || s === 'lib' ? 0 : 1;
    };
    const ranked = files
      .map((f) => ({ f, syms: this.engine.store.symbolsOfFile(f.id).filter((x) => !x.container && x.kind !== 'heading') }))
      .filter((x) => x.syms.length > 0)
      .sort((a, b) => depth(a.f.path) - depth(b.f.path) || Number(isTestPath(a.f.path)) - Number(isTestPath(b.f.path)) || lead(a.f.path) - lead(b.f.path) || b.syms.length - a.syms.length || a.f.path.localeCompare(b.f.path))
      .slice(0, req.limit);
    return Promise.resolve(
      ranked.map(({ f, syms }, i) => {
        const shown = syms.sort((a, b) => a.startLine - b.startLine).slice(0, 10);
        const first = shown[0]!.startLine;
        const last = shown[shown.length - 1]!.endLine;
        return {
          key: `structure:${f.path}`,
          source: isTestPath(f.path) ? ('test' as const) : ('code' as const),
          path: f.path,
          startLine: first,
          endLine: last,
          content: [`${syms.length} top-level definitions, among them:`, ...shown.map((x) => `  L${x.startLine} ${x.signature.slice(0, 140)}`)].join('\n'),
          score: 1 / (1 + i),
          method: 'directory',
          citation: codeCitation(f.path, first),
          contentHash: f.hash,
          metadata: { kind: 'file', definitions: syms.length },
        };
      }),
    );
  }
}

/** Directory names too generic to scope a search by. */
const GENERIC_DIRS = new Set(['src', 'lib', 'pkg', 'internal', 'cmd', 'test', 'tests', 'core', 'app', 'main', 'util', 'utils', 'common', 'testdata', 'docs', 'doc', 'example', 'examples']);

/**
 * The code search again, scoped to the directories the question points at: those it names
 * (`crypto/tls`, "the bufio package") and those named like one of its words ("base64 decoding"
 * → `encoding/base64`, "the memory session" → `src/core/memory`). In code laid out by package
 * this is the strongest prior there is, and a global ranking dilutes it.
 */
export class ScopedSearchRetriever implements Retriever {
  readonly name = 'scoped';
  readonly family = 'code';
  private dirsByName: { version: string; map: Map<string, string[]> } | undefined;
  constructor(private readonly engine: Engine) {}

  private directories(): Map<string, string[]> {
    const version = this.engine.stateVersion;
    if (this.dirsByName?.version !== version) {
      const map = new Map<string, string[]>();
      const seen = new Set<string>();
      for (const f of this.engine.store.listFiles()) {
        const dir = f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '';
        if (!dir || seen.has(dir)) continue;
        seen.add(dir);
        const name = dir.slice(dir.lastIndexOf('/') + 1).toLowerCase();
        map.set(name, [...(map.get(name) ?? []), dir]);
      }
      this.dirsByName = { version, map };
    }
    return this.dirsByName.map;
  }

  /** The directories to search, most specific first, at most three. */
  scopes(q: AnalyzedQuestion): string[] {
    const byName = this.directories();
    const out: string[] = [];
    const add = (d: string) => {
      if (!out.includes(d)) out.push(d);
    };
    for (const d of q.dirs ?? []) {
      const last = d.slice(d.lastIndexOf('/') + 1).toLowerCase();
      for (const dir of byName.get(last) ?? []) if (dir === d || dir.endsWith(`/${d}`)) add(dir);
    }
    for (const t of q.terms) {
      const w = t.toLowerCase();
      if (w.length < 3 || GENERIC_DIRS.has(w)) continue;
      // A word naming many directories (`internal`, `test`) says little; one or two is a prior.
      const dirs = (byName.get(w) ?? []).filter((d) => !/(^|\/)(testdata|vendor|node_modules|fixtures?)(\/|$)/.test(d));
      if (dirs.length >= 1 && dirs.length <= 2) for (const d of dirs.sort((a, b) => a.length - b.length)) add(d);
    }
    return out.slice(0, 3);
  }

  applies(q: AnalyzedQuestion): true | string {
    return this.scopes(q).length > 0 ? true : 'no directory named by the question or its words';
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const out: RetrievalResult[] = [];
    const scopes = this.scopes(req.question);
    const per = Math.max(3, Math.ceil(req.limit / scopes.length));
    for (const dir of scopes) {
      const res = await this.engine.search(req.question.text, { k: per, pathGlob: `${dir}/**`, signal: req.signal, withSnippetLine: true });
      for (const h of res.hits) out.push(fromHit(this.engine, h, `scoped:${dir}`));
    }
    return out.slice(0, req.limit);
  }
}
