/**
 * Reading a database file and checking it before anything trusts it (header, integrity,
 * schema version, tables), and setting a bad one aside for a post-mortem. Every problem is
 * a short reason, because the answer to all of them is the same: treat the file as missing.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { VltError, errorMessage } from '../errors';
import type { Logger } from '../ports';

/** How many moved-aside corrupt files to keep for a post-mortem; older ones are deleted. */
const KEEP_CORRUPT_COPIES = 2;

const SQLITE_MAGIC = 'SQLite format 3\u0000';

export type OpenAttempt = { db: Database; problem?: undefined } | { db?: undefined; problem: string };

/**
 * Opens database bytes and checks them before anything trusts them. Every failure becomes a
 * short human reason ("is not a database", "is truncated", a quick_check message, a schema
 * version mismatch) rather than an exception, because the caller's answer to all of them is
 * the same: treat the file as missing.
 */
export function openChecked(
  SQL: SqlJsStatic,
  bytes: Uint8Array,
  expect: { version: number; tables: string[]; written?: boolean },
): OpenAttempt {
  if (bytes.length === 0) return { problem: 'is empty (0 bytes)' };
  const headerProblem = checkHeader(bytes);
  if (headerProblem) return { problem: `is corrupt (${headerProblem})` };
  let db: Database | undefined;
  try {
    db = new SQL.Database(bytes);
    // The page-by-page check reads the whole file (250-400 ms for the Go standard library's
    // 84 MB): skipped for the very file this index's writer wrote (`written`), which it
    // serialised from a sound database and renamed into place whole.
    if (!expect.written) {
      const check = db.exec('PRAGMA quick_check(1)');
      const verdict = check[0]?.values[0]?.[0];
      if (verdict !== 'ok') return fail(db, `is corrupt (integrity check: ${oneLine(String(verdict))})`);
    }
    const tables = new Set(
      (db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? []).map((r) => String(r[0])),
    );
    if (!tables.has('meta')) return fail(db, `has no schema version (expected ${expect.version})`);
    const raw = db.exec("SELECT value FROM meta WHERE key = 'schema_version'")[0]?.values[0]?.[0];
    if (raw === undefined || raw === null) return fail(db, `has no schema version (expected ${expect.version})`);
    if (Number(raw) !== expect.version) {
      return fail(db, `has schema version ${String(raw)}, expected ${expect.version}`);
    }
    const missing = expect.tables.filter((t) => !tables.has(t));
    if (missing.length > 0) return fail(db, `is corrupt (missing table ${missing.join(', ')})`);
    return { db };
  } catch (e) {
    return fail(db, `is corrupt (${oneLine(errorMessage(e))})`);
  }
}

/** SQLite's check reports are multi-line and prefixed; a reason must be one short line. */
function oneLine(text: string): string {
  const flat = text.replace(/\*\*\* in database \w+ \*\*\*/g, '').replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
}

function fail(db: Database | undefined, problem: string): OpenAttempt {
  try {
    db?.close();
  } catch {
    // The database is being thrown away; a failure to close it changes nothing.
  }
  return { problem };
}

/**
 * Checks the fixed 100-byte SQLite header. It catches the common damage (garbage, a partial
 * copy) cheaply and with a clearer message than SQLite gives: a truncated file is reported as
 * such instead of as an unspecific "malformed" error on some later query.
 */
