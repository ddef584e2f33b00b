/**
 * Incremental indexing: discover → read and classify → parse (worker pool) → store and
 * search index → embeddings → one atomic commit. Files are compared by size and mtime
 * first (no read), then by content hash: only changed files are re-parsed and re-embedded,
 * and files gone from disk are removed.
 */
import type { VltConfig } from './config';
import { classifyContent, discoverFiles, type DiscoveredFile, type SkippedFile, type SkipReason } from './discovery';
import { chunkDoc, chunkTerms, type FileSource } from './parse/prepare';
import { tokenizePath } from './search/tokenizer';
import { EmbeddingService, embeddingCacheKey, type EmbeddingCache } from './embeddings';
import { ExcludeSuggester, type ExcludeSuggestion } from './exclude-suggestions';
import type { EmbeddingProvider, Logger, ProgressSink, WorkspaceFs } from './ports';
import { EXTRACTOR_VERSION } from './parse/languages';
import type { ParsePool } from './parse/pool';
import type { ChunkDoc, SearchIndex } from './search/orama-index';
import type { FieldTerms, TextField } from './search/text-index';
import type { PreparedFile } from './parse/prepare';
import { BUILD_STATE_META, type IndexStore } from './store/store';
import { estimateTokens } from './tokens';
import type { LanguageId } from './types';
import { VltError, errorMessage } from './errors';

export interface IndexReport {
  filesDiscovered: number;
  filesParsed: number;
  filesUnchanged: number;
  filesRemoved: number;
  filesSkipped: number;
  /** Generated files this run stored for navigation only (no chunks); see `[index] generated`. */
  filesNavigationOnly: number;
  chunksAdded: number;
  chunksRemoved: number;
  embedded: number;
  embeddingCacheHits: number;
  /**
   * Chunks left without a vector because the embedding endpoint failed: the text and symbol
   * index was updated all the same, and the next run embeds them. Absent when none.
   */
  vectorsPending?: number;
  /** Why the vectors are pending, as the endpoint failed. */
  embeddingError?: string;
  /** Times this run saved what it had indexed so far (a long run; see `[index] checkpoint_seconds`). */
  checkpoints?: number;
  /** Set when this run continued a build that had stopped: the files it had indexed. */
  resumed?: number;
  ms: Record<'discover' | 'parse' | 'embed' | 'persist' | 'total', number>;
  /** Set when a corrupt or outdated index was moved aside and rebuilt. */
  rebuildReason?: string;
  /** Paths whose index entries changed (re-parsed, removed or dropped). */
  changed: string[];
}

export interface DryRunReport {
  files: number;
  bytes: number;
  languages: Record<string, { files: number; bytes: number }>;
  skippedDirs: Array<{ path: string; reason: string; detail?: string }>;
  skipped: Record<string, number>;
  /** Every file that would be skipped, with why (`--list-skipped`); absent unless asked for. */
  skippedFiles?: Array<{ path: string; reason: string; detail?: string }>;
  /** Generated files that would be stored for navigation only (counted in `files` too). */
  navigationOnly: number;
  unsupportedFiles: number;
  /** The most common extensions of those files, most first. */
  unsupportedExtensions: Record<string, number>;
  /** Characters / 4 over the text of every file that would be chunked (tokens.ts's estimate). */
  estimatedEmbeddingTokens: number;
  embeddings: string;
  /** Folders worth leaving out (documentation, firmware, vendored, generated), largest first. */
  suggestedExcludes: ExcludeSuggestion[];
}

