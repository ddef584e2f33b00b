/**
 * Reads of files, chunks and skipped files from index.db, and the row decoders they share.
 * Each takes the store's connection; {@link IndexStore} exposes them as its methods.
 */
import type { SqlValue } from 'sql.js';
import type { Chunk, LanguageId } from '../types';
import type { ChunkRow, FileRow, IndexableChunk, SkippedRow } from './rows';
import { num, optStr, str, type Connection } from './sqlite';
import type { Packs } from './packs';

const FILE_COLUMNS = 'id, path, hash, mtime_ms, size, language, imports, ref_count, generated';

function fileFromRow(r: SqlValue[]): FileRow {
  return {
    id: num(r[0]),
    path: str(r[1]),
    hash: str(r[2]),
    mtimeMs: num(r[3]),
    size: num(r[4]),
    language: str(r[5]) as LanguageId,
    imports: JSON.parse(str(r[6]) || '[]') as string[],
    refCount: num(r[7]),
    generated: num(r[8]) !== 0,
  };
}

const CHUNK_COLUMNS = `c.id, c.file_id, f.path, f.language, c.start_line, c.end_line, c.kind, c.symbol, c.signature,
  c.container, c.decorators, c.docstring, c.hash, c.text_pack, c.text_at, c.text_len`;

function chunkFromRow(texts: Packs, r: SqlValue[]): ChunkRow {
  const row: ChunkRow = {
    id: num(r[0]),
    fileId: num(r[1]),
    path: str(r[2]),
    language: str(r[3]) as LanguageId,
    startLine: num(r[4]),
    endLine: num(r[5]),
    kind: str(r[6]) as Chunk['kind'],
    text: texts.read({ pack: num(r[13]), at: num(r[14]), len: num(r[15]) }),
    hash: str(r[12]),
  };
  const symbol = optStr(r[7]);
  if (symbol !== undefined) row.symbol = symbol;
  const signature = optStr(r[8]);
  if (signature !== undefined) row.signature = signature;
  const container = optStr(r[9]);
  if (container !== undefined) row.container = container;
  const decorators = optStr(r[10]);
  if (decorators !== undefined) row.decorators = JSON.parse(decorators) as string[];
  const docstring = optStr(r[11]);
  if (docstring !== undefined) row.docstring = docstring;
  return row;
}

/** Above this many ids, {@link getChunks} switches from one lookup per id to `IN (...)` batches. */
const IN_BATCH = 200;

export function listFiles(conn: Connection): FileRow[] {
  return conn.all(`SELECT ${FILE_COLUMNS} FROM files ORDER BY path`).map(fileFromRow);
}

export function getFile(conn: Connection, filePath: string): FileRow | undefined {
  const r = conn.first(`SELECT ${FILE_COLUMNS} FROM files WHERE path = ?`, [filePath]);
  return r ? fileFromRow(r) : undefined;
}

export function getFileById(conn: Connection, fileId: number): FileRow | undefined {
  const r = conn.first(`SELECT ${FILE_COLUMNS} FROM files WHERE id = ?`, [fileId]);
  return r ? fileFromRow(r) : undefined;
}

