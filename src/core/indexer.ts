/**
 * What indexing reports and shares: the reports of a run and of a dry run, the context a run
 * gets, the dry run itself, the one commit of the store and the search index together, and the
 * store's meta keys about how the index was built. The run itself is in index-run.ts.
 */
import { embeddingCost, embeddingTokenCap, type VltConfig } from './config';
import { classifyContent, discoverFiles } from './discovery';
import type { EmbeddingCache } from './embeddings';
import { ExcludeSuggester, type ExcludeSuggestion } from './exclude-suggestions';
import type { EmbeddingProvider, Logger, ProgressSink, WorkspaceFs } from './ports';
import type { ParsePool } from './parse/pool';
import type { SearchIndex } from './search/orama-index';
import type { IndexStore } from './store/store';
import { estimateTokens } from './tokens';
import { VltError } from './errors';

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
  /** Their price at `[embeddings] price_per_million_tokens`, when one is set. */
  estimatedEmbeddingCost?: number;
  /** The tokens a run may embed under `[embeddings] max_tokens` / `max_cost`, when capped, and whether a first build would pass it. */
  embeddingCap?: { tokens: number; setting: string; exceeded: boolean };
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
export function namespacedCache(store: IndexStore, key: string): EmbeddingCache {
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

export function throwIfAborted(signal?: AbortSignal): void {
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
  const cost = embeddingCost(config.embeddings, report.estimatedEmbeddingTokens);
  if (cost !== undefined) report.estimatedEmbeddingCost = Number(cost.toPrecision(3));
  const cap = embeddingTokenCap(config.embeddings);
  if (cap) report.embeddingCap = { ...cap, exceeded: report.estimatedEmbeddingTokens > cap.tokens };
  return report;
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
export const EXTRACTOR_META = 'extractor_version';

/** The store meta key holding the `[index] generated` mode the index was built with. */
export const GENERATED_META = 'generated_mode';

