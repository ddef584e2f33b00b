/**
 * A file's definitions and references are one blob each in the packs beside index.db; its row
 * names where (schema.ts). This reads that place from a row and the bytes from the packs.
 */
import type { SqlValue } from 'sql.js';
import type { Packs, TextRef } from './packs';
import { num, type Connection } from './sqlite';

export type BlobKind = 'defs' | 'refs';

/** The three columns naming a blob's place, for a SELECT list. */
export function blobColumns(kind: BlobKind): string {
  return `${kind}_pack, ${kind}_at, ${kind}_len`;
}

/** The place named by the three columns from `r[i]` on; undefined when the file has no such blob. */
export function placeAt(r: readonly SqlValue[], i: number): TextRef | undefined {
  const pack = r[i];
  if (pack === null || pack === undefined) return undefined;
  return { pack: num(pack), at: num(r[i + 1]), len: num(r[i + 2]) };
}

/** A file's blob of `kind`, read from its pack; undefined when it has none (or no such file). */
export function readFileBlob(conn: Connection, packs: Packs, fileId: number, kind: BlobKind): Uint8Array | undefined {
  const r = conn.first(`SELECT ${blobColumns(kind)} FROM files WHERE id = ?`, [fileId]);
  const place = r ? placeAt(r, 0) : undefined;
  return place ? packs.readBytes(place) : undefined;
}

/** Every file's blob of `kind` with the file's id, in id order (one statement of its own). */
export function* eachFileBlob(conn: Connection, packs: Packs, kind: BlobKind, where = ''): Generator<{ fileId: number; path: string; blob: Uint8Array }, void, undefined> {
  const s = conn.db.prepare(`SELECT id, path, ${blobColumns(kind)} FROM files WHERE ${kind}_pack IS NOT NULL${where} ORDER BY id`);
  try {
    while (s.step()) {
      const r = s.get();
      const place = placeAt(r, 2);
      if (place) yield { fileId: num(r[0]), path: String(r[1]), blob: packs.readBytes(place) };
    }
  } finally {
    try {
      s.free();
    } catch {
      // Already freed by an export in the middle of the iteration.
    }
  }
}
