/**
 * The engine's search side: hybrid search over the index with its answer contract (hits,
 * snippets, notes, `--explain`), and the reads beside it that callers of search need (plain
 * BM25 chunks, the chunk around a line, how rare terms are). It holds the small caches search
 * reads (chunk ranges, file paths, reference counts), which the engine clears when files change.
 */
import { VltError } from '../errors';
import { VECTORS_OFF_NOTE } from '../status';
import type { EmbeddingProvider } from '../ports';
import type { IndexStore, ChunkRow } from '../store/store';
import { hybridSearch, normalizeSymbolName, type FusedHit, type HybridResult, type RetrieverRun, type SearchSources } from './hybrid';
import type { ChunkKindFilter, RankStage } from './rank';
import type { SearchIndex } from './orama-index';
import type { AnalyzedQuery } from './query';
import { hitSnippet, SNIPPET_LINES } from './snippet';
import type { SymbolTables } from './symbol-tables';
import { tokenize } from './tokenizer';

/** One search hit: the stable `--json` contract of `vlt coderag search`. */
export interface SearchHit {
  path: string;
  start_line: number;
  end_line: number;
  symbol: string | null;
  kind: string;
  score: number;
  retrievers: string[];
  /**
   * Up to 12 lines of the chunk: from the definition the hit stands for when it has one, else
   * from the lines holding the most query terms (see search/snippet.ts).
   */
  snippet: string;
  /**
   * The line the snippet starts at. Set only when the search is asked for it
   * (`withSnippetLine`), as search_code and the oracle's retrievers do.
   */
  snippet_line?: number;
  content_hash: string;
}

export interface SearchOutput {
  hits: SearchHit[];
  /**
   * What the user should know about the hits: identifiers of the query that nothing in the
   * index defines or mentions (the hits then match only its other words).
   */
  notes: string[];
  explain: {
    analysis: AnalyzedQuery;
    retrievers: Array<{ name: string; ms: number; skipped?: string; top: Array<{ rank: number; path: string; line: number; score: number; why?: string }> }>;
    fusion: Array<{ path: string; line: number; score: number; ranks: FusedHit['ranks'] }>;
    /** The query's intent and what each ranking stage did (rank.ts). */
    rank: HybridResult['rank'];
    vectors: string;
    ms: number;
  };
}

export interface SearchOptions {
  k?: number;
  language?: string;
  pathGlob?: string;
  /** Only chunks of these kinds (rank.ts, CHUNK_KINDS). */
  kinds?: readonly ChunkKindFilter[];
  signal?: AbortSignal;
  withSnippetLine?: boolean;
  /** Ranking stages to leave out; benchmarks only. */
  disabledStages?: readonly RankStage[];
}

export interface WorkspaceSearchDeps {
  store: IndexStore;
  /** The search index, loaded on first use by the engine. */
  index: () => SearchIndex;
  symbolTables: SymbolTables;
  embeddings: EmbeddingProvider | undefined;
}

export class WorkspaceSearch {
  private chunkRanges = new Map<number, Array<{ id: number; start: number; end: number }>>();
  private filePaths: Array<{ fileId: number; path: string }> | undefined;
  private refCounts = new Map<string, number>();
  /** Chunk rows the ranking layer read during the current search, reused for its hits. */
  private readonly rowCache = new Map<number, ChunkRow>();

  constructor(private readonly deps: WorkspaceSearchDeps) {}

  private index(): SearchIndex {
    return this.deps.index();
  }

  /** Forgets what the caches know about files (any file changed). */
  invalidate(): void {
    this.chunkRanges.clear();
    this.filePaths = undefined;
    this.refCounts.clear();
  }

