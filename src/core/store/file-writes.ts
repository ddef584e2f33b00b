/**
 * Writes of one file's rows in index.db: the file row (its definitions and references as blobs
 * in the packs) and its chunks, replaced or deleted together. Each takes the store's connection inside the store's transaction;
 * {@link IndexStore} wraps them with its bookkeeping (the posting log, the dirty flags).
 */
import type { SqlValue } from 'sql.js';
import type { ParsedFile } from '../types';
import type { FileInfo } from './rows';
import { num, utf8Scratch, type Connection } from './sqlite';
import type { Packs, TextRef } from './packs';
import { blobColumns, placeAt } from './file-blobs';

/** Next ids to hand out: files keep theirs, chunks never reuse one. */
export interface IdCounters {
  nextFileId: number;
  nextChunkId: number;
}

/** A file row as it was before a write: its id and where its old definitions and references lie. */
export interface ExistingFile {
  fileId: number;
  defs: TextRef | undefined;
  refs: TextRef | undefined;
}

/** The file row at `path`, if any. */
export function existingFile(conn: Connection, path: string): ExistingFile | undefined {
  const r = conn.first(`SELECT id, ${blobColumns('defs')}, ${blobColumns('refs')} FROM files WHERE path = ?`, [path]);
  return r ? { fileId: num(r[0]), defs: placeAt(r, 1), refs: placeAt(r, 4) } : undefined;
}

/** A file's definitions and references, encoded (defs-codec.ts, refs-codec.ts). */
export interface FileBlobs {
  defs: Uint8Array;
  refs: Uint8Array;
}

/**
 * Writes `file`'s row (updated in place when `existing`, else inserted with a new id) and
 * inserts its chunks; the old chunks must be deleted first ({@link deleteChildren}). Returns
 * the file's id and its new chunks' ids.
 */
export function writeFileRows(conn: Connection, texts: Packs, ids: IdCounters, file: FileInfo, parsed: ParsedFile, chunkHashes: readonly string[], blobs: FileBlobs, existing: ExistingFile | undefined): { fileId: number; chunkIds: number[] } {
  const place = (has: boolean, bytes: Uint8Array): SqlValue[] => {
    if (!has) return [null, null, null];
    const at = texts.appendBytes(bytes);
    return [at.pack, at.at, at.len];
  };
  const fileParams: SqlValue[] = [
    file.hash,
    file.mtimeMs,
    file.size,
    file.language,
    JSON.stringify(parsed.imports),
    JSON.stringify(parsed.importSpecs),
    parsed.refs.length,
    file.generated ? 1 : 0,
    parsed.symbols.length,
    ...place(parsed.symbols.length > 0, blobs.defs),
    ...place(parsed.refs.length > 0, blobs.refs),
  ];
  let fileId: number;
  if (existing) {
    fileId = existing.fileId;
    conn.run(
      'UPDATE files SET hash = ?, mtime_ms = ?, size = ?, language = ?, imports = ?, import_specs = ?, ref_count = ?, generated = ?, def_count = ?, defs_pack = ?, defs_at = ?, defs_len = ?, refs_pack = ?, refs_at = ?, refs_len = ? WHERE id = ?',
      [...fileParams, fileId],
    );
  } else {
    fileId = ids.nextFileId++;
    conn.run(
      'INSERT INTO files(id, path, hash, mtime_ms, size, language, imports, import_specs, ref_count, generated, def_count, defs_pack, defs_at, defs_len, refs_pack, refs_at, refs_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [fileId, file.path, ...fileParams],
    );
  }
  const chunkIds: number[] = [];
  const insertChunk = conn.stmt(
    `INSERT INTO chunks(id, file_id, start_line, end_line, kind, symbol, signature, container, decorators, hash, docstring, text_pack, text_at, text_len)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (let i = 0; i < parsed.chunks.length; i++) {
    const c = parsed.chunks[i]!;
    const id = ids.nextChunkId++;
    const text = texts.append(c.text);
    utf8Scratch.reset();
    insertChunk.run([
      id,
      fileId,
      c.startLine,
      c.endLine,
      c.kind,
      c.symbol ?? null,
      c.signature ?? null,
      c.container ?? null,
      c.decorators && c.decorators.length > 0 ? JSON.stringify(c.decorators) : null,
      chunkHashes[i]!,
      utf8Scratch.optText(c.docstring),
      text.pack,
      text.at,
      text.len,
    ]);
    chunkIds.push(id);
  }
  return { fileId, chunkIds };
}

/**
 * Deletes a file's chunks (not the file row); returns the chunks' ids. Their texts' bytes
 * become dead, as do the file's old blobs (`existing`), which the row's next write replaces.
 */
export function deleteChildren(conn: Connection, texts: Packs, existing: ExistingFile): number[] {
  const fileId = existing.fileId;
  for (const old of [existing.defs, existing.refs]) if (old) texts.noteDead(old.pack, old.len);
  const chunkIds = conn.all('SELECT id FROM chunks WHERE file_id = ?', [fileId]).map((r) => num(r[0]));
  for (const r of conn.all('SELECT text_pack, sum(text_len) FROM chunks WHERE file_id = ? GROUP BY text_pack', [fileId])) texts.noteDead(num(r[0]), num(r[1]));
  conn.run('DELETE FROM chunks WHERE file_id = ?', [fileId]);
  return chunkIds;
}
