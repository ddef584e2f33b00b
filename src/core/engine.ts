/**
 * The engine facade every host uses: open a workspace, index it, search it, report status.
 * Hosts pass in their ports (file system, logger, progress); the engine owns the store, the
 * in-memory search index and the parser pool.
 */
import * as path from 'node:path';
import { GENERATED_MODES, loadConfig, warnIgnoredKeysOnce, type GeneratedMode, type VltConfig } from './config';
import { VltError, errorMessage } from './errors';
import { OpenAIEmbeddingProvider, embeddingCacheKey } from './embeddings';
import { dryRun, GENERATED_META, goVendorDirsOf, inGoVendorDir, persistIndex, type DryRunReport, type IndexReport } from './indexer';
import { runIndex } from './index-run';
import { chunkDoc, chunkNames, enrichedText } from './parse/prepare';
import { CodeGraph, loadResolverConfig, type GraphBuilder } from './intel/code-graph';
import type { LanguageServers } from './intel/lsp';
import { Navigator, type TagsProvider } from './intel/navigate';
import { TreeCache } from './intel/sources';
import { createCodeParser, type CodeParser } from './parse/parser';
import { createParsePool, type ParsePool } from './parse/pool';
import { silentLogger, type EmbeddingProvider, type Logger, type ProgressSink, type WorkspaceFs } from './ports';
import { SymbolTables } from './search/symbol-tables';
import { SearchIndex } from './search/orama-index';
import { WorkspaceSearch, type SearchOptions, type SearchOutput } from './search/workspace-search';
import { bytesOnDisk, composeStatus, writeStatusSummary, type StatusReport, type StoredStatus } from './status';
import { IndexStore, SCHEMA_VERSION, type ChunkRow, type FileRow } from './store/store';
import type { LanguageId } from './types';

export interface EngineDeps {
  fs: WorkspaceFs;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** Replaces the provider built from the configuration; `null` forces vectors off. */
  embeddingProvider?: EmbeddingProvider | null;
  parseWorkers?: number;
  /** Definitions above which a writer patches the committed symbol table by an overlay (symbol-tables.ts); tests lower it. */
  symbolOverlayAbove?: number;
  /** Replaces vlt.toml's index include/exclude globs (the editor's settings). */
  configOverrides?: { include?: string[]; exclude?: string[] };
  /**
   * The host's trust decision for this workspace (the editor's workspace trust); undefined lets
   * `vlt trust` decide. Only a trusted workspace's vlt.toml may choose endpoints, models and keys.
   */
  trusted?: boolean;
}

export type { SearchHit, SearchOutput } from './search/workspace-search';

export type { StatusReport } from './status';


/** What {@link Engine.warmNavigation} did. */
export interface WarmReport {
  graph: 'built' | 'cached' | 'skipped';
  /** Languages whose grammar is loaded and was exercised. */
  languages: LanguageId[];
  ms: number;
  /** Why it stopped before the end (cancelled, the index changed). */
  stopped?: string;
}

/** The warm-up's slice: short enough that a request arriving meanwhile hardly notices it. */
const WARM_SLICE_MS = 10;
/**
 * A language with fewer indexed files is not warmed unless it is the workspace's main one (a
 * few scripts in another language rarely get navigated first), nor more than a few languages
 * (each grammar holds megabytes).
 */
const WARM_MIN_FILES = 5;
const WARM_MAX_LANGUAGES = 4;
/** The largest file parsed to exercise a grammar: a bigger one is a longer block. */
const WARM_SAMPLE_BYTES = 32 * 1024;
/**
 * After a reload the graph is rebuilt in the background only when its last build took less than
 * this: a writer host reloads after every commit, and a big workspace's graph (half a second on
 * the Go standard library) is then left for the next navigation call to build.
 */
const REWARM_GRAPH_MAX_MS = 150;

/** Targeted runs up to this many files parse in this thread once the workers are released. */
const IN_THREAD_MAX_FILES = 50;
/**
 * Dead search-index document ids tolerated before a rebuild (see compactSearchIndex): a
 * quarter of the live chunks, and at least this many. Each costs about 7 bytes of snapshot
 * against about 160 for a live chunk, so the snapshot stays within a few percent of a fresh one's.
 */
const MIN_ID_SLACK = 1024;
const ID_SLACK_RATIO = 0.25;

export class Engine {
  /** Search's symbol tables: in memory, or read in place from the last commit. */
  private readonly symbolTables: SymbolTables;
  /** Search and the reads beside it, with their caches. */
  private readonly searcher: WorkspaceSearch;
  private loadedSearchIndex: SearchIndex | undefined;