  private sources(): SearchSources {
    return {
      index: this.index(),
      symbolsNamed: (key) => this.deps.symbolTables.lookup().named(key),
      symbolsCoveredBy: (parts) => this.deps.symbolTables.lookup().coveredBy(parts),
      chunkAt: (fileId, line) => {
        let ranges = this.chunkRanges.get(fileId);
        if (!ranges) {
          ranges = this.deps.store.chunkRangesOfFile(fileId);
          this.chunkRanges.set(fileId, ranges);
        }
        // The innermost chunk containing the line; else the nearest chunk before it.
        let best: { id: number; start: number; end: number } | undefined;
        for (const r of ranges) {
          if (r.start <= line && line <= r.end && (!best || r.end - r.start < best.end - best.start)) best = r;
        }
        if (!best) for (const r of ranges) if (r.start <= line && (!best || r.start > best.start)) best = r;
        return best?.id ?? ranges[0]?.id;
      },
      prefetch: (fileIds, names) => {
        const files = [...fileIds].filter((id) => !this.chunkRanges.has(id));
        if (files.length > 1) for (const [id, ranges] of this.deps.store.chunkRangesOfFiles(files)) this.chunkRanges.set(id, ranges);
        const unknown = [...names].filter((n) => !this.refCounts.has(n));
        if (unknown.length > 1) for (const [name, n] of this.deps.store.countFilesReferencingMany(unknown)) this.refCounts.set(name, n);
      },
      filesEndingWith: (suffix) => {
        this.filePaths ??= this.deps.store.listFiles().map((f) => ({ fileId: f.id, path: f.path }));
        const s = suffix.replace(/^\/+/, '');
        return this.filePaths.filter((f) => f.path === s || f.path.endsWith(`/${s}`));
      },
      texts: (ids) => {
        const rows = this.deps.store.getChunks([...ids]);
        for (const r of rows) this.rowCache.set(r.id, r);
        return new Map(rows.map((r) => [r.id, r.text]));
      },
      describe: (ids) => {
        const rows = this.deps.store.getChunks([...ids]);
        for (const r of rows) this.rowCache.set(r.id, r);
        return new Map(rows.map((r) => [r.id, { path: r.path, language: r.language, kind: r.kind, symbol: r.symbol }]));
      },
      referenceCount: (name) => {
        let n = this.refCounts.get(name);
        if (n === undefined) {
          n = this.deps.store.countFilesReferencing(name);
          this.refCounts.set(name, n);
        }
        return n;
      },
      ...(this.deps.embeddings && this.index().dimensions
        ? {
            embedQuery: async (q: string, signal?: AbortSignal) => {
              const [v] = await this.deps.embeddings!.embed([q], signal);
              if (!v) throw new VltError('EMBEDDING_FAILED', 'no vector for the query');
              return Float32Array.from(v);
            },
          }
        : {}),
    };
  }

  async search(query: string, opts: SearchOptions = {}): Promise<SearchOutput> {
    if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
    const t0 = performance.now();
    const k = opts.k ?? 10;
    const res = await hybridSearch(this.sources(), query, {
      k,
      ...(opts.language ? { language: opts.language } : {}),
      ...(opts.pathGlob ? { pathGlob: opts.pathGlob } : {}),
      ...(opts.kinds?.length ? { kinds: opts.kinds } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.disabledStages ? { disabledStages: opts.disabledStages } : {}),
    });
    const explainIds = new Set<number>(res.fused.map((f) => f.id));
    for (const run of res.runs) for (const h of run.hits.slice(0, 10)) explainIds.add(h.id);
    const known = [...explainIds].filter((id) => this.rowCache.has(id));
    const rows = new Map([...known.map((id) => [id, this.rowCache.get(id)!] as const), ...this.deps.store.getChunks([...explainIds].filter((id) => !this.rowCache.has(id))).map((c) => [c.id, c] as const)]);
    this.rowCache.clear();
    const fileHashes = new Map<number, string>();
    const fileHash = (fileId: number): string => {
      let h = fileHashes.get(fileId);
      if (h === undefined) {
        h = this.deps.store.getFileById(fileId)?.hash ?? '';
        fileHashes.set(fileId, h);
      }
      return h;
    };
    const hits: SearchHit[] = [];
    for (const f of res.fused) {
      const c = rows.get(f.id);
      if (!c) continue;
      const snippet = hitSnippet(c, { line: this.definitionLine(f, c), terms: res.analysis.terms });
      hits.push({
        path: c.path,
        start_line: c.startLine,
        end_line: c.endLine,
        // The definition the query matched, when there is one; else the chunk's main symbol.
        symbol: f.symbol ?? c.symbol ?? null,
        kind: f.symbolKind ?? c.kind,
        score: Number(f.score.toFixed(6)),
        retrievers: Object.keys(f.ranks),
        snippet: snippet.text,
        ...(opts.withSnippetLine ? { snippet_line: snippet.line } : {}),
        content_hash: fileHash(c.fileId),
      });
    }
    const where = (id: number) => rows.get(id);
    return {
      hits,
      notes: [...this.partialNotes(), ...this.unknownIdentifierNotes(res.analysis.identifiers, hits.length)],
      explain: {
        analysis: res.analysis,
        retrievers: res.runs.map((r: RetrieverRun) => ({
          name: r.name,
          ms: Number(r.ms.toFixed(2)),
          ...(r.skipped ? { skipped: r.skipped } : {}),
          top: r.hits.slice(0, 10).map((h, i) => ({ rank: i + 1, path: where(h.id)?.path ?? '?', line: where(h.id)?.startLine ?? 0, score: Number(h.score.toFixed(4)), ...(h.why ? { why: h.why } : {}) })),
        })),
        fusion: res.fused.map((f) => ({ path: where(f.id)?.path ?? '?', line: where(f.id)?.startLine ?? 0, score: Number(f.score.toFixed(6)), ranks: f.ranks })),
        rank: res.rank,
        vectors: this.vectorNote(),
        ms: Number((performance.now() - t0).toFixed(2)),
      },
    };
  }

  /** The chunks plain BM25 ranks highest for a text, with their text (the locate mode's probe for quoted messages). */
  textHits(query: string, limit: number): ChunkRow[] {
    return this.deps.store.getChunks(this.index().searchText(query, { limit }).map((h) => h.id));
  }

