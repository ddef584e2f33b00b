/**
 * The index's large blobs (the search snapshot, the persisted symbol table) live in files of
 * their own beside index.db, not in its `blobs` table: sql.js hands a blob out by copying it
 * byte by byte in JavaScript, which cost about 200 ms for the 30 MB search snapshot of the Go
 * standard library on every cold search, and every commit re-exported them with the database.
 *
 * A sidecar file is written whole (temporary file, fsync, rename) under a new name before the
 * index.db that names it (meta `sidecar:KEY` = `NAME:SIZE`), so a crash at any point leaves
 * index.db naming a complete file. The writer removes older files of a key after its commit,
 * keeping the one before, which a reader of the previous generation may still be about to read;
 * a reader that finds its file gone (or of the wrong size) gets no blob, and rebuilds what the
 * blob held from the tables, as for an index that never had one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from './atomic';
import { fileSource, type ByteSource } from './byte-source';

/** The blobs kept as sidecar files; other keys stay in the `blobs` table. */
export const SIDECAR_KEYS: ReadonlySet<string> = new Set(['search', 'symbols']);

export const sidecarMeta = (key: string): string => `sidecar:${key}`;

const NAME = /^([a-z]+)-(\d+)-([0-9a-z]+)\.bin$/;

/** A reference as index.db's meta holds it. */
export interface SidecarRef {
  name: string;
  size: number;
}

export function parseSidecarRef(value: string | undefined): SidecarRef | undefined {
  if (value === undefined) return undefined;
  const at = value.lastIndexOf(':');
  const name = value.slice(0, at);
  const size = Number(value.slice(at + 1));
  if (at <= 0 || !NAME.test(name) || !Number.isInteger(size) || size < 0) return undefined;
  return { name, size };
}

export const formatSidecarRef = (ref: SidecarRef): string => `${ref.name}:${ref.size}`;

/** Writes `bytes` as a new sidecar file of `key` for `generation`; its reference. */
export async function writeSidecar(dir: string, key: string, generation: number, bytes: Uint8Array): Promise<SidecarRef> {
  const name = `${key}-${generation}-${Math.random().toString(36).slice(2, 8) || '0'}.bin`;
  await writeFileAtomic(path.join(dir, name), bytes);
  return { name, size: bytes.byteLength };
}

/** The bytes of a sidecar file, or undefined when it is gone or not the size its reference says. */
export function readSidecar(dir: string, ref: SidecarRef): Uint8Array | undefined {
  try {
    const bytes = fs.readFileSync(path.join(dir, ref.name));
    return bytes.byteLength === ref.size ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : undefined;
  } catch {
    return undefined;
  }
}

/** A sidecar file held open to be read by range, or undefined when it is gone or not the size its reference says. */
export function openSidecar(dir: string, ref: SidecarRef): ByteSource | undefined {
  return fileSource(path.join(dir, ref.name), ref.size);
}

/** Removes the sidecar files of `key` other than those named in `keep`. */
export function pruneSidecars(dir: string, key: string, keep: readonly string[]): void {
  removeFilesWhere(dir, (name) => NAME.exec(name)?.[1] === key && !keep.includes(name));
}

/**
 * Removes the files of `dir` (not below it) whose names `doomed` accepts: a writer's cleanup of
 * files no commit names. A file it cannot remove (gone already, in use on Windows) waits for
 * the next cleanup.
 */
export function removeFilesWhere(dir: string, doomed: (name: string) => boolean): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!doomed(name)) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
    } catch {
      // Another writer's cleanup got there first, or the file is in use on Windows: next time.
    }
  }
}
