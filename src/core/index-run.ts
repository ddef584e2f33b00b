/**
 * One incremental index run: discover → read and classify → parse (worker pool) → store and
 * search index → embeddings → one atomic commit. Files are compared by size and mtime first
 * (no read), then by content hash: only changed files are re-parsed and re-embedded, and files
 * gone from disk are removed. A long run commits checkpoints as it goes, and a run that stopped
 * resumes after what they saved.
 *
 * The run is an object (as discovery's Walker is) because its stages share state: the report's
 * counters, the files known before it, the checkpoint clock and where a re-parse has got to.
 */
import { discoverFiles, type DiscoveredFile, type DiscoveryResult, type SkippedFile, type SkipReason } from './discovery';
import { EmbeddingService, embeddingCacheKey } from './embeddings';
import {
  EXTRACTOR_META,
  GENERATED_META,
  GO_VENDOR_META,
  goVendorDirsOf,
  inGoVendorDir,
  namespacedCache,
  persistIndex,
  throwIfAborted,
  topCounts,
  type IndexContext,
  type IndexReport,
} from './indexer';
import { EXTRACTOR_VERSION } from './parse/languages';
import { chunkDoc, chunkTerms, type FileSource, type PreparedFile } from './parse/prepare';
import type { ChunkDoc } from './search/orama-index';
import type { FieldTerms, TextField } from './search/text-index';
import { tokenizePath } from './search/tokenizer';
import { BUILD_STATE_META, type IndexStore } from './store/store';
import type { LanguageId } from './types';
import { errorMessage, VltError } from './errors';
import { embeddingTokenCap, type EmbeddingsConfig } from './config';

/** `incomplete` while a run's checkpoints are the index's latest commits (a run that stopped); then `complete`. */
const BUILD_META = BUILD_STATE_META;

/**
 * While a run that parses every file again (a new extractor, or `sync --force`) is under way:
 * the last path, in the run's path order, whose new parse a checkpoint saved ('' before the
 * first). A stopped run resumes after it; a finished one removes the key.
 */
const REPARSE_META = 'reparse_after';
/** The same for a run that treats the generated files again (`[index] generated` changed). */
const REGENERATE_META = 'regenerate_after';

/** A checkpoint waits at least this many times the previous one's duration: commits take at most a fifth of a run. */
const CHECKPOINT_COST_FACTOR = 4;

type KnownFile = ReturnType<IndexStore['listFiles']>[number];

/** What a targeted run stats instead of walking: its own paths, and which of them are gone. */
type TargetedFiles = Pick<DiscoveryResult, 'files' | 'skippedDirs' | 'unsupportedCount' | 'unsupportedByExt'> & { skipped: SkippedFile[]; gone: Set<string> };

/** Runs one incremental index run; see the file comment. */
export function runIndex(ctx: IndexContext): Promise<IndexReport> {
  return new IndexRun(ctx).run();
}

class IndexRun {
  private readonly t0 = performance.now();
  private readonly report: IndexReport = {
    filesDiscovered: 0,
    filesParsed: 0,
    filesUnchanged: 0,
    filesRemoved: 0,
    filesSkipped: 0,
    filesNavigationOnly: 0,
    chunksAdded: 0,
    chunksRemoved: 0,
    embedded: 0,
    embeddingCacheHits: 0,
    ms: { discover: 0, parse: 0, embed: 0, persist: 0, total: 0 },
    changed: [],
  };
  private readonly store: IndexStore;
  private readonly known: Map<string, KnownFile>;
  private readonly generatedMode: IndexContext['config']['index']['generated'];
  /** Set while the run treats the generated files again: the last path a checkpoint saved. */
  private regenerateAfter: string | undefined;
  /** Set while the run parses every file again: the last path a checkpoint saved. */
  private reparseAfter: string | undefined;
  /** The run's own paths when it was given some and all are known (no walk). */
  private targeted: TargetedFiles | undefined;
  private disc!: DiscoveryResult | TargetedFiles;
  private skipped: SkippedFile[] = [];
  private readonly embedQueue: Array<{ id: number; hash: string; text: string }> = [];
  /** The last path, in the run's order, whose changes were applied. */
  private lastApplied: string | undefined;
  private done = 0;
  private total = 0;
  private lastCheckpoint = performance.now();
  private checkpointCost = 0;

  constructor(private readonly ctx: IndexContext) {
    this.store = ctx.store;
    this.known = new Map(ctx.store.listFiles().map((f) => [f.path, f]));
    this.generatedMode = ctx.config.index.generated;
  }

