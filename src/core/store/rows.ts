/**
 * The rows the index store reads and writes: files, chunks, symbols, references and skipped
 * files, as its callers see them.
 */
import type { Chunk, LanguageId, SymbolDef, SymbolRef } from '../types';

/** What the indexer knows about a file on disk when it stores it. */
export interface FileInfo {
  /** Workspace-relative path with forward slashes. */
  path: string;
  /** Content hash of the file. */
  hash: string;
  mtimeMs: number;
  size: number;
  language: LanguageId;
  /** The file carries a generated-code marker (see `classifyContent`). */
  generated?: boolean;
}

export interface FileRow extends FileInfo {
  id: number;
  imports: string[];
  refCount: number;
  generated: boolean;
}

/** A stored chunk: the parsed {@link Chunk} plus where it lives. */
export interface ChunkRow extends Chunk {
  id: number;
  fileId: number;
  path: string;
  language: LanguageId;
  /** Content hash of the enriched chunk text (the embedding cache key). */
  hash: string;
}

/** The fields the search index and the embedder need to (re)build themselves from the store. */
export type IndexableChunk = ChunkRow;

/** A stored definition: the parsed {@link SymbolDef} plus where it lives. */
export interface SymbolRow extends SymbolDef {
  id: number;
  fileId: number;
  path: string;
}

export interface SkippedRow {
  path: string;
  reason: string;
  detail?: string;
}

export interface RefLocation extends SymbolRef {
  fileId: number;
  path: string;
}