export interface IndexContext {
  root: string;
  config: VltConfig;
  fs: WorkspaceFs;
  store: IndexStore;
  search: SearchIndex;
  pool: ParsePool;
  logger: Logger;
  embeddings?: EmbeddingProvider;
  /** Stored chunks without a vector, with the text to embed (see IndexReport.vectorsPending). */
  missingVectors?: () => Array<{ id: number; hash: string; text: string }>;
  onProgress?: ProgressSink;
  signal?: AbortSignal;
  /**
   * Workspace-relative paths known to have changed (from a file watcher or an editor save).
   * When every one is already indexed, or gone, the workspace walk is skipped and only they
   * are checked; any unknown path falls back to a full incremental run, because only the walk
   * can tell whether a new file is ignored.
   */
  paths?: string[];
  /**
   * Parse every file again, changed or not (`sync --force`): the index is rebuilt from the
   * sources while the one committed before keeps serving until the run's commits replace it.
   */
  force?: boolean;
  /**
   * Write the result to disk before returning (default). Long-lived hosts pass false to make
   * an edit searchable at once and persist later with {@link persistIndex}.
   */
  persist?: boolean;
  /**
   * Called with the changed paths just before the run commits (or, with `persist: false`, at
   * its end): what the host derives from the store (the symbol table the commit persists) must
   * follow the changes first.
   */
  beforePersist?: (changed: readonly string[]) => void;
}

/**
 * The store's cache keyed by the provider's namespace (model plus requested dimensions), so
 * that changing `dimensions` never serves vectors of the old size.
 */
function namespacedCache(store: IndexStore, key: string): EmbeddingCache {
  return {
    getMany: (_model, hashes) => store.embeddings.getMany(key, hashes),
    putMany: (_model, entries) => store.embeddings.putMany(key, entries),
  };
}

/** The `n` largest counts, largest first (ties by name). */
export function topCounts(counts: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, n),
  );
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new VltError('CANCELLED', 'indexing was cancelled');
}

export async function dryRun(root: string, config: VltConfig, fs: WorkspaceFs, logger: Logger, onProgress?: ProgressSink, opts: { listSkipped?: boolean } = {}): Promise<DryRunReport> {
  const disc = await discoverFiles(root, config, fs, { logger, ...(onProgress ? { onProgress } : {}) });
  const report: DryRunReport = {
    files: 0,
    bytes: 0,
    languages: {},
    skippedDirs: disc.skippedDirs,
    skipped: {},
    navigationOnly: 0,
    unsupportedFiles: disc.unsupportedCount,
    unsupportedExtensions: topCounts(disc.unsupportedByExt, 10),
    estimatedEmbeddingTokens: 0,
    embeddings: config.embeddings.enabled ? `${config.embeddings.model} at ${config.embeddings.baseUrl}` : 'off (no embedding provider configured)',
    suggestedExcludes: [],
  };
  const suggester = new ExcludeSuggester();
  const list: NonNullable<DryRunReport['skippedFiles']> | undefined = opts.listSkipped ? [] : undefined;
  if (list) report.skippedFiles = list;
  const skip = (path: string, reason: string, detail?: string) => {
    report.skipped[reason] = (report.skipped[reason] ?? 0) + 1;
    list?.push({ path, reason, ...(detail ? { detail } : {}) });
  };
  for (const s of disc.skipped) skip(s.path, s.reason, s.detail);
  let done = 0;
  for (const f of disc.files) {
    onProgress?.({ phase: 'parse', done: done++, total: disc.files.length, message: 'reading' });
    let cls;
    try {
      cls = classifyContent(f.path, await fs.readFile(f.absPath), { language: f.language, maxFileBytes: config.index.maxFileBytes });
    } catch {
      skip(f.path, 'unreadable');
      continue;
    }
    const mode = cls.ok && cls.generated !== undefined ? config.index.generated : 'index';
    if (!cls.ok || mode === 'skip') {
      if (cls.ok) skip(f.path, 'generated', cls.generated);
      else skip(f.path, cls.reason, cls.detail);
      continue;
    }
    report.files++;
    report.bytes += f.size;
    const l = (report.languages[f.language] ??= { files: 0, bytes: 0 });
    l.files++;
    l.bytes += f.size;
    // A navigation-only file has no chunks, so nothing of it is embedded.
    if (mode === 'navigation') report.navigationOnly++;
    else report.estimatedEmbeddingTokens += estimateTokens(cls.text);
    suggester.add(f.path, f.size, cls.generated !== undefined);
  }
  report.suggestedExcludes = suggester.suggestions(report.files);
  return report;
}