  /**
   * The line of the definition a hit stands for: the one the symbol retriever matched, else the
   * chunk's main symbol. Looked up only for chunks longer than a snippet, whose first lines may
   * be something else.
   */
  private definitionLine(f: FusedHit, c: ChunkRow): number | undefined {
    if (c.endLine - c.startLine + 1 <= SNIPPET_LINES) return undefined;
    if (f.symbol !== undefined) return f.symbolLine;
    if (c.symbol === undefined) return undefined;
    const last = c.symbol.split(/[.:#]/).pop();
    const inChunk = this.deps.store.symbolsOfFile(c.fileId).filter((s) => s.startLine >= c.startLine && s.startLine <= c.endLine);
    return (inChunk.find((s) => s.qualifiedName === c.symbol) ?? inChunk.find((s) => s.name === last))?.startLine;
  }

  vectorNote(): string {
    if (!this.deps.embeddings) return VECTORS_OFF_NOTE;
    return `vectors on: ${this.deps.embeddings.model}, ${this.index().vectorCount()} chunk vectors`;
  }

  /**
   * The innermost indexed chunk of `path` that contains `line` (else the nearest one before
   * it), with the file's content hash: the snippet a navigation answer shows.
   */
  chunkAround(path: string, line: number): { startLine: number; endLine: number; text: string; symbol: string | null; kind: string; contentHash: string } | undefined {
    const file = this.deps.store.getFile(path);
    if (!file) return undefined;
    const chunks = this.deps.store.chunksOfFile(file.id);
    let best: (typeof chunks)[number] | undefined;
    for (const c of chunks) if (c.startLine <= line && line <= c.endLine && (!best || c.endLine - c.startLine < best.endLine - best.startLine)) best = c;
    if (!best) for (const c of chunks) if (c.startLine <= line && (!best || c.startLine > best.startLine)) best = c;
    best ??= chunks[0];
    if (!best) return undefined;
    return { startLine: best.startLine, endLine: best.endLine, text: best.text, symbol: best.symbol ?? null, kind: best.kind, contentHash: file.hash };
  }

  /** Says that the index is the part a build saved before it stopped (or while it runs). */
  private partialNotes(): string[] {
    const files = this.deps.store.partialBuildFiles();
    return files === undefined ? [] : [`partial: the index holds the ${files} files a build saved before it stopped, or so far while it runs; the rest are not searched until it finishes (\`vlt coderag sync\` resumes it)`];
  }

  /** A note per identifier of the query that no symbol is named and no chunk mentions. */
  private unknownIdentifierNotes(identifiers: readonly string[], hits: number): string[] {
    const unknown = identifiers.filter((id) => {
      const last = id.split(/\.|::|->|#/).pop() ?? id;
      if (this.deps.symbolTables.lookup().named(normalizeSymbolName(last)).length > 0) return false;
      // The tokenizer keeps the whole identifier as its first term: a chunk that mentions it has it.
      const whole = tokenize(last)[0];
      return whole === undefined || this.index().docFrequency(whole) === 0;
    });
    if (unknown.length === 0) return [];
    // A name that only navigation-only (generated) files define or use is not unknown: say where
    // it is, or the user would take it for a name the workspace lacks.
    const last = (id: string) => id.split(/\.|::|->|#/).pop() ?? id;
    const generatedOnly = unknown.filter((id) => this.deps.store.findSymbols(last(id), { limit: 1 }).length > 0 || this.deps.store.countFilesReferencing(last(id)) > 0);
    const absent = unknown.filter((id) => !generatedOnly.includes(id));
    const list = (ids: readonly string[]) => ids.map((n) => `\`${n}\``).join(', ');
    const notes: string[] = [];
    if (absent.length > 0) {
      const names = list(absent);
      notes.push(hits > 0 ? `nothing in the index is named or mentions ${names}; these hits match the query's other words` : `nothing in the index is named or mentions ${names}`);
    }
    if (generatedOnly.length > 0) {
      notes.push(`only generated files define or use ${list(generatedOnly)}; search leaves them out ([index] generated), find_definition and find_references (\`vlt coderag def\`/\`refs\`) reach them`);
    }
    return notes;
  }

  /**
   * How rare each search term is: the number of indexed chunks whose name or body contains it,
   * out of `docs`. The oracle weighs how much of a question the evidence covers by this, so a
   * question about something the workspace never mentions is recognised as such.
   */
  termRarity(terms: readonly string[]): { docs: number; df: Map<string, number> } {
    const df = new Map<string, number>();
    for (const t of terms) df.set(t, this.index().docFrequency(t));
    return { docs: this.index().size, df };
  }

  /**
   * For each term, the number of chunks that use it in a name they define or in their path: the
   * words the code itself names things with, as against words only its prose and data use.
   */
  nameFrequency(terms: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of terms) out.set(t, this.index().nameFrequency(t));
    return out;
  }

  /** Which groups of terms each chunk holds, with its path (see {@link SearchIndex.groupMasks}). */
  termGroups(groups: readonly (readonly string[])[]): Array<{ id: number; path: string; mask: number }> {
    return this.index().groupMasks(groups);
  }
}