  /** The search index, loaded from its snapshot on first use. */
  private get searchIndex(): SearchIndex {
    this.loadedSearchIndex ??= Engine.loadSearchIndex(this.store, this.searchDims, this.logger);
    return this.loadedSearchIndex;
  }

  private set searchIndex(index: SearchIndex) {
    this.loadedSearchIndex = index;
  }
  private pool: ParsePool | undefined;
  /** The in-thread parser of small runs, once the workers are released. */
  private threadPool: ParsePool | undefined;
  private smallRunsInThread = false;
  /** Some stored chunk may lack a vector (until a run that embeds has checked them all). */
  private vectorsMayBeMissing = true;
  /** An index run changed the search index since the last commit. */
  private searchUnsaved = false;
  /** Bumped whenever an index run changed what the store holds; see {@link stateVersion}. */
  private contentVersion = 0;

  private constructor(
    readonly root: string,
    readonly config: VltConfig,
    /** The index's store, for the code-intelligence modules (graph, repo map, navigation); read it, never write it. */
    readonly store: IndexStore,
    private readonly searchDims: number | undefined,
    private readonly deps: EngineDeps,
    private readonly logger: Logger,
    readonly embeddings: EmbeddingProvider | undefined,
    readonly mode: 'read' | 'write',
  ) {
    this.symbolTables = new SymbolTables({
      store,
      mode,
      logger,
      generatedMode: () => this.generatedMode(),
      isNavigationOnly: (f) => this.isNavigationOnly(f),
      ...(deps.symbolOverlayAbove !== undefined ? { overlayAbove: deps.symbolOverlayAbove } : {}),
    });
    this.searcher = new WorkspaceSearch({ store, index: () => this.searchIndex, symbolTables: this.symbolTables, embeddings });
    // A writer persists the symbol table with each commit that changed symbols, from the tables
    // it holds (built or patched now when it has none), for the next process that answers one query.
    if (mode === 'write') store.symbolTableWriter = (generation) => this.symbolTables.encode(generation);
    // And the status summary after each commit, for a `status` that opens no database.
    if (mode === 'write') store.onCommitted = () => this.writeStatusSummary();
  }

  /**
   * Opens the index of `root`. Write mode takes the writer lock; read mode never blocks on
   * a writer. A missing or unreadable search snapshot is rebuilt from the store's chunks.
   */
  static async open(root: string, deps: EngineDeps, mode: 'read' | 'write'): Promise<Engine> {
    const abs = path.resolve(root);
    let st;
    try {
      st = await deps.fs.stat(abs);
    } catch {
      throw new VltError('PATH_NOT_FOUND', `workspace ${abs} does not exist`);
    }
    if (st.kind !== 'dir') throw new VltError('NOT_A_DIRECTORY', `workspace ${abs} is not a directory`);
    const logger = deps.logger ?? silentLogger;
    const loaded = await loadConfig(abs, deps.env ?? process.env, deps.trusted !== undefined ? { trusted: deps.trusted } : {});
    warnIgnoredKeysOnce(loaded, abs, logger);
    const o = deps.configOverrides;
    const config = o ? { ...loaded, index: { ...loaded.index, ...(o.include ? { include: o.include } : {}), ...(o.exclude ? { exclude: o.exclude } : {}) } } : loaded;
    const embeddings =
      deps.embeddingProvider === null
        ? undefined
        : (deps.embeddingProvider ??
          (config.embeddings.enabled
            ? new OpenAIEmbeddingProvider({
                baseUrl: config.embeddings.baseUrl,
                apiKey: config.embeddings.apiKey,
                model: config.embeddings.model,
                dimensions: config.embeddings.dimensions,
                logger,
              })
            : undefined));
    const store = await IndexStore.open(abs, { mode, logger });
    if (store.rebuildReason) logger.warn(store.rebuildReason);
    const dims = embeddings ? (config.embeddings.dimensions ?? (Number(store.getMeta('embedding_dims')) || undefined)) : undefined;
    // The search snapshot is the largest thing to load (about half a second on the Go standard
    // library); the repository map, navigation and status never need it, so it loads on the
    // first search. With vectors it is needed at once, to fill them from the cache.
    const engine = new Engine(abs, config, store, dims, deps, logger, embeddings, mode);
    if (embeddings && dims) await engine.fillVectorsFromCache();
    return engine;
  }