/**
 * For a targeted run: stats the given paths if all are already indexed (or deleted), so the
 * walk can be skipped. Returns undefined when a full walk is needed.
 */
async function statKnownPaths(
  ctx: IndexContext,
  known: Map<string, { language: LanguageId }>,
): Promise<(Pick<Awaited<ReturnType<typeof discoverFiles>>, 'files' | 'skippedDirs' | 'unsupportedCount' | 'unsupportedByExt'> & { skipped: SkippedFile[]; gone: Set<string> }) | undefined> {
  const files: DiscoveredFile[] = [];
  const gone = new Set<string>();
  const vendorDirs = goVendorDirsOf(ctx.store);
  for (const raw of ctx.paths ?? []) {
    const rel = raw.replace(/\\/g, '/').replace(/^\.\//, '');
    const k = known.get(rel);
    if (!k) return undefined;
    const absPath = `${ctx.root}/${rel}`;
    try {
      const st = await ctx.fs.stat(absPath);
      if (st.kind !== 'file') return undefined;
      files.push({ path: rel, absPath, language: k.language, size: st.size, mtimeMs: st.mtimeMs, ...(inGoVendorDir(rel, vendorDirs) ? { vendored: true as const } : {}) });
    } catch {
      gone.add(rel);
    }
  }
  return { files, skipped: [], skippedDirs: [], unsupportedCount: 0, unsupportedByExt: {}, gone };
}

/**
 * Snapshots the search index into the store and commits both in one atomic write: the text
 * index's tail becomes a segment file and segments are merged as its policy says (files written
 * before index.db), then the snapshot, which names them, goes in with the commit.
 */
export async function persistIndex(store: IndexStore, search: SearchIndex, opts: { checkpoint?: boolean; logger?: Logger } = {}): Promise<void> {
  const t0 = performance.now();
  await search.mergeText();
  const t1 = performance.now();
  store.setBlob('search', search.serialize());
  store.setTextSegments(search.segmentNames());
  opts.logger?.debug(`[index] text segments merged in ${Math.round(t1 - t0)} ms, search snapshot in ${Math.round(performance.now() - t1)} ms`);
  await store.commit(opts.checkpoint ? { symbolTable: false } : {});
}

/** The store meta key holding the Go vendor directories the last walk indexed for navigation. */
export const GO_VENDOR_META = 'go_vendor_dirs';

/** The Go vendor directories the index holds for navigation only. */
export function goVendorDirsOf(store: { getMeta(key: string): string | undefined }): string[] {
  try {
    const v = JSON.parse(store.getMeta(GO_VENDOR_META) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether a workspace path lies in one of these Go vendor directories. */
export function inGoVendorDir(path: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => path.startsWith(`${d}/`));
}

/** The store meta key holding the extractor version the index was parsed with. */
const EXTRACTOR_META = 'extractor_version';

/** The store meta key holding the `[index] generated` mode the index was built with. */
export const GENERATED_META = 'generated_mode';

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

// eslint-disable-next-line max-lines-per-function -- the pipeline's stages in order (plan, parse and store, checkpoints, finish), each marked by a comment, sharing the run's counters and the checkpoint clock; a run object like discovery's Walker would be the next step
export async function runIndex(ctx: IndexContext): Promise<IndexReport> {
  const { store, logger, onProgress, signal } = ctx;
  // Read through ctx each time: the host may load its search index only when a run needs it
  // (a run that changes nothing never does). An index rebuilt from the stored chunks at that
  // moment (its snapshot was missing or unreadable) already holds the chunks this run stored
  // before it, so removing is idempotent and adding one it holds is skipped: a chunk id is never
  // reused, so the chunk it holds is this one. Removing and inserting it again would hand the
  // text index a document slot below its newest, which it refuses.
  const search = {
    remove: (id: number) => {
      if (ctx.search.has(id)) ctx.search.remove(id);
    },
    add: (doc: ChunkDoc, tokens: Record<TextField, FieldTerms>) => {
      if (!ctx.search.has(doc.id)) ctx.search.add(doc, undefined, tokens);
    },
    setVector: (id: number, v: Float32Array) => ctx.search.setVector(id, v),
  };
  const t0 = performance.now();
  const report: IndexReport = {
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

  const known = new Map(store.listFiles().map((f) => [f.path, f]));
  if (store.getMeta(BUILD_META) === 'incomplete' && !ctx.paths) {
    report.resumed = known.size;
    logger.info(`[index] resuming a build that stopped: ${known.size} files were indexed before it did`);
  }
  // Another `[index] generated` than the index was built with changes what generated files
  // hold (chunks or not) or whether they are there at all: the run walks the whole workspace,
  // and every generated file is treated again below. Unknown generated files are new anyway.
  const generatedMode = ctx.config.index.generated;
  const modeChanged = known.size > 0 && store.getMeta(GENERATED_META) !== generatedMode;
  if (modeChanged) logger.info(`[index] generated is now "${generatedMode}"; treating the generated files again`);
  // Such a run that stopped resumes after the last file its checkpoints saved.
  const regenerateAfter = modeChanged ? '' : store.getMeta(REGENERATE_META);
  const targeted = ctx.paths && regenerateAfter === undefined ? await statKnownPaths(ctx, known) : undefined;
  if (regenerateAfter !== undefined) store.setMeta(REGENERATE_META, regenerateAfter);
  const retreat = (path: string) => regenerateAfter !== undefined && path > regenerateAfter;
  const disc = targeted ?? (await discoverFiles(ctx.root, ctx.config, ctx.fs, { logger, ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) }));
  report.filesDiscovered = disc.files.length;
  report.ms.discover = performance.now() - t0;
  const skipped: SkippedFile[] = targeted ? [] : [...disc.skipped];

  // Removed files: in the store, no longer discovered (deleted, newly ignored or excluded).
  // A targeted run only considers its own paths.
  const present = new Set(disc.files.map((f) => f.path));
  if (targeted) for (const path of known.keys()) if (!targeted.gone.has(path)) present.add(path);
  for (const path of known.keys()) {
    if (present.has(path)) continue;
    const removed = store.removeFile(path);
    for (const id of removed) search.remove(id);
    report.chunksRemoved += removed.length;
    report.filesRemoved++;
    report.changed.push(path);
  }

  // An index parsed by another extractor version holds other symbols and references than this
  // one would find: a full run parses every file again, changed or not; so does a forced run.
  // Such a run that stopped resumes after the last file its checkpoints saved.
  const pendingReparse = targeted ? undefined : store.getMeta(REPARSE_META);
  let reparseAfter: string | undefined;
  if (!targeted && known.size > 0 && (ctx.force === true || store.getMeta(EXTRACTOR_META) !== String(EXTRACTOR_VERSION))) {
    reparseAfter = '';
    logger.info(ctx.force ? `parsing all ${disc.files.length} files again (forced)` : `the index was parsed by another version of the extractor; parsing all ${disc.files.length} files again`);
  } else if (pendingReparse !== undefined) {
    reparseAfter = pendingReparse;
    logger.info(`[index] resuming a run that parses every file again, after ${pendingReparse || 'the start'}`);
  }
  if (reparseAfter !== undefined) store.setMeta(REPARSE_META, reparseAfter);
  const reparse = (path: string) => reparseAfter !== undefined && path > reparseAfter;
  let lastApplied: string | undefined;

  // Changed or new files. Size+mtime equal means unchanged without reading the file.
  const candidates = disc.files.filter((f) => {
    const k = known.get(f.path);
    const same = !reparse(f.path) && k !== undefined && !(retreat(f.path) && k.generated) && k.size === f.size && k.mtimeMs === f.mtimeMs;
    if (same) report.filesUnchanged++;
    return !same;
  });

  const tParse = performance.now();
  const embedQueue: Array<{ id: number; hash: string; text: string }> = [];
  let done = 0;
  const total = candidates.length;
  const inFlight = new Set<Promise<void>>();
  // Files wait for their turn to be stored (see prepareFile): a wider window keeps the pool busy past a slow one.
  const maxInFlight = Math.max(4, ctx.pool.size * 24);

  // A file is read, classified and parsed concurrently with others, but what it changes in the
  // store and the search index is applied in the order of `candidates` (sorted by path): chunk
  // ids, and with them the order of equal search scores, are then the same on every run and
  // machine, whichever parse finished first.
  const prepareFile = async (f: DiscoveredFile): Promise<() => void> => {
    const skip = (reason: SkipReason, detail: string | undefined) => () => {
      skipped.push({ path: f.path, reason, ...(detail !== undefined ? { detail } : {}) });
      dropFile(f.path);
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
    const mayKeep = prev !== undefined && !reparse(f.path) && !(retreat(f.path) && prev.generated);
    let prepared: PreparedFile;
    try {
      prepared = await ctx.pool.prepare(
        {
          path: f.path,
          language: f.language,
          maxFileBytes: ctx.config.index.maxFileBytes,
          generatedMode,
          vendored: f.vendored === true,
          ...(mayKeep ? { knownHash: prev.hash } : {}),
          enriched: ctx.embeddings !== undefined,
        },
        source,
      );
    } catch (e) {
      logger.warn(`parse failed for ${f.path}: ${(e as Error).message}`);
      return skip('unreadable', `parser failed: ${(e as Error).message}`);
    }
    if (prepared.kind === 'skip') return skip(prepared.reason, prepared.detail);
    if (prepared.kind === 'unchanged') {
      return () => {
        report.filesUnchanged++;
      };
    }
    const { parsed, hash, generated, navigationOnly, chunkHashes, names, tokens, enriched } = prepared;
    const pathTokens = tokenizePath(f.path);
    return () => {
      const { chunkIds, removedChunkIds } = store.replaceFile({ path: f.path, hash, mtimeMs: f.mtimeMs, size: f.size, language: f.language, generated }, parsed, chunkHashes);
      for (const id of removedChunkIds) search.remove(id);
      report.chunksRemoved += removedChunkIds.length;
      parsed.chunks.forEach((c, i) => {
        const id = chunkIds[i]!;
        const t = tokens[i]!;
        search.add(chunkDoc(id, f.path, f.language, c, names[i]!), { ...chunkTerms(t), path: pathTokens });
        if (enriched) embedQueue.push({ id, hash: chunkHashes[i]!, text: enriched[i]! });
      });
      report.chunksAdded += chunkIds.length;
      report.filesParsed++;
      if (navigationOnly) report.filesNavigationOnly++;
      report.changed.push(f.path);
    };
  };

  const dropFile = (path: string) => {
    if (!known.has(path)) return;
    const removed = store.removeFile(path);
    for (const id of removed) search.remove(id);
    report.chunksRemoved += removed.length;
    report.changed.push(path);
  };

  // A long run commits as it goes: a run killed, crashed or cancelled keeps what it indexed, and
  // the next one parses only the rest. At most every `checkpointSeconds`, and never more than a
  // fifth of the run's time (a commit writes the whole index).
  let lastCheckpoint = performance.now();
  let checkpointCost = 0;
  const maybeCheckpoint = async () => {
    if (ctx.persist === false || targeted || signal?.aborted) return;
    if (performance.now() - lastCheckpoint < Math.max(ctx.config.index.checkpointSeconds * 1000, checkpointCost * CHECKPOINT_COST_FACTOR)) return;
    await checkpoint();
  };
  /** The files stored were parsed by this extractor in this generated mode. */
  const markParsed = () => {
    store.setMeta(EXTRACTOR_META, String(EXTRACTOR_VERSION));
    store.setMeta(GENERATED_META, generatedMode);
  };
  const checkpoint = async () => {
    const now = performance.now();
    markParsed();
    store.setMeta(BUILD_META, 'incomplete');
    if (reparseAfter !== undefined && lastApplied !== undefined) store.setMeta(REPARSE_META, lastApplied);
    if (regenerateAfter !== undefined && lastApplied !== undefined) store.setMeta(REGENERATE_META, lastApplied);
    ctx.beforePersist?.(report.changed);
    onProgress?.({ phase: 'persist', done: 0, total: 1, message: `saving what is indexed so far (${done} of ${total} files)` });
    await persistIndex(store, ctx.search, { checkpoint: true, logger });
    report.checkpoints = (report.checkpoints ?? 0) + 1;
    lastCheckpoint = performance.now();
    checkpointCost = lastCheckpoint - now;
    logger.debug(`[index] saved ${done} of ${total} files (${Math.round(checkpointCost)} ms)`);
  };

  // Each file's changes wait for the previous file's: see prepareFile.
  let applied: Promise<void> = Promise.resolve();
  try {
    for (const f of candidates) {
      throwIfAborted(signal);
      const prepared = prepareFile(f);
      const turn = applied;
      const p: Promise<void> = (async () => {
        const apply = await prepared;
        await turn;
        apply();
        lastApplied = f.path;
        await maybeCheckpoint();
      })().finally(() => {
        inFlight.delete(p);
        onProgress?.({ phase: 'parse', done: ++done, total });
      });
      // A failure is reported once, by Promise.all below; the next file's turn still comes.
      applied = p.catch(() => undefined);
      inFlight.add(p);
      if (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  } catch (e) {
    // Cancelled: what was indexed is kept (saved as a checkpoint), and the next run resumes.
    if (signal?.aborted && ctx.persist !== false && !targeted) {
      await Promise.allSettled([...inFlight]);
      if (report.changed.length > 0) await checkpoint().catch((err: unknown) => logger.warn(`[index] could not save what was indexed before the cancel: ${err instanceof Error ? err.message : String(err)}`));
    }
    throw e;
  }
  report.ms.parse = performance.now() - tParse;
  report.filesSkipped = skipped.length;

  const tEmbed = performance.now();
  // Chunks an earlier run stored without a vector (its endpoint failed) are embedded now.
  if (ctx.embeddings && ctx.missingVectors) {
    const queued = new Set(embedQueue.map((e) => e.id));
    for (const m of ctx.missingVectors()) if (!queued.has(m.id)) embedQueue.push(m);
  }
  if (ctx.embeddings && embedQueue.length > 0) {
    const cfg = ctx.config.embeddings;
    let needed = 0;
    const service = new EmbeddingService(ctx.embeddings, namespacedCache(store, embeddingCacheKey(ctx.embeddings)), {
      batchSize: cfg.batchSize,
      concurrency: cfg.concurrency,
      logger,
      onProgress: (d, t) => {
        needed = t;
        onProgress?.({ phase: 'embed', done: d, total: t });
      },
    });
    try {
      const vectors = await service.embedAll(embedQueue.map(({ hash, text }) => ({ hash, text })), signal);
      for (const item of embedQueue) {
        const v = vectors.get(item.hash);
        if (v) search.setVector(item.id, v);
      }
      report.embedded = needed;
      report.embeddingCacheHits = new Set(embedQueue.map((e) => e.hash)).size - needed;
    } catch (e) {
      // A failing endpoint costs the vectors, never the text and symbol index (seed: "BM25-only
      // with a warning"): the run saves what it parsed, and the next run embeds what is missing.
      if (signal?.aborted) throw e;
      const message = errorMessage(e);
      report.vectorsPending = embedQueue.length;
      report.embeddingError = message;
      logger.warn(`embedding failed (${message}): ${embedQueue.length} chunks have no vector yet; the text and symbol index is up to date, and the next sync embeds them`);
    }
  }
  report.ms.embed = performance.now() - tEmbed;

  if (!targeted) {
    markParsed();
    if (reparseAfter !== undefined) store.deleteMeta(REPARSE_META);
    if (regenerateAfter !== undefined) store.deleteMeta(REGENERATE_META);
    if (store.getMeta(BUILD_META) !== undefined) store.setMeta(BUILD_META, 'complete');
    store.setSkipped(skipped);
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
    onProgress?.({ phase: 'persist', done: 0, total: 1 });
    await persistIndex(store, ctx.search, { logger });
    onProgress?.({ phase: 'persist', done: 1, total: 1 });
    report.ms.persist = performance.now() - tPersist;
  }
  report.ms.total = performance.now() - t0;
  return report;
}
