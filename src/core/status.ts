/**
 * What `vlt coderag status` reports, in two parts: what the index holds (counts, languages,
 * what was skipped), which only a commit changes, and what the configuration says (vectors,
 * trust, the config file), read at each call. The first part is also written beside index.db
 * at each commit (`.vlt/status.json`, with the identity of the index.db it describes), so that
 * a one-shot `status` reads no database at all; a summary that does not describe the index.db
 * on disk (another process committed since, a crash between the two writes) is not used.
 *
 * Kept free of the engine and the store: the status fast path (src/cli/status-fast.ts) loads it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GENERATED_MODES, type GeneratedMode, type VltConfig } from './config';
import { readerOf, type LanguageReader } from './parse/languages';
import { LANGUAGES, type LanguageId } from './types';

export interface StatusReport {
  workspace: string;
  index_path: string;
  files: number;
  chunks: number;
  symbols: number;
  references: number;
  vectors: { enabled: boolean; count: number; dimensions: number | null; model: string | null; note: string };
  bytes_on_disk: number;
  languages: Record<string, number>;
  /** How each indexed language is read: `grammar`, `headings` (markdown) or `text` (line patterns). */
  language_readers: Record<string, LanguageReader>;
  last_update: string | null;
  skipped_by_reason: Record<string, number>;
  /**
   * Generated files ("Code generated ... DO NOT EDIT") in the index, and how many of them are
   * navigation-only: their definitions and references are used, but search never returns them.
   * `mode` is the `[index] generated` the index was built with.
   */
  generated: { mode: GeneratedMode; files: number; navigation_only: number };
  /** Go modules' vendor directories indexed for navigation only, and their files. */
  go_vendor: { dirs: string[]; files: number };
  skipped_dirs: Array<{ path: string; reason: string }>;
  unsupported_files: number;
  /** The most common extensions among them (`.txt`, `Makefile`), most first. */
  unsupported_extensions: Record<string, number>;
  config: string | null;
  /** Whether vlt.toml is trusted, and its keys ignored because it is not (see docs/security.md). */
  trust: { trusted: boolean; source: string; stale: boolean; ignored: string[] };
}

/** What the index holds, as the store says it: the part of the status only a commit changes. */
export interface StoredStatus {
  files: number;
  chunks: number;
  symbols: number;
  references: number;
  languages: Record<string, number>;
  last_update: string | null;
  skipped_by_reason: Record<string, number>;
  generated_files: number;
  /** The `[index] generated` the index was built with; null before the first run. */
  generated_mode: string | null;
  go_vendor: { dirs: string[]; files: number };
  skipped_dirs: Array<{ path: string; reason: string }>;
  unsupported_files: number;
  unsupported_extensions: Record<string, number>;
  /** The sizes of the sidecar files index.db names (sidecar.ts). */
  sidecar_bytes: number;
}

export const VECTORS_OFF_NOTE = 'vectors are off: no embedding provider is configured (BM25 + symbols only)';
export const STATUS_SUMMARY_FILE = 'status.json';
const SUMMARY_VERSION = 2;

/** The status report from what the index holds and what the configuration says. */
export function composeStatus(root: string, stored: StoredStatus, config: VltConfig, vectors: StatusReport['vectors'], bytesOnDisk: number): StatusReport {
  const mode = (GENERATED_MODES as readonly string[]).includes(stored.generated_mode ?? '') ? (stored.generated_mode as GeneratedMode) : config.index.generated;
  return {
    workspace: root,
    index_path: path.join(root, '.vlt'),
    files: stored.files,
    chunks: stored.chunks,
    symbols: stored.symbols,
    references: stored.references,
    vectors,
    bytes_on_disk: bytesOnDisk,
    languages: stored.languages,
    language_readers: Object.fromEntries(Object.keys(stored.languages).map((l) => [l, (LANGUAGES as readonly string[]).includes(l) ? readerOf(l as LanguageId) : 'text'])),
    last_update: stored.last_update,
    skipped_by_reason: stored.skipped_by_reason,
    generated: { mode, files: stored.generated_files, navigation_only: mode === 'navigation' ? stored.generated_files : 0 },
    go_vendor: stored.go_vendor,
    skipped_dirs: stored.skipped_dirs,
    unsupported_files: stored.unsupported_files,
    unsupported_extensions: stored.unsupported_extensions,
    config: config.configPath ?? null,
    trust: { ...config.trust, ignored: [...config.trust.ignored] },
  };
}

/** Which index.db a summary describes: its inode, size and modification time. */
function identity(indexFile: string): string | undefined {
  try {
    const st = fs.statSync(indexFile);
    // Each commit renames a new file into place: a new inode, besides the time to the millisecond.
    return `${st.ino}:${st.size}:${Math.floor(st.mtimeMs)}`;
  } catch {
    return undefined;
  }
}

/** Writes the summary of the index.db just committed in `dir` (temporary file and rename). */
export function writeStatusSummary(dir: string, indexFile: string, schema: number, stored: StoredStatus): void {
  const id = identity(indexFile);
  if (id === undefined) return;
  const file = path.join(dir, STATUS_SUMMARY_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ v: SUMMARY_VERSION, schema, index: id, stored }));
  fs.renameSync(tmp, file);
}

/** The summary in `dir` when it describes the index.db there now, of this schema; else undefined. */
export function readStatusSummary(dir: string, indexFile: string, schema: number): StoredStatus | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(path.join(dir, STATUS_SUMMARY_FILE), 'utf8')) as { v?: unknown; schema?: unknown; index?: unknown; stored?: StoredStatus };
    if (s.v !== SUMMARY_VERSION || s.schema !== schema || typeof s.index !== 'string' || !s.stored) return undefined;
    return s.index === identity(indexFile) ? s.stored : undefined;
  } catch {
    return undefined;
  }
}

/** The bytes the index takes on disk: index.db, embeddings.db and the sidecar files index.db names. */
export function bytesOnDisk(files: readonly string[], sidecarBytes: number): number {
  let n = sidecarBytes;
  for (const f of files) {
    try {
      n += fs.statSync(f).size;
    } catch {
      // A file not written yet takes no space.
    }
  }
  return n;
}