/** Chunks by id, in the order asked; unknown ids are left out. */
export function getChunks(conn: Connection, texts: Packs, ids: readonly number[]): ChunkRow[] {
  const byId = new Map<number, ChunkRow>();
  if (ids.length <= IN_BATCH) {
    const s = conn.stmt(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?`);
    for (const id of ids) {
      if (byId.has(id)) continue;
      try {
        s.bind([id]);
        if (s.step()) byId.set(id, chunkFromRow(texts, s.get()));
      } finally {
        s.reset();
      }
    }
  } else {
    const distinct = [...new Set(ids)];
    for (let i = 0; i < distinct.length; i += IN_BATCH) {
      const batch = distinct.slice(i, i + IN_BATCH);
      // Batches are full-size except the last, so at most two statement shapes are cached.
      const sql = `SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN (${batch.map(() => '?').join(',')})`;
      for (const r of conn.all(sql, batch)) {
        const row = chunkFromRow(texts, r);
        byId.set(row.id, row);
      }
    }
  }
  const out: ChunkRow[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row) out.push(row);
  }
  return out;
}

export function chunksOfFile(conn: Connection, texts: Packs, fileId: number): ChunkRow[] {
  return conn
    .all(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.file_id = ? ORDER BY c.start_line, c.id`, [fileId])
    .map((r) => chunkFromRow(texts, r));
}

/** A file's chunks as ids and line ranges only (no text decoded), in line order. */
export function chunkRangesOfFile(conn: Connection, fileId: number): Array<{ id: number; start: number; end: number }> {
  return conn.all('SELECT id, start_line, end_line FROM chunks WHERE file_id = ? ORDER BY start_line, id', [fileId]).map((r) => ({ id: num(r[0]), start: num(r[1]), end: num(r[2]) }));
}

/** {@link chunkRangesOfFile} for many files, 500 per query; a file without chunks maps to []. */
export function chunkRangesOfFiles(conn: Connection, fileIds: Iterable<number>): Map<number, Array<{ id: number; start: number; end: number }>> {
  const ids = [...new Set(fileIds)];
  const out = new Map<number, Array<{ id: number; start: number; end: number }>>(ids.map((id) => [id, []]));
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    for (const r of conn.all(`SELECT file_id, id, start_line, end_line FROM chunks WHERE file_id IN (${part.map(() => '?').join(',')}) ORDER BY file_id, start_line, id`, part)) {
      out.get(num(r[0]))?.push({ id: num(r[1]), start: num(r[2]), end: num(r[3]) });
    }
  }
  return out;
}

/**
 * Chunks whose text holds `needle` (case-sensitive), in file and line order, at most `limit`:
 * a scan of every chunk's text, read from its pack in file order.
 */
export function chunksContaining(conn: Connection, texts: Packs, needle: string, limit: number): ChunkRow[] {
  const out: ChunkRow[] = [];
  if (limit <= 0) return out;
  const s = conn.db.prepare(`SELECT c.id, c.text_pack, c.text_at, c.text_len FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.start_line`);
  const found: number[] = [];
  try {
    while (found.length < limit && s.step()) {
      const r = s.get();
      if (texts.read({ pack: num(r[1]), at: num(r[2]), len: num(r[3]) }).includes(needle)) found.push(num(r[0]));
    }
  } finally {
    s.free();
  }
  return getChunks(conn, texts, found);
}

/** Ids of the files with a chunk holding any of `needles` (case-sensitive), in path order. */
export function filesContainingAny(conn: Connection, texts: Packs, needles: readonly string[]): number[] {
  if (needles.length === 0) return [];
  const out: number[] = [];
  const s = conn.db.prepare(`SELECT c.file_id, c.text_pack, c.text_at, c.text_len FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.start_line`);
  try {
    while (s.step()) {
      const r = s.get();
      const file = num(r[0]);
      if (out[out.length - 1] === file) continue;
      const text = texts.read({ pack: num(r[1]), at: num(r[2]), len: num(r[3]) });
      if (needles.some((n) => text.includes(n))) out.push(file);
    }
  } finally {
    s.free();
  }
  return out;
}

export function chunkHashes(conn: Connection): Array<{ id: number; hash: string }> {
  return conn.all('SELECT id, hash FROM chunks ORDER BY id').map(([id, hash]) => ({ id: Number(id), hash: String(hash) }));
}

/** Streams every chunk from one statement of its own, freed when the loop ends (or an export freed it). */
export function* allChunks(conn: Connection, texts: Packs): Generator<IndexableChunk, void, undefined> {
  const s = conn.db.prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id`);
  try {
    while (s.step()) yield chunkFromRow(texts, s.get());
  } finally {
    try {
      s.free();
    } catch {
      // Already freed by an export in the middle of the iteration.
    }
  }
}

export function getSkipped(conn: Connection): SkippedRow[] {
  return conn.all('SELECT path, reason, detail FROM skipped ORDER BY path').map((r) => {
    const row: SkippedRow = { path: str(r[0]), reason: str(r[1]) };
    const detail = optStr(r[2]);
    if (detail !== undefined) row.detail = detail;
    return row;
  });
}