  /**
   * Opens the index for reading; when there is none yet, builds it first with a writer (whose
   * report goes to `onBuilt`) and hands back `keep`: that writer (a process that answers one
   * query and exits, saving a reopen), or a reader opened after it closed (a long-lived host,
   * which must not hold the writer lock).
   */
  static async openOrBuild(
    root: string,
    deps: EngineDeps,
    opts: { keep: 'writer' | 'reader'; onProgress?: ProgressSink; signal?: AbortSignal; onBuilding?: () => void; onBuilt?: (report: IndexReport) => void },
  ): Promise<Engine> {
    const reader = await Engine.open(root, deps, 'read');
    if (!reader.isEmpty) return reader;
    await reader.close();
    opts.onBuilding?.();
    const writer = await Engine.open(root, deps, 'write');
    try {
      const report = await writer.index({ ...(opts.onProgress ? { onProgress: opts.onProgress } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
      opts.onBuilt?.(report);
    } catch (e) {
      await writer.close();
      throw e;
    }
    if (opts.keep === 'writer') return writer;
    await writer.close();
    return Engine.open(root, deps, 'read');
  }

  /**
   * The search index from its snapshot, opened by range (posting lists are read as queries ask
   * for them), else built from the stored chunks. An index replaced later is not closed: a query
   * may still hold it; its file is released when it is collected.
   */
  private static loadSearchIndex(store: IndexStore, dims: number | undefined, logger: Logger): SearchIndex {
    const source = store.openBlob('search');
    if (source) {
      try {
        const idx = SearchIndex.open(source, { dir: store.textSegments });
        if (idx.dimensions === dims) return idx;
        idx.close();
      } catch (e) {
        logger.warn(`search snapshot unreadable (${(e as Error).message}); rebuilding it from the stored chunks`);
      }
    }
    return Engine.buildSearchIndex(store, dims);
  }

  /** A search index built from the stored chunks (vectors are filled separately, from the cache). */
  private static buildSearchIndex(store: IndexStore, dims: number | undefined): SearchIndex {
    const idx = SearchIndex.create(dims, { dir: store.textSegments });
    // The documents an index run adds, in the same order (ascending chunk id): a rebuilt index
    // scores and breaks ties as the index it replaces, and as a fresh build of the same files.
    let fileId = -1;
    let symbols: ReturnType<IndexStore['symbolsOfFile']> = [];
    for (const c of store.allChunksForIndexing()) {
      if (c.fileId !== fileId) {
        fileId = c.fileId;
        symbols = store.symbolsOfFile(fileId);
      }
      idx.add(chunkDoc(c.id, c.path, c.language, c, chunkNames(c, symbols)));
    }
    return idx;
  }

  /**
   * Orama never reuses a document id, and keeps one entry per id it ever handed out. Once the
   * dead ids are a quarter of the live chunks (and at least {@link MIN_ID_SLACK}), the search index is
   * rebuilt from the stored chunks, so memory and the snapshot stay the size of a fresh build.
   * Returns whether it was rebuilt.
   */
  private async compactSearchIndex(): Promise<boolean> {
    const idx = this.loadedSearchIndex;
    if (!idx) return false;
    const { assigned, live } = idx.idSlack();
    if (assigned - live <= Math.max(live * ID_SLACK_RATIO, MIN_ID_SLACK)) return false;
    const t0 = performance.now();
    this.searchIndex = Engine.buildSearchIndex(this.store, idx.dimensions);
    if (this.embeddings && idx.dimensions) await this.fillVectorsFromCache();
    this.logger.debug(`search index rebuilt: ${assigned - live} dead document ids against ${live} chunks (${Math.round(performance.now() - t0)} ms)`);
    return true;
  }

  private async fillVectorsFromCache(): Promise<void> {
    const key = embeddingCacheKey(this.embeddings!);
    const pairs = this.store.chunkHashes();
    const cached = await this.store.embeddings.getMany(key, pairs.map((p) => p.hash));
    for (const p of pairs) {
      const v = cached.get(p.hash);
      if (v) this.searchIndex.setVector(p.id, v);
    }
  }

  get isEmpty(): boolean {
    return this.store.isEmpty && this.store.getMeta('generation') === undefined;
  }

  /**
   * Stored chunks the search index has no vector for, with the text to embed: left behind by a
   * run whose endpoint failed. Empty when every chunk has one (a lookup per chunk).
   */
  private missingVectors(): Array<{ id: number; hash: string; text: string }> {
    if (!this.vectorsMayBeMissing) return [];
    const index = this.searchIndex;
    const ids = this.store
      .chunkHashes()
      .filter((p) => !index.hasVector(p.id))
      .map((p) => p.id);
    if (ids.length === 0) return [];
    const imports = new Map<string, string[]>();
    return this.store.getChunks(ids).map((c) => {
      let imp = imports.get(c.path);
      if (!imp) imports.set(c.path, (imp = this.store.getFile(c.path)?.imports ?? []));
      return { id: c.id, hash: c.hash, text: enrichedText(c.path, c.language, imp, c) };
    });
  }

  /** Whether this run embeds: the endpoint's vector size is known (or was just asked) and matches the search index. */
  private async ensureVectorDims(): Promise<boolean> {
    if (!this.embeddings) return false;
    let dims = this.config.embeddings.dimensions ?? (Number(this.store.getMeta('embedding_dims')) || undefined);
    if (!dims) {
      let probe: ArrayLike<number> | undefined;
      try {
        [probe] = await this.embeddings.embed(['dimension probe']);
      } catch (e) {
        // No vectors this run, but the text and symbol index is still updated; the next run asks again.
        this.logger.warn(`embedding failed (${errorMessage(e)}): the text and symbol index is updated without vectors, and the next sync embeds the chunks`);
        return false;
      }
      dims = probe?.length;
      if (!dims) throw new VltError('EMBEDDING_FAILED', 'the embedding endpoint returned an empty vector');
    }
    this.store.setMeta('embedding_dims', String(dims));
    if (this.searchIndex.dimensions !== dims) {
      this.searchIndex = Engine.loadSearchIndex(this.store, dims, this.logger);
      this.store.setMeta('embedding_model', this.embeddings.model);
    }
    return true;
  }

  /** Indexes what changed. With `persist: false` the result is searchable at once; call {@link commit} to save it. */
  async index(opts: { onProgress?: ProgressSink; signal?: AbortSignal; persist?: boolean; paths?: string[]; force?: boolean } = {}): Promise<IndexReport> {
    if (this.mode !== 'write') throw new VltError('INTERNAL', 'index() needs an engine opened in write mode');
    const embedding = await this.ensureVectorDims();
    // A long-lived writer parses its small targeted runs in this thread once it has let its
    // workers go (see releaseParseWorkers); everything else gets the worker pool.
    let pool: ParsePool;
    if (this.smallRunsInThread && opts.paths && opts.paths.length <= IN_THREAD_MAX_FILES) {
      pool = this.threadPool ??= createParsePool({ inThread: true });
    } else {
      pool = this.pool ??= createParsePool({ ...(this.deps.parseWorkers !== undefined ? { workers: this.deps.parseWorkers } : {}) });
    }
    // The search index may load lazily, at the run's first change, only from a snapshot: the
    // snapshot is the state before the run. Rebuilt from the stored chunks (no snapshot, or one
    // for other vectors) it must load before the run changes those chunks.
    if (!this.loadedSearchIndex && (this.searchDims !== undefined || !this.store.hasBlob('search'))) void this.searchIndex;
    const loadSearch = () => this.searchIndex;
    let patched = false;
    // The symbol table as committed before this run: patched with the run's changes, it is the
    // table the run's commit persists, without reading every symbol row.
    const before = this.symbolTables.beforeRun();
    const generationBefore = this.store.generation;
    const report = await runIndex({
      root: this.root,
      config: this.config,
      fs: this.deps.fs,
      store: this.store,
      // Loaded on the first change: a run that finds nothing changed never loads the snapshot.
      get search() {
        return loadSearch();
      },
      pool,
      logger: this.logger,
      ...(embedding && this.embeddings ? { embeddings: this.embeddings, missingVectors: () => this.missingVectors() } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.persist !== undefined ? { persist: opts.persist } : {}),
      ...(opts.paths ? { paths: opts.paths } : {}),
      ...(opts.force ? { force: true } : {}),
      // The symbol tables follow the run before its commit persists them.
      beforePersist: (changed) => {
        this.symbolTables.applyRun(changed, before);
        this.invalidateCaches([]);
        patched = true;
      },
    });
    // Once a run embedded everything it was given, later runs need not look for missing vectors.
    if (this.embeddings) this.vectorsMayBeMissing = !embedding || report.vectorsPending !== undefined;
    if (this.store.rebuildReason) report.rebuildReason = this.store.rebuildReason;
    if (!patched) this.invalidateCaches(report.changed);
    if (report.changed.length > 0) {
      this.stateChanged(generationBefore);
      this.searchUnsaved = true;
      if ((await this.compactSearchIndex()) && opts.persist !== false) await persistIndex(this.store, this.searchIndex);
    }
    return report;
  }

  /**
   * Stops the parse worker threads and returns their memory; later targeted runs of a few
   * files parse in this thread (a long-lived writer after its first index). A full run starts
   * workers again.
   */
  async releaseParseWorkers(): Promise<void> {
    this.smallRunsInThread = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }

  /**
   * Identifies what the index holds as seen by this engine: it changes on every commit (also
   * another process's, once reloaded) and on every index run that changed something, committed
   * or not. Caches derived from the store (the repository map's graph) key on it.
   */
  get stateVersion(): string {
    return `${this.store.generation}.${this.contentVersion}`;
  }

  /**
   * What the engine holds changed. Committed (the generation moved on since `generationBefore`
   * and nothing is unsaved), it is that generation as any process opening the index sees it:
   * the version restarts, so that a cursor from one process is good in another. Otherwise it
   * is this engine's own uncommitted state.
   */
  private stateChanged(generationBefore: number): void {
    this.contentVersion = this.store.generation !== generationBefore && !this.store.hasUnsavedChanges ? 0 : this.contentVersion + 1;
  }

  async commit(): Promise<void> {
    const generationBefore = this.store.generation;
    // A search index never loaded, or not changed since the last commit, has a current
    // snapshot in the store; writing it again would only cost time (and make every reader reload).
    if (this.loadedSearchIndex && this.searchUnsaved) {
      await this.compactSearchIndex();
      await persistIndex(this.store, this.loadedSearchIndex);
    } else await this.store.commit();
    this.searchUnsaved = false;
    if (this.store.generation !== generationBefore) this.stateChanged(generationBefore);
  }

  /**
   * Sees what another process committed since this engine loaded the index: when index.db
   * changed on disk, loads it again and drops every cache derived from the old state (the
   * search index reloads on its next use). A no-op while this engine holds the writer lock or
   * has unsaved work. The caller must not run it while one of this engine's queries is in
   * flight: hosts serialise it with their requests, so that no answer mixes two states.
   */
  async refresh(): Promise<boolean> {
    if (this.mode === 'write' && (this.store.holdsLock || this.store.hasUnsavedChanges)) return false;
    const generationBefore = this.store.generation;
    if (!(await this.store.reload())) return false;
    await this.dropDerivedState(generationBefore);
    return true;
  }

  /**
   * Loads what the first search would otherwise load on its own time: the search snapshot, and
   * the symbol tables when the committed one does not describe the index (see
   * SymbolTables.warm). Long-lived hosts call it while idle after opening.
   */
  warmUp(): void {
    void this.searchIndex;
    this.symbolTables.warm();
  }

  /** Whether index.db on disk is newer than what this engine loaded (a cheap stat). */
  changedOnDisk(): Promise<boolean> {
    return this.store.changedOnDisk();
  }

  /**
   * Write mode: gives the writer lock back between batches, so that other processes can
   * write while this long-lived engine is idle. Commit first.
   */
  releaseWriteLock(): void {
    this.store.releaseLock();
  }

  /** Write mode: whether the engine holds the writer lock now. */
  get holdsWriteLock(): boolean {
    return this.mode === 'write' && this.store.holdsLock;
  }

  /**
   * Write mode: takes the writer lock back before the next {@link index} (INDEX_LOCKED while
   * another process writes); when another writer committed meanwhile, its state is loaded first.
   */
  async acquireWriteLock(): Promise<void> {
    const generationBefore = this.store.generation;
    if (await this.store.acquireLock()) await this.dropDerivedState(generationBefore);
  }

  private async dropDerivedState(generationBefore: number): Promise<void> {
    this.loadedSearchIndex = undefined;
    this.vectorsMayBeMissing = true;
    this.symbolTables.drop();
    this.invalidateCaches([]);
    this.stateChanged(generationBefore);
    if (this.embeddings && this.searchDims) await this.fillVectorsFromCache();
  }

  dryRun(onProgress?: ProgressSink, opts: { listSkipped?: boolean } = {}): Promise<DryRunReport> {
    return dryRun(this.root, this.config, this.deps.fs, this.logger, onProgress, opts);
  }

  /** Drops what the search caches know about changed files (the symbol tables patch themselves). */
  private invalidateCaches(changed: string[]): void {
    this.searcher.invalidate();
    this.symbolTables.invalidate(changed);
  }

  async search(query: string, opts: SearchOptions = {}): Promise<SearchOutput> {
    return this.searcher.search(query, opts);
  }

  /** The chunks plain BM25 ranks highest for a text, with their text (the locate mode's probe for quoted messages). */
  textHits(query: string, limit: number): ChunkRow[] {
    return this.searcher.textHits(query, limit);
  }

  /**
   * The innermost indexed chunk of `path` that contains `line` (else the nearest one before
   * it), with the file's content hash: the snippet a navigation answer shows.
   */
  chunkAround(path: string, line: number): ReturnType<WorkspaceSearch['chunkAround']> {
    return this.searcher.chunkAround(path, line);
  }

  /** How rare each search term is (see {@link WorkspaceSearch.termRarity}). */
  termRarity(terms: readonly string[]): { docs: number; df: Map<string, number> } {
    return this.searcher.termRarity(terms);
  }

  /** How many chunks use each term in a defined name or their path (see {@link WorkspaceSearch.nameFrequency}). */
  nameFrequency(terms: readonly string[]): Map<string, number> {
    return this.searcher.nameFrequency(terms);
  }

  /** Which groups of terms each indexed chunk holds (see {@link WorkspaceSearch.termGroups}). */
  termGroups(groups: readonly (readonly string[])[]): Array<{ id: number; path: string; mask: number }> {
    return this.searcher.termGroups(groups);
  }

  status(): StatusReport {
    const vectors = {
      enabled: this.embeddings !== undefined,
      // Without an embedding provider there are no vectors, and no reason to load the index.
      count: this.embeddings ? this.searchIndex.vectorCount() : 0,
      dimensions: this.embeddings ? (this.searchIndex.dimensions ?? null) : null,
      model: this.embeddings?.model ?? null,
      note: this.searcher.vectorNote(),
    };
    const stored = this.storedStatus();
    return composeStatus(this.root, stored, this.config, vectors, bytesOnDisk([this.store.indexPath, this.store.embeddingsPath], stored.sidecar_bytes));
  }

  /** The last stored status, by index state: a long-lived host's status reads no table twice. */
  private storedCache: { state: string; stored: StoredStatus } | undefined;

  /** What the index holds, for the status: the part only a change of the index changes. */
  private storedStatus(): StoredStatus {
    const state = this.stateVersion;
    if (this.storedCache?.state === state) return this.storedCache.stored;
    const stored = this.readStoredStatus();
    this.storedCache = { state, stored };
    return stored;
  }

  private readStoredStatus(): StoredStatus {
    const s = this.store.stats();
    let skippedDirs: Array<{ path: string; reason: string }> = [];
    try {
      skippedDirs = JSON.parse(this.store.getMeta('skipped_dirs') ?? '[]');
    } catch {
      skippedDirs = [];
    }
    return {
      files: s.files,
      chunks: s.chunks,
      symbols: s.symbols,
      references: s.refs,
      languages: s.languages,
      last_update: s.updatedAt ?? null,
      skipped_by_reason: s.skippedByReason,
      generated_files: s.generatedFiles,
      generated_mode: this.store.getMeta(GENERATED_META) ?? null,
      go_vendor: this.goVendorStatus(),
      skipped_dirs: skippedDirs,
      unsupported_files: Number(this.store.getMeta('unsupported_files') ?? 0),
      unsupported_extensions: parseCounts(this.store.getMeta('unsupported_extensions')),
      sidecar_bytes: s.sidecarBytes,
    };
  }

  /** Writes the status summary after each commit of this writer (status.ts). */
  private writeStatusSummary(): void {
    try {
      writeStatusSummary(this.store.dir, this.store.indexPath, SCHEMA_VERSION, this.storedStatus());
    } catch (e) {
      this.logger.debug(`status summary not written: ${errorMessage(e)}`);
    }
  }

  /** The `[index] generated` the index was built with (the configured one before the first run). */
  private generatedMode(): GeneratedMode {
    const stored = this.store.getMeta(GENERATED_META);
    return (GENERATED_MODES as readonly string[]).includes(stored ?? '') ? (stored as GeneratedMode) : this.config.index.generated;
  }

  /**
   * Whether `path` is indexed for navigation only: a generated file, or a file of a Go module's
   * vendor directory, kept out of search and of the oracle's evidence, whose definitions and
   * uses navigation still finds.
   */
  isNavigationOnly(file: string | { generated: boolean; path?: string }): boolean {
    const p = typeof file === 'string' ? file : file.path;
    if (p !== undefined && inGoVendorDir(p, this.goVendorDirs())) return true;
    const generated = typeof file === 'string' ? this.store.getFile(file)?.generated : file.generated;
    return generated === true && this.generatedMode() === 'navigation';
  }

  private goVendorStatus(): { dirs: string[]; files: number } {
    const dirs = this.goVendorDirs();
    return { dirs, files: dirs.length ? this.store.listFiles().filter((f) => inGoVendorDir(f.path, dirs)).length : 0 };
  }

  private vendorDirsCache: { state: string; dirs: string[] } | undefined;

  /** The Go vendor directories the index holds for navigation only (read once per index state). */
  goVendorDirs(): string[] {
    const state = this.stateVersion;
    if (this.vendorDirsCache?.state !== state) this.vendorDirsCache = { state, dirs: goVendorDirsOf(this.store) };
    return this.vendorDirsCache.dirs;
  }

  private graphCache: { key: string; graph: Promise<CodeGraph> } | undefined;
  /** The graph of an index state being built (by a call or the warm-up), shared by both. */
  private graphBuild: { key: string; builder: Promise<GraphBuilder> } | undefined;
  private navParser: Promise<CodeParser> | undefined;
  /**
   * Syntax trees navigation parsed, by content hash, kept across calls: a long-lived host
   * answers the next reference search without parsing again. A one-shot CLI call pays nothing.
   */
  private readonly navTrees = new TreeCache();

  /**
   * The code graph (files and resolved imports) of the current index state, built on first
   * use and cached until the index changes. A build the warm-up left half done is finished
   * here without pausing.
   */
  graph(): Promise<CodeGraph> {
    const key = this.stateVersion;
    if (this.graphCache?.key !== key) {
      const build = this.graphBuilder(key).then((b) => {
        const g = b.finish();
        this.lastGraphMs = g.stats.ms;
        this.logger.debug(`graph: ${g.fileCount} files, ${g.stats.resolved}/${g.stats.imports} imports resolved in ${g.stats.ms.toFixed(0)} ms`);
        return g;
      });
      this.graphCache = { key, graph: build };
      build.catch(() => {
        if (this.graphCache?.graph === build) this.graphCache = undefined;
      });
    }
    return this.graphCache.graph;
  }

  private graphBuilder(key: string): Promise<GraphBuilder> {
    if (this.graphBuild?.key !== key) {
      const builder = (async () => {
        const files = this.store.listFiles();
        const config = await loadResolverConfig(
          this.root,
          this.deps.fs,
          files.map((f) => f.path),
        );
        // The config read is asynchronous: the index may have changed meanwhile.
        if (this.stateVersion !== key) throw new VltError('CANCELLED', 'the index changed while its graph was being built');
        return CodeGraph.builder(this.store, config, files);
      })();
      this.graphBuild = { key, builder };
      builder.catch(() => {
        if (this.graphBuild?.builder === builder) this.graphBuild = undefined;
      });
    }
    return this.graphBuild.builder;
  }

  /** How long the last complete graph took to build, for deciding whether re-warming it is cheap. */
  private lastGraphMs: number | undefined;

  /**
   * Prepares, while the host is idle, what the first definition or reference search would
   * otherwise load on its own time: the code graph of the current index state, then the
   * grammars and queries of the languages the index holds (most files first), each exercised
   * once on one of its files so that the first real parse runs compiled code.
   *
   * It runs in slices of about {@link WARM_SLICE_MS} (the grammar loads and the index reads
   * are longer blocks, tens of milliseconds on the Go standard library), and before each slice
   * awaits `whenIdle`, which the host resolves once no request is in flight: a request waits
   * at most for the slice in progress, and a request that needs the graph finishes its build
   * itself, without pauses. Stops when `signal` aborts or the index state changes (a reload):
   * what was done stays, and nothing half done is ever used.
   *
   * `graphOnly`: re-warm only the graph, and only when its last build was cheap (a reload of a
   * new generation: the grammars are still loaded, and a big workspace's graph is left for the
   * next call to build rather than rebuilt after every commit).
   */
  async warmNavigation(opts: { whenIdle: () => Promise<void>; signal?: AbortSignal; graphOnly?: boolean }): Promise<WarmReport> {
    const t0 = performance.now();
    const key = this.stateVersion;
    const report: WarmReport = { graph: 'skipped', languages: [], ms: 0 };
    const stop = (): string | undefined => (opts.signal?.aborted ? 'cancelled' : this.stateVersion !== key ? 'the index changed' : undefined);
    const done = (why?: string): WarmReport => {
      if (why) report.stopped = why;
      report.ms = performance.now() - t0;
      return report;
    };
    if (opts.graphOnly && (this.lastGraphMs === undefined || this.lastGraphMs > REWARM_GRAPH_MAX_MS)) return done();
    let why: string | undefined;
    // 1. The code graph: every reference search and most definitions read it.
    if (this.graphCache?.key !== key) {
      await opts.whenIdle();
      if ((why = stop())) return done(why);
      let builder: GraphBuilder;
      try {
        builder = await this.graphBuilder(key);
      } catch (e) {
        return done(stop() ?? `the graph failed: ${String(e)}`);
      }
      while (!builder.done) {
        await opts.whenIdle();
        if ((why = stop())) return done(why);
        builder.step(performance.now() + WARM_SLICE_MS);
      }
      // A call may have finished the build meanwhile and cached it; else cache it now.
      if (this.graphCache?.key !== key) {
        const g = builder.finish();
        this.lastGraphMs = g.stats.ms;
        this.graphCache = { key, graph: Promise.resolve(g) };
        report.graph = 'built';
      } else report.graph = 'cached';
    } else report.graph = 'cached';
    if (opts.graphOnly) return done();
    // 2. The grammars: tree-sitter's runtime, each grammar, its tag and locals queries, and a
    // first parse (V8 compiles a grammar's WebAssembly lazily, on its first parses).
    await opts.whenIdle();
    if ((why = stop())) return done(why);
    let parser: CodeParser;
    try {
      parser = await this.syntaxParser();
    } catch (e) {
      return done(`no parser: ${String(e)}`);
    }
    for (const { language, sample } of this.warmLanguages()) {
      await opts.whenIdle();
      if ((why = stop())) return done(why);
      try {
        parser.prepare(language);
        const text = await this.deps.fs.readFile(path.join(this.root, sample)).then(
          (b) => new TextDecoder().decode(b),
          () => undefined,
        );
        await opts.whenIdle();
        if ((why = stop())) return done(why);
        if (text !== undefined) parser.openTree(language, text).dispose();
        report.languages.push(language);
      } catch (e) {
        // A grammar that cannot load fails the call that needs it, with its own message.
        this.logger.debug(`warm-up: ${language}: ${String(e)}`);
      }
    }
    return done();
  }

  /**
   * The languages worth warming, most files first, each with the file to parse once: one of
   * middling size (a big file costs a long block, a tiny one exercises little of the grammar).
   */
  private warmLanguages(): Array<{ language: LanguageId; sample: string }> {
    const byLanguage = new Map<LanguageId, FileRow[]>();
    for (const f of this.store.listFiles()) {
      if (f.language === 'markdown') continue;
      let list = byLanguage.get(f.language);
      if (!list) byLanguage.set(f.language, (list = []));
      list.push(f);
    }
    return [...byLanguage]
      .sort((a, b) => b[1].length - a[1].length)
      .filter(([, files], i) => i === 0 || files.length >= WARM_MIN_FILES)
      .slice(0, WARM_MAX_LANGUAGES)
      .map(([language, files]) => {
        const sized = files.filter((f) => f.size <= WARM_SAMPLE_BYTES).sort((a, b) => b.size - a.size);
        return { language, sample: (sized[0] ?? files[0]!).path };
      });
  }

  /** The file system the engine reads the workspace through. */
  get workspaceFs(): WorkspaceFs {
    return this.deps.fs;
  }

  /**
   * A workspace file's text (invalid UTF-8 replaced), for reads beside the index (route
   * extraction, schema files); `IO` when it cannot be read. Paths come from the index or from
   * discovery, never from a caller: tools read through `read_file_range`'s access checks.
   */
  async readText(rel: string): Promise<string> {
    try {
      return new TextDecoder().decode(await this.deps.fs.readFile(path.join(this.root, rel)));
    } catch (e) {
      throw new VltError('IO', `cannot read ${rel}: ${errorMessage(e)}`, { path: rel }, { cause: e });
    }
  }

  /** An in-thread parser for live syntax trees (navigation parses single files on demand). */
  syntaxParser(): Promise<CodeParser> {
    this.navParser ??= createCodeParser().catch((e: unknown) => {
      this.navParser = undefined;
      throw e;
    });
    return this.navParser;
  }

  /**
   * Definitions and references through the provider chain. The host passes what it can reach:
   * language servers and Universal Ctags (both optional; the chain says when one is missing).
   */
  navigator(host: { lsp?: LanguageServers; tags?: TagsProvider } = {}): Navigator {
    return new Navigator({
      root: this.root,
      fs: this.deps.fs,
      store: this.store,
      graph: () => this.graph(),
      parser: () => this.syntaxParser(),
      trees: this.navTrees,
      logger: this.logger,
      ...(host.lsp ? { lsp: host.lsp } : {}),
      ...(host.tags ? { tags: host.tags } : {}),
      search: async (q) => (await this.search(q, { k: 10 })).hits.map((h) => ({ path: h.path, line: h.start_line, symbol: h.symbol })),
      symbolNames: () => this.symbolNames(),
    });
  }

  /** Every distinct definition name, from the symbol table the search already holds (for suggestions; not those of navigation-only files). */
  private symbolNames(): readonly string[] {
    return this.symbolTables.allNames();
  }

  /** Closes the index. `discard`: changes not committed are dropped on purpose (a scratch index), without the warning. */
  async close(opts: { discard?: boolean } = {}): Promise<void> {
    this.navTrees.clear();
    if (this.navParser) {
      const p = this.navParser;
      this.navParser = undefined;
      await p.then((parser) => parser.dispose()).catch(() => undefined);
    }
    await this.pool?.close();
    this.pool = undefined;
    await this.threadPool?.close();
    this.threadPool = undefined;
    this.loadedSearchIndex?.close();
    this.store.close(opts);
  }
}

/** A `{name: count}` object stored as JSON in the index's meta table; {} when absent or damaged. */
function parseCounts(json: string | undefined): Record<string, number> {
  if (!json) return {};
  try {
    const v = JSON.parse(json) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return {};
  }
}