function checkHeader(bytes: Uint8Array): string | undefined {
  if (bytes.length < 100) return 'file is not a database';
  for (let i = 0; i < SQLITE_MAGIC.length; i++) {
    if (bytes[i] !== SQLITE_MAGIC.charCodeAt(i)) return 'file is not a database';
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rawPageSize = view.getUint16(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return 'file is not a database';
  // The in-header page count is valid only when the "version-valid-for" number matches the
  // change counter; SQLite itself falls back to the file size otherwise.
  const pageCount = view.getUint32(28);
  const valid = view.getUint32(92) === view.getUint32(24);
  if (bytes.length % pageSize !== 0) return `file is truncated: ${bytes.length} bytes is not a whole number of pages`;
  if (valid && pageCount > 0 && bytes.length < pageCount * pageSize) {
    return `file is truncated: ${bytes.length} of ${pageCount * pageSize} bytes`;
  }
  return undefined;
}

/**
 * Reads a whole file, with an identity (inode, size, mtime) taken from the same open handle,
 * so that a writer renaming a new file into place between the two cannot pair old bytes with
 * the new file's identity.
 */
/** What a host read of an index file before the engine was loaded: its bytes and the stat of the open file. */
export interface EarlyRead {
  bytes: Uint8Array;
  stats: fs.Stats;
}

const earlyReads = new Map<string, Promise<EarlyRead | undefined>>();

/**
 * Hands over a read of `file` that a host began before the engine was loaded (the CLI starts
 * reading index.db while it loads its 4.6 MB program; the read then costs nothing on the way to
 * a cold search). The next reader to open `file` takes it, once; a read that failed is done
 * again. Writers never take one: they read under their lock.
 */
export function offerEarlyRead(file: string, read: Promise<EarlyRead | undefined>): void {
  read.catch(() => undefined);
  earlyReads.set(path.resolve(file), read);
}

/** A reader's read of `file`: the one a host began, if any, else a read now. */
export async function readForReader(file: string): ReturnType<typeof readIfExists> {
  const early = earlyReads.get(path.resolve(file));
  earlyReads.clear();
  if (early) {
    try {
      const r = await early;
      return r ? { bytes: r.bytes, identity: identityOf(r.stats) } : undefined;
    } catch {
      // Whatever went wrong, the store's own read words it.
    }
  }
  return readIfExists(file);
}

export async function readIfExists(file: string): Promise<{ bytes: Uint8Array; identity: string } | undefined> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const st = await handle.stat();
    // Read whole in as few reads as the system allows: FileHandle.readFile reads 512 KB at a
    // time, one event-loop turn each, which doubled the time to read a 100 MB index. Writers
    // replace the file by renaming, so the open file's size does not change under us.
    const bytes = Buffer.allocUnsafe(st.size);
    let at = 0;
    while (at < st.size) {
      const { bytesRead } = await handle.read(bytes, at, st.size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return { bytes: at === st.size ? bytes : bytes.subarray(0, at), identity: identityOf(st) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VltError('IO', `could not read ${file}: ${errorMessage(e)}`, { path: file }, { cause: e });
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

export function identityOf(st: fs.Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** Renames a bad database out of the way and prunes older copies; returns the new name. */
export async function moveAside(file: string, logger: Logger): Promise<string> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  let target = `${file}.corrupt-${stamp}`;
  if (fs.existsSync(target)) target = `${target}-${process.pid}`;
  try {
    await fsp.rename(file, target);
  } catch (e) {
    // If it cannot be moved it must at least not be read again.
    logger.warn(`could not move ${file} aside (${errorMessage(e)}); deleting it`);
    await fsp.rm(file, { force: true });
    return path.basename(file);
  }
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.corrupt-`;
  try {
    const copies = (await fsp.readdir(dir)).filter((n) => n.startsWith(prefix)).sort();
    for (const old of copies.slice(0, Math.max(0, copies.length - KEEP_CORRUPT_COPIES))) {
      await fsp.rm(path.join(dir, old), { force: true });
    }
  } catch {
    // Pruning old copies only saves disk space.
  }
  return path.basename(target);
}


/** The identity of the index.db the writer last wrote in `dir`, if it recorded one. */
export function writtenIdentity(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Records that the writer wrote the index.db of `identity` (a plain write: a torn one matches nothing). */
export function recordWritten(file: string, identity: string | undefined): void {
  try {
    if (identity === undefined) fs.rmSync(file, { force: true });
    else fs.writeFileSync(file, identity);
  } catch {
    // Without the record, the next open checks the file: slower, never wrong.
  }
}