  async run(): Promise<IndexReport> {
    await this.plan();
    this.removeGone();
    this.planReparse();
    await this.parseAll(this.candidates());
    await this.embed();
    await this.finish();
    this.report.ms.total = performance.now() - this.t0;
    return this.report;
  }

  // Read through ctx each time: the host may load its search index only when a run needs it
  // (a run that changes nothing never does). An index rebuilt from the stored chunks at that
  // moment (its snapshot was missing or unreadable) already holds the chunks this run stored
  // before it, so removing is idempotent and adding one it holds is skipped: a chunk id is never
  // reused, so the chunk it holds is this one. Removing and inserting it again would hand the
  // text index a document slot below its newest, which it refuses.
  private removeChunk(id: number): void {
    if (this.ctx.search.has(id)) this.ctx.search.remove(id);
  }

  private addChunk(doc: ChunkDoc, tokens: Record<TextField, FieldTerms>): void {
    if (!this.ctx.search.has(doc.id)) this.ctx.search.add(doc, undefined, tokens);
  }

  /** Where the run starts: resumed or not, which mode, and the files it looks at. */
  private async plan(): Promise<void> {
    const { ctx, store, known } = this;
    const { logger } = ctx;
    if (store.getMeta(BUILD_META) === 'incomplete' && !ctx.paths) {
      this.report.resumed = known.size;
      logger.info(`[index] resuming a build that stopped: ${known.size} files were indexed before it did`);
    }
    // Another `[index] generated` than the index was built with changes what generated files
    // hold (chunks or not) or whether they are there at all: the run walks the whole workspace,
    // and every generated file is treated again below. Unknown generated files are new anyway.
    const modeChanged = known.size > 0 && store.getMeta(GENERATED_META) !== this.generatedMode;
    if (modeChanged) logger.info(`[index] generated is now "${this.generatedMode}"; treating the generated files again`);
    // Such a run that stopped resumes after the last file its checkpoints saved.
    this.regenerateAfter = modeChanged ? '' : store.getMeta(REGENERATE_META);
    this.targeted = ctx.paths && this.regenerateAfter === undefined ? await this.statKnownPaths() : undefined;
    if (this.regenerateAfter !== undefined) store.setMeta(REGENERATE_META, this.regenerateAfter);
    const { signal, onProgress } = ctx;
    this.disc = this.targeted ?? (await discoverFiles(ctx.root, ctx.config, ctx.fs, { logger, ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) }));
    this.report.filesDiscovered = this.disc.files.length;
    this.report.ms.discover = performance.now() - this.t0;
    this.skipped = this.targeted ? [] : [...this.disc.skipped];
  }

  /**
   * For a targeted run: stats the given paths if all are already indexed (or deleted), so the
   * walk can be skipped. Undefined when a full walk is needed.
   */
  private async statKnownPaths(): Promise<TargetedFiles | undefined> {
    const files: DiscoveredFile[] = [];
    const gone = new Set<string>();
    const vendorDirs = goVendorDirsOf(this.store);
    for (const raw of this.ctx.paths ?? []) {
      const rel = raw.replace(/\\/g, '/').replace(/^\.\//, '');
      const k: { language: LanguageId } | undefined = this.known.get(rel);
      if (!k) return undefined;
      const absPath = `${this.ctx.root}/${rel}`;
      try {
        const st = await this.ctx.fs.stat(absPath);
        if (st.kind !== 'file') return undefined;
        files.push({ path: rel, absPath, language: k.language, size: st.size, mtimeMs: st.mtimeMs, ...(inGoVendorDir(rel, vendorDirs) ? { vendored: true as const } : {}) });
      } catch {
        gone.add(rel);
      }
    }
    return { files, skipped: [], skippedDirs: [], unsupportedCount: 0, unsupportedByExt: {}, gone };
  }

  /** Removed files: in the store, no longer discovered (deleted, newly ignored or excluded). A targeted run only considers its own paths. */
  private removeGone(): void {
    const present = new Set(this.disc.files.map((f) => f.path));
    if (this.targeted) for (const path of this.known.keys()) if (!this.targeted.gone.has(path)) present.add(path);
    for (const path of this.known.keys()) {
      if (present.has(path)) continue;
      const removed = this.store.removeFile(path);
      for (const id of removed) this.removeChunk(id);
      this.report.chunksRemoved += removed.length;
      this.report.filesRemoved++;
      this.report.changed.push(path);
    }
  }

  /**
   * An index parsed by another extractor version holds other symbols and references than this
   * one would find: a full run parses every file again, changed or not; so does a forced run.
   * Such a run that stopped resumes after the last file its checkpoints saved.
   */
  private planReparse(): void {
    const { ctx, store, known } = this;
    if (this.targeted) return;
    const pending = store.getMeta(REPARSE_META);
    if (known.size > 0 && (ctx.force === true || store.getMeta(EXTRACTOR_META) !== String(EXTRACTOR_VERSION))) {
      this.reparseAfter = '';
      const n = this.disc.files.length;
      ctx.logger.info(ctx.force ? `parsing all ${n} files again (forced)` : `the index was parsed by another version of the extractor; parsing all ${n} files again`);
    } else if (pending !== undefined) {
      this.reparseAfter = pending;
      ctx.logger.info(`[index] resuming a run that parses every file again, after ${pending || 'the start'}`);
    }
    if (this.reparseAfter !== undefined) store.setMeta(REPARSE_META, this.reparseAfter);
  }

  private reparse(path: string): boolean {
    return this.reparseAfter !== undefined && path > this.reparseAfter;
  }

  private retreat(path: string): boolean {
    return this.regenerateAfter !== undefined && path > this.regenerateAfter;
  }

  /** Changed or new files. Size+mtime equal means unchanged without reading the file. */
  private candidates(): DiscoveredFile[] {
    return this.disc.files.filter((f) => {
      const k = this.known.get(f.path);
      const same = !this.reparse(f.path) && k !== undefined && !(this.retreat(f.path) && k.generated) && k.size === f.size && k.mtimeMs === f.mtimeMs;
      if (same) this.report.filesUnchanged++;
      return !same;
    });
  }

  /**
   * Reads, classifies and parses the candidates concurrently, but applies what each changes in
   * the store and the search index in their order (sorted by path): chunk ids, and with them
   * the order of equal search scores, are then the same on every run and machine, whichever
   * parse finished first.
   */
  private async parseAll(candidates: DiscoveredFile[]): Promise<void> {
    const { signal } = this.ctx;
    const tParse = performance.now();
    this.total = candidates.length;
    const inFlight = new Set<Promise<void>>();
    // Files wait for their turn to be stored: a wider window keeps the pool busy past a slow one.
    const maxInFlight = Math.max(4, this.ctx.pool.size * 24);
    // Each file's changes wait for the previous file's.
    let applied: Promise<void> = Promise.resolve();
    try {
      for (const f of candidates) {
        throwIfAborted(signal);
        const prepared = this.prepareFile(f);
        const turn = applied;
        const p: Promise<void> = (async () => {
          const apply = await prepared;
          await turn;
          apply();
          this.lastApplied = f.path;
          await this.maybeCheckpoint();
        })().finally(() => {
          inFlight.delete(p);
          this.ctx.onProgress?.({ phase: 'parse', done: ++this.done, total: this.total });
        });
        // A failure is reported once, by Promise.all below; the next file's turn still comes.
        applied = p.catch(() => undefined);
        inFlight.add(p);
        if (inFlight.size >= maxInFlight) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
    } catch (e) {
      // Cancelled: what was indexed is kept (saved as a checkpoint), and the next run resumes.
      if (signal?.aborted && this.ctx.persist !== false && !this.targeted) {
        await Promise.allSettled([...inFlight]);
        if (this.report.changed.length > 0) await this.checkpoint().catch((err: unknown) => this.ctx.logger.warn(`[index] could not save what was indexed before the cancel: ${errorMessage(err)}`));
      }
      throw e;
    }
    this.report.ms.parse = performance.now() - tParse;
    this.report.filesSkipped = this.skipped.length;
  }

  /** Reads and parses one file; the function returned applies the result to the store and the search index. */
  private async prepareFile(f: DiscoveredFile): Promise<() => void> {
    const { ctx, known } = this;
    const skip = (reason: SkipReason, detail: string | undefined) => () => {
      this.skipped.push({ path: f.path, reason, ...(detail !== undefined ? { detail } : {}) });
      this.dropFile(f.path);
    };
    let source: FileSource;
    if (ctx.fs.localDisk && ctx.pool.mode === 'workers') source = { absPath: f.absPath };
    else {
      try {
        source = ctx.fs.readFileSync ? ctx.fs.readFileSync(f.absPath) : await ctx.fs.readFile(f.absPath);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        return skip('unreadable', code === 'ENOENT' ? 'deleted during indexing' : String(code ?? (e as Error).message));
      }
    }
    const prev = known.get(f.path);
    // Touched but not changed: the parse stays. The stored mtime stays old, so the next run
    // hashes this file again; that costs a read, never a parse.
    const mayKeep = prev !== undefined && !this.reparse(f.path) && !(this.retreat(f.path) && prev.generated);
    let prepared: PreparedFile;
    try {
      const job = {
        path: f.path,
        language: f.language,
        maxFileBytes: ctx.config.index.maxFileBytes,
        generatedMode: this.generatedMode,
        vendored: f.vendored === true,
        ...(mayKeep ? { knownHash: prev.hash } : {}),
        enriched: ctx.embeddings !== undefined,
      };
      prepared = await ctx.pool.prepare(job, source);
    } catch (e) {
      ctx.logger.warn(`parse failed for ${f.path}: ${(e as Error).message}`);
      return skip('unreadable', `parser failed: ${(e as Error).message}`);
    }
    if (prepared.kind === 'skip') return skip(prepared.reason, prepared.detail);
    if (prepared.kind === 'unchanged') {
      return () => {
        this.report.filesUnchanged++;
      };
    }
    return () => this.applyParsed(f, prepared);
  }

  /** Stores one parsed file and adds its chunks to the search index (and the embedding queue). */
  private applyParsed(f: DiscoveredFile, prepared: Extract<PreparedFile, { kind: 'parsed' }>): void {
    const { parsed, hash, generated, navigationOnly, chunkHashes, names, tokens, enriched } = prepared;
    const pathTokens = tokenizePath(f.path);
    const { chunkIds, removedChunkIds } = this.store.replaceFile({ path: f.path, hash, mtimeMs: f.mtimeMs, size: f.size, language: f.language, generated }, parsed, chunkHashes);
    for (const id of removedChunkIds) this.removeChunk(id);
    this.report.chunksRemoved += removedChunkIds.length;
    parsed.chunks.forEach((c, i) => {
      const id = chunkIds[i]!;
      const t = tokens[i]!;
      this.addChunk(chunkDoc(id, f.path, f.language, c, names[i]!), { ...chunkTerms(t), path: pathTokens });
      if (enriched) this.embedQueue.push({ id, hash: chunkHashes[i]!, text: enriched[i]! });
    });
    this.report.chunksAdded += chunkIds.length;
    this.report.filesParsed++;
    if (navigationOnly) this.report.filesNavigationOnly++;
    this.report.changed.push(f.path);
  }

  /** A file the index held that this run skips now: its entries go. */
  private dropFile(path: string): void {
    if (!this.known.has(path)) return;
    const removed = this.store.removeFile(path);
    for (const id of removed) this.removeChunk(id);
    this.report.chunksRemoved += removed.length;
    this.report.changed.push(path);
  }

  /**
   * A long run commits as it goes: a run killed, crashed or cancelled keeps what it indexed, and
   * the next one parses only the rest. At most every `checkpointSeconds`, and never more than a
   * fifth of the run's time (a commit writes the whole index).
   */
  private async maybeCheckpoint(): Promise<void> {
    if (this.ctx.persist === false || this.targeted || this.ctx.signal?.aborted) return;
    if (performance.now() - this.lastCheckpoint < Math.max(this.ctx.config.index.checkpointSeconds * 1000, this.checkpointCost * CHECKPOINT_COST_FACTOR)) return;
    await this.checkpoint();
  }

  /** The files stored were parsed by this extractor in this generated mode. */
  private markParsed(): void {
    this.store.setMeta(EXTRACTOR_META, String(EXTRACTOR_VERSION));
    this.store.setMeta(GENERATED_META, this.generatedMode);
  }

  private async checkpoint(): Promise<void> {
    const now = performance.now();
    const { store } = this;
    this.markParsed();
    store.setMeta(BUILD_META, 'incomplete');
    if (this.reparseAfter !== undefined && this.lastApplied !== undefined) store.setMeta(REPARSE_META, this.lastApplied);
    if (this.regenerateAfter !== undefined && this.lastApplied !== undefined) store.setMeta(REGENERATE_META, this.lastApplied);
    this.ctx.beforePersist?.(this.report.changed);
    this.ctx.onProgress?.({ phase: 'persist', done: 0, total: 1, message: `saving what is indexed so far (${this.done} of ${this.total} files)` });
    await persistIndex(store, this.ctx.search, { checkpoint: true, logger: this.ctx.logger });
    this.report.checkpoints = (this.report.checkpoints ?? 0) + 1;
    this.lastCheckpoint = performance.now();
    this.checkpointCost = this.lastCheckpoint - now;
    this.ctx.logger.debug(`[index] saved ${this.done} of ${this.total} files (${Math.round(this.checkpointCost)} ms)`);
  }

  /** Embeds the queued chunks, and those an earlier run stored without a vector (its endpoint failed). */
  private async embed(): Promise<void> {
    const { ctx, report, embedQueue } = this;
    const tEmbed = performance.now();
    if (ctx.embeddings && ctx.missingVectors) {
      const queued = new Set(embedQueue.map((e) => e.id));
      for (const m of ctx.missingVectors()) if (!queued.has(m.id)) embedQueue.push(m);
    }
    if (ctx.embeddings && embedQueue.length > 0) {
      const cfg = ctx.config.embeddings;
      let needed = 0;
      const service = new EmbeddingService(ctx.embeddings, namespacedCache(this.store, embeddingCacheKey(ctx.embeddings)), {
        batchSize: cfg.batchSize,
        concurrency: cfg.concurrency,
        cap: capOf(cfg),
        logger: ctx.logger,
        onProgress: (d, t) => {
          needed = t;
          ctx.onProgress?.({ phase: 'embed', done: d, total: t });
        },
      });
      try {
        const vectors = await service.embedAll(embedQueue.map(({ hash, text }) => ({ hash, text })), ctx.signal);
        for (const item of embedQueue) {
          const v = vectors.get(item.hash);
          if (v) ctx.search.setVector(item.id, v);
        }
        report.embedded = needed;
        report.embeddingCacheHits = new Set(embedQueue.map((e) => e.hash)).size - needed;
      } catch (e) {
        // A failing endpoint costs the vectors, never the text and symbol index (seed: "BM25-only
        // with a warning"): the run saves what it parsed, and the next run embeds what is missing.
        if (ctx.signal?.aborted) throw e;
        const message = errorMessage(e);
        report.vectorsPending = embedQueue.length;
        report.embeddingError = message;
        if (e instanceof VltError && e.code === 'EMBEDDING_BUDGET') ctx.logger.warn(`${message}. The text and symbol index is up to date; ${embedQueue.length} chunks have no vector yet.`);
        else ctx.logger.warn(`embedding failed (${message}): ${embedQueue.length} chunks have no vector yet; the text and symbol index is up to date, and the next sync embeds them`);
      }
    }
    report.ms.embed = performance.now() - tEmbed;
  }

  /** Records what a full run learnt about the tree, and commits. */
  private async finish(): Promise<void> {
    const { ctx, store, report, disc } = this;
    if (!this.targeted) {
      this.markParsed();
      if (this.reparseAfter !== undefined) store.deleteMeta(REPARSE_META);
      if (this.regenerateAfter !== undefined) store.deleteMeta(REGENERATE_META);
      if (store.getMeta(BUILD_META) !== undefined) store.setMeta(BUILD_META, 'complete');
      store.setSkipped(this.skipped);
      store.setMeta('unsupported_files', String(disc.unsupportedCount));
      store.setMeta('unsupported_extensions', JSON.stringify(topCounts(disc.unsupportedByExt, 10)));
      store.setMeta('skipped_dirs', JSON.stringify(disc.skippedDirs));
      if ('goVendorDirs' in disc) store.setMeta(GO_VENDOR_META, JSON.stringify(disc.goVendorDirs));
    }
    // Nothing changed and nothing else to write: the index on disk is current, and rewriting it
    // would bump its generation and make every reader load it again.
    ctx.beforePersist?.(report.changed);
    if (ctx.persist !== false && (report.changed.length > 0 || store.hasUnsavedChanges || !store.loadedFromDisk)) {
      const tPersist = performance.now();
      ctx.onProgress?.({ phase: 'persist', done: 0, total: 1 });
      await persistIndex(store, ctx.search, { logger: ctx.logger });
      ctx.onProgress?.({ phase: 'persist', done: 1, total: 1 });
      report.ms.persist = performance.now() - tPersist;
    }
  }
}

/** The embedding service's cap for a run, from `[embeddings] max_tokens` / `max_cost`. */
function capOf(cfg: EmbeddingsConfig): { tokens: number; setting: string; price?: number } | undefined {
  const cap = embeddingTokenCap(cfg);
  return cap && { ...cap, ...(cfg.pricePerMillionTokens !== undefined ? { price: cfg.pricePerMillionTokens } : {}) };
}
