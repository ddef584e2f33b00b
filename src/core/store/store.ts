/**
 * The persistent workspace index under `<workspace>/.vlt/`, kept in sql.js (SQLite compiled to
 * WebAssembly) database files.
 *
 * sql.js holds a whole database in memory, so persistence is explicit: `commit()` exports the
 * database and atomically replaces the file on disk. That makes a reader's view consistent by
 * construction (it loads one complete file) and makes a crash lose at most the uncommitted
 * work, never the previous index. Two files are kept apart: `index.db` (files, chunks,
 * symbols, references, opaque blobs) and `embeddings.db` (vectors by content hash), so that
 * rebuilding a corrupt or outdated index does not throw away paid-for embeddings.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic, SqlValue, Statement } from 'sql.js';
import type { EmbeddingCache } from '../embeddings';
import { VltError } from '../errors';
import { silentLogger, type Logger } from '../ports';
import type { Chunk, ImportSpec, LanguageId, ParsedFile, SymbolDef, SymbolKind, SymbolRef } from '../types';
import { removeStaleTempFiles, writeFileAtomic } from './atomic';
import { tryLock, type FileLock } from './lock';

/**
 * Version of the table layout of index.db. A file with any other version is rebuilt.
 * 3: `files.generated`, and generated files stored for navigation (without chunks) instead of
 * skipped; an index of version 2 lacks both, so it is rebuilt rather than read.
 */
export const SCHEMA_VERSION = 3;

/** Version of embeddings.db. Kept separate so that an index schema change keeps the vectors. */
export const EMBEDDINGS_SCHEMA_VERSION = 1;

export const INDEX_FILE = 'index.db';
export const EMBEDDINGS_FILE = 'embeddings.db';
export const LOCK_FILE = 'index.lock';
export const VLT_DIR = '.vlt';

/** How many moved-aside corrupt files to keep for a post-mortem; older ones are deleted. */
const KEEP_CORRUPT_COPIES = 2;

// ---------------------------------------------------------------------------------------------
// sql.js runtime
// ---------------------------------------------------------------------------------------------

let sqlJsPromise: Promise<SqlJsStatic> | undefined;

/**
 * Finds sql-wasm.wasm. Bundles (dist/cli.js, dist/extension.js) carry a copy in `dist/wasm/`
 * next to themselves; in tests and when running from sources it is resolved from node_modules.
 * `require` exists both in the CommonJS bundle and under vitest; the cwd-based fallback keeps
 * a plain ESM runner working without referencing `import.meta`, which a CJS bundle lacks.
 */
export function locateSqlWasm(): string {
  const override = process.env.VLT_SQL_WASM;
  if (override && fs.existsSync(override)) return override;
  if (typeof __dirname === 'string') {
    const bundled = path.join(__dirname, 'wasm', 'sql-wasm.wasm');
    if (fs.existsSync(bundled)) return bundled;
  }
  const req: NodeJS.Require =
    typeof require === 'function' ? require : createRequire(path.join(process.cwd(), 'noop.js'));
  return req.resolve('sql.js/dist/sql-wasm.wasm');
}

/** Initialises sql.js once per process; a failed attempt is forgotten so a later call retries. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  sqlJsPromise ??= (async () => {
    const wasm = await fsp.readFile(locateSqlWasm());
    const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength);
    return initSqlJs({ wasmBinary });
  })().catch((e: unknown) => {
    sqlJsPromise = undefined;
    throw new VltError('INTERNAL', `could not load the SQLite runtime: ${errorMessage(e)}`, undefined, { cause: e });
  });
  return sqlJsPromise;
}

// ---------------------------------------------------------------------------------------------
// References codec
// ---------------------------------------------------------------------------------------------

/**
 * Compact binary form of one file's `SymbolRef[]`. A big repository has millions of
 * references, so they are stored as one BLOB per file instead of one row each. Layout (all
 * integers are unsigned LEB128 varints):
 *
 *   u8      format version (1)
 *   varint  name count N, then N times: varint byte length + UTF-8 bytes (first-use order)
 *   varint  reference count R, then R times:
 *           varint  nameIndex * 4 + kind        (kind: 0 call, 1 type, 2 reference, 3 inherit)
 *           varint  zigzag(line - previous line) (the first reference is relative to 0)
 *           varint  col
 *
 * Order is preserved exactly. Lines are delta-coded because references come roughly in line
 * order, which keeps most deltas in one byte; the zigzag step makes the rare backward jump
 * cheap too. A typical reference costs about 3 to 4 bytes.
 */
export const REFS_FORMAT_VERSION = 1;

const REF_KINDS: readonly SymbolRef['kind'][] = ['call', 'type', 'reference', 'inherit'];
const REF_KIND_CODE: Record<SymbolRef['kind'], number> = { call: 0, type: 1, reference: 2, inherit: 3 };

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

/** A growable byte buffer with varint writes, for the refs codec. */
class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(initial: number) {
    this.buf = new Uint8Array(Math.max(16, initial));
  }
  ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  /** Writes a non-negative integer up to 2^53. */
  varint(n: number): void {
    this.ensure(8);
    this.varintUnchecked(n);
  }
  /** As {@link varint}, for callers that reserved the room; below 2^28 it stays bitwise. */
  varintUnchecked(n: number): void {
    const buf = this.buf;
    if (n < 0x10000000) {
      while (n >= 0x80) {
        buf[this.pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      buf[this.pos++] = n;
      return;
    }
    while (n >= 0x80) {
      buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[this.pos++] = n;
  }
  string(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit, plus the length prefix.
    this.ensure(s.length * 3 + 8);
    const buf = this.buf;
    // Identifiers are nearly always ASCII, which is copied directly: a TextEncoder call per
    // short name costs more than the loop.
    if (s.length < 0x80) {
      let ascii = true;
      for (let i = 0; i < s.length; i++) {
        if (s.charCodeAt(i) >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        buf[this.pos++] = s.length;
        for (let i = 0; i < s.length; i++) buf[this.pos++] = s.charCodeAt(i);
        return;
      }
    }
    const start = this.pos;
    // The length prefix is written after encoding, so reserve room for its largest form.
    const lenBytes = varintSize(s.length * 3);
    const { written } = utf8Encoder.encodeInto(s, buf.subarray(start + lenBytes));
    const actual = varintSize(written);
    if (actual !== lenBytes) buf.copyWithin(start + actual, start + lenBytes, start + lenBytes + written);
    this.varintUnchecked(written);
    this.pos = start + actual + written;
  }
  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Reads what {@link ByteWriter} writes; any overrun or bad value means the blob is corrupt. */
class ByteReader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  u8(): number {
    const b = this.buf[this.pos++];
    if (b === undefined) throw corruptRefs('unexpected end');
    return b;
  }
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw corruptRefs('unexpected end');
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    throw corruptRefs('varint too long');
  }
  string(): string {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.buf.length) throw corruptRefs('string overruns the blob');
    const s = utf8Decoder.decode(this.buf.subarray(this.pos, end));
    this.pos = end;
    return s;
  }
}

function corruptRefs(why: string): VltError {
  return new VltError('INDEX_CORRUPT', `a stored reference list is malformed (${why}); rebuild the index with \`vlt coderag init\``);
}

function checkRefNumber(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new VltError('INTERNAL', `cannot store a reference with ${field} ${String(value)}`);
  }
  return value;
}

/** Scratch state reused across calls: encoding runs once per file, millions of refs in all. */
const refScratch = { writer: new ByteWriter(1 << 16), nameIndex: new Map<string, number>(), codes: new Uint32Array(1024) };

/** Encodes references and also returns the distinct names, which the store indexes. */
export function encodeRefsWithNames(refs: readonly SymbolRef[]): { bytes: Uint8Array; names: string[] } {
  const names: string[] = [];
  const nameIndex = refScratch.nameIndex;
  nameIndex.clear();
  if (refScratch.codes.length < refs.length) refScratch.codes = new Uint32Array(refs.length * 2);
  const codes = refScratch.codes;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    let idx = nameIndex.get(ref.name);
    if (idx === undefined) {
      idx = names.length;
      names.push(ref.name);
      nameIndex.set(ref.name, idx);
    }
    const kind = REF_KIND_CODE[ref.kind];
    if (kind === undefined) throw new VltError('INTERNAL', `unknown reference kind ${String(ref.kind)}`);
    if (idx >= 0x3fffffff) throw new VltError('INTERNAL', 'too many distinct reference names in one file');
    codes[i] = idx * 4 + kind;
  }
  nameIndex.clear();
  const w = refScratch.writer;
  w.pos = 0;
  w.varint(REFS_FORMAT_VERSION);
  w.varint(names.length);
  for (const name of names) w.string(name);
  w.varint(refs.length);
  // Three varints of at most 8 bytes each per reference: reserve once, not per write.
  w.ensure(refs.length * 24);
  let prevLine = 0;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    const line = checkRefNumber(ref.line, 'line');
    const col = checkRefNumber(ref.col, 'column');
    const delta = line - prevLine;
    prevLine = line;
    w.varintUnchecked(codes[i]!);
    w.varintUnchecked(delta >= 0 ? delta * 2 : -delta * 2 - 1);
    w.varintUnchecked(col);
  }
  const bytes = w.bytes();
  // Do not let one huge file pin a huge scratch buffer for the rest of the process.
  if (w.buf.length > 1 << 22) refScratch.writer = new ByteWriter(1 << 16);
  return { bytes, names };
}

export function encodeRefs(refs: readonly SymbolRef[]): Uint8Array {
  return encodeRefsWithNames(refs).bytes;
}

function readRefNames(r: ByteReader): string[] {
  const version = r.u8();
  if (version !== REFS_FORMAT_VERSION) throw corruptRefs(`unknown format version ${version}`);
  const count = r.varint();
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(r.string());
  return names;
}

/** Decodes only the name table, which is all that deleting a file's name index rows needs. */
export function decodeRefNames(bytes: Uint8Array): string[] {
  return readRefNames(new ByteReader(bytes));
}

/** Decodes a reference list; with `onlyName`, returns just the uses of that name. */
export function decodeRefs(bytes: Uint8Array, onlyName?: string): SymbolRef[] {
  const r = new ByteReader(bytes);
  const names = readRefNames(r);
  const wanted = onlyName === undefined ? -1 : names.indexOf(onlyName);
  if (onlyName !== undefined && wanted < 0) return [];
  const count = r.varint();
  const refs: SymbolRef[] = [];
  let line = 0;
  for (let i = 0; i < count; i++) {
    const code = r.varint();
    const z = r.varint();
    const col = r.varint();
    line += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    const nameIdx = Math.floor(code / 4);
    if (wanted >= 0 && nameIdx !== wanted) continue;
    const name = names[nameIdx];
    const kind = REF_KINDS[code % 4];
    if (name === undefined || kind === undefined) throw corruptRefs('bad name or kind');
    refs.push({ name, line, col, kind });
  }
  if (!r.done) throw corruptRefs('trailing bytes');
  return refs;
}

/** Encodes a sorted list of distinct file ids as delta varints. */
export function encodePosting(sortedIds: readonly number[]): Uint8Array {
  const w = new ByteWriter(sortedIds.length * 2);
  let prev = 0;
  for (const id of sortedIds) {
    w.varint(id - prev);
    prev = id;
  }
  return w.bytes();
}

export function decodePosting(bytes: Uint8Array): number[] {
  const r = new ByteReader(bytes);
  const ids: number[] = [];
  let prev = 0;
  while (!r.done) {
    prev += r.varint();
    ids.push(prev);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Row types
// ---------------------------------------------------------------------------------------------

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

export interface ChunkRow {
  id: number;
  fileId: number;
  path: string;
  language: LanguageId;
  startLine: number;
  endLine: number;
  kind: Chunk['kind'];
  symbol?: string;
  signature?: string;
  container?: string;
  decorators?: string[];
  docstring?: string;
  text: string;
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

export interface ReplaceResult {
  fileId: number;
  /** Ids of the new chunks, in the order of `parsed.chunks`. */
  chunkIds: number[];
  /** Ids of the chunks the file had before, which the search index must drop. */
  removedChunkIds: number[];
}

export interface StoreStats {
  files: number;
  chunks: number;
  symbols: number;
  refs: number;
  /** Size of index.db plus embeddings.db as last written. */
  bytesOnDisk: number;
  languages: Record<string, number>;
  /** ISO time of the last commit, or null when the index was never committed. */
  updatedAt: string | null;
  generation: number;
  skippedByReason: Record<string, number>;
  /** Files stored with a generated-code marker (navigation-only unless `[index] generated = "index"`). */
  generatedFiles: number;
}

export interface OpenOptions {
  mode: 'read' | 'write';
  logger?: Logger;
}

// ---------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------

/*
 * Notes on the layout:
 * - `files.refs` is the last column because SQLite walks a row's overflow pages to reach any
 *   column after a large value; listing files then never touches the references.
 * - `chunks.text` and `chunks.docstring` are bound as UTF-8 BLOBs: sql.js marshals a string
 *   parameter through a JavaScript array of bytes, which made inserting chunk text twice as
 *   slow. They are decoded with TextDecoder on the way out.
 * - `ref_postings` answers "which files use name X": one row per distinct name whose BLOB is
 *   the sorted list of file ids (delta varints). One row per (name, file) pair was measured
 *   first and rejected: a synthetic Go-sized corpus had 0.8-2.8M such pairs, and inserting
 *   them at random positions of a B-tree took 5-15 s in sql.js and ~45 MB on disk. Postings are updated lazily: each
 *   replaceFile/removeFile logs which names the file lost and gained, and the log is folded
 *   into the table, one read and one write per touched name, before the next commit.
 * - Row ids of files and chunks are assigned from counters persisted in `meta`, so an id is
 *   never reused, even after the newest rows were deleted; anything that caches chunk ids
 *   (the search index snapshot) can never confuse an old chunk with a new one.
 */
const SCHEMA_SQL = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  mtime_ms REAL NOT NULL,
  size INTEGER NOT NULL,
  language TEXT NOT NULL,
  imports TEXT NOT NULL,
  import_specs TEXT NOT NULL,
  ref_count INTEGER NOT NULL,
  generated INTEGER NOT NULL DEFAULT 0,
  refs BLOB
);
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  kind TEXT NOT NULL,
  symbol TEXT,
  signature TEXT,
  container TEXT,
  decorators TEXT,
  hash TEXT NOT NULL,
  docstring BLOB,
  text BLOB NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE TABLE symbols(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  qualified_name TEXT NOT NULL,
  signature TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  container TEXT
);
CREATE INDEX symbols_name ON symbols(name);
CREATE INDEX symbols_file ON symbols(file_id);
CREATE TABLE ref_postings(name TEXT PRIMARY KEY, files BLOB NOT NULL);
CREATE TABLE skipped(path TEXT PRIMARY KEY, reason TEXT NOT NULL, detail TEXT) WITHOUT ROWID;
CREATE TABLE blobs(key TEXT PRIMARY KEY, value BLOB NOT NULL);
`;

const REQUIRED_TABLES = ['meta', 'files', 'chunks', 'symbols', 'ref_postings', 'skipped', 'blobs'];

const EMBEDDINGS_SCHEMA_SQL = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE embeddings(model TEXT NOT NULL, hash TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(model, hash));
`;

/**
 * Connection settings. The database lives in sql.js's in-memory file system and reaches disk
 * only through `commit()`, so SQLite's own durability (journal on "disk", syncs) buys nothing
 * and costs time; the journal stays in memory so that ROLLBACK and savepoints still work. These
 * settings are per connection, and sql.js's `export()` closes and reopens the connection, so
 * they are applied again after every export.
 */
const PRAGMAS_SQL = `
PRAGMA journal_mode = MEMORY;
PRAGMA synchronous = OFF;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;
PRAGMA foreign_keys = OFF;
`;

/** Bigger pages mean fewer B-tree levels and less per-page overhead for 1-2 KB chunk rows. */
const PAGE_SIZE = 8192;

// ---------------------------------------------------------------------------------------------
// Opening and validating database files
// ---------------------------------------------------------------------------------------------

const SQLITE_MAGIC = 'SQLite format 3\u0000';

type OpenAttempt = { db: Database; problem?: undefined } | { db?: undefined; problem: string };

/**
 * Opens database bytes and checks them before anything trusts them. Every failure becomes a
 * short human reason ("is not a database", "is truncated", a quick_check message, a schema
 * version mismatch) rather than an exception, because the caller's answer to all of them is
 * the same: treat the file as missing.
 */
function openChecked(
  SQL: SqlJsStatic,
  bytes: Uint8Array,
  expect: { version: number; tables: string[] },
): OpenAttempt {
  if (bytes.length === 0) return { problem: 'is empty (0 bytes)' };
  const headerProblem = checkHeader(bytes);
  if (headerProblem) return { problem: `is corrupt (${headerProblem})` };
  let db: Database | undefined;
  try {
    db = new SQL.Database(bytes);
    const check = db.exec('PRAGMA quick_check(1)');
    const verdict = check[0]?.values[0]?.[0];
    if (verdict !== 'ok') return fail(db, `is corrupt (integrity check: ${oneLine(String(verdict))})`);
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
async function readIfExists(file: string): Promise<{ bytes: Uint8Array; identity: string } | undefined> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const st = await handle.stat();
    const bytes = await handle.readFile();
    return { bytes, identity: identityOf(st) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VltError('IO', `could not read ${file}: ${errorMessage(e)}`, { path: file }, { cause: e });
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function identityOf(st: fs.Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** Renames a bad database out of the way and prunes older copies; returns the new name. */
async function moveAside(file: string, logger: Logger): Promise<string> {
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

// ---------------------------------------------------------------------------------------------
// Writer lock
// ---------------------------------------------------------------------------------------------

/**
 * Takes the writer lock, failing at once while another live process holds it (lock.ts). A
 * lock from another host cannot be checked, so the error says which file to delete if that
 * process is gone.
 */
function takeWriterLock(lockPath: string, logger: Logger): Promise<FileLock> {
  return tryLock(lockPath, {
    onTakeOver: (stale) =>
      logger.warn(stale.kind === 'unreadable' ? `taking over an unreadable lock file ${lockPath}` : `taking over a stale index lock of pid ${stale.holder.pid} (no such process)`),
    busyError: (holder, why) => {
      switch (why) {
        case 'other-host':
          return new VltError(
            'INDEX_LOCKED',
            `another vlt process (pid ${holder?.pid} on host ${holder?.hostname}) is writing the index; readers keep working. If that process no longer runs, delete ${lockPath}`,
            { pid: holder?.pid, hostname: holder?.hostname, lockPath },
          );
        case 'held':
          return new VltError('INDEX_LOCKED', `another vlt process (pid ${holder?.pid}) is writing the index; readers keep working`, { pid: holder?.pid, lockPath });
        case 'unreadable':
          return new VltError('INDEX_LOCKED', 'another vlt process is writing the index; readers keep working', { lockPath });
        case 'raced':
          return new VltError('INDEX_LOCKED', 'another vlt process took over the index lock; readers keep working', { lockPath });
        case 'timeout':
          return new VltError('INDEX_LOCKED', `could not take the index lock ${lockPath}; readers keep working`, { lockPath });
      }
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function num(v: SqlValue | undefined): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

function str(v: SqlValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return utf8Decoder.decode(v);
  return v === null || v === undefined ? '' : String(v);
}

function optStr(v: SqlValue | undefined): string | undefined {
  return v === null || v === undefined ? undefined : str(v);
}

/**
 * Encodes free text for binding as UTF-8 bytes, which sql.js copies into its heap far faster
 * than a string (it marshals strings through a JavaScript array of bytes). The bytes are views
 * into one reused buffer: sql.js copies a bound value at bind time, so a view only has to live
 * until its row is inserted; `reset()` before each row reclaims the space.
 */
class Utf8Scratch {
  private buf = new Uint8Array(1 << 20);
  private pos = 0;
  reset(): void {
    this.pos = 0;
  }
  text(s: string): SqlValue {
    if (s.length === 0) return '';
    const need = s.length * 3;
    if (this.pos + need > this.buf.length) {
      // Views handed out earlier keep the old buffer alive until their row is bound.
      this.buf = new Uint8Array(Math.max(this.buf.length * 2, need * 2));
      this.pos = 0;
    }
    const { written } = utf8Encoder.encodeInto(s, this.buf.subarray(this.pos));
    const view = this.buf.subarray(this.pos, this.pos + written);
    this.pos += written;
    return view;
  }
  optText(s: string | undefined): SqlValue {
    return s === undefined ? null : this.text(s);
  }
}

const utf8Scratch = new Utf8Scratch();

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Vectors are stored as little-endian float32 bytes regardless of the machine. */
function vectorToBytes(v: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  const out = new Uint8Array(v.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  return out;
}

function bytesToVector(b: Uint8Array): Float32Array {
  if (LITTLE_ENDIAN && b.byteOffset % 4 === 0) return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  if (LITTLE_ENDIAN) return new Float32Array(b.slice().buffer);
  const out = new Float32Array(b.length / 4);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/**
 * A sql.js connection with a cache of prepared statements. sql.js frees every statement when
 * the database is exported, so the cache is dropped and the connection settings re-applied
 * after each export.
 */
class Connection {
  private readonly statements = new Map<string, Statement>();
  private txDepth = 0;
  /** Whether the session-long SQL transaction of `batchWrites` mode is open. */
  private sessionTx = false;

  /**
   * With `batchWrites`, the first transaction opens one SQL transaction that stays open until
   * the next export, and every `transaction()` becomes a savepoint inside it. The database only
   * reaches disk through `export()` anyway, so committing inside SQLite after every file (the
   * indexer stores files one at a time, as parses arrive) only re-copied the same B-tree pages
   * in sql.js's in-memory file: measured, one transaction per file cost 30-50% more than one
   * per batch. Reads on this connection see the pending changes as usual.
   */
  constructor(
    readonly db: Database,
    private readonly batchWrites = false,
  ) {
    db.exec(PRAGMAS_SQL);
  }
  stmt(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  run(sql: string, params: SqlValue[]): void {
    this.stmt(sql).run(params);
  }

  all(sql: string, params: SqlValue[] = []): SqlValue[][] {
    const s = this.stmt(sql);
    const rows: SqlValue[][] = [];
    try {
      s.bind(params);
      while (s.step()) rows.push(s.get());
    } finally {
      s.reset();
    }
    return rows;
  }

  first(sql: string, params: SqlValue[] = []): SqlValue[] | undefined {
    const s = this.stmt(sql);
    try {
      s.bind(params);
      return s.step() ? s.get() : undefined;
    } finally {
      s.reset();
    }
  }

  get inTransaction(): boolean {
    return this.txDepth > 0;
  }

  /**
   * Runs `fn` in a transaction; nested calls become savepoints, so a failing inner unit (one
   * file of a batch) rolls back alone while the outer batch goes on.
   */
  transaction<T>(fn: () => T): T {
    if (this.batchWrites && !this.sessionTx) {
      this.db.exec('BEGIN');
      this.sessionTx = true;
    }
    const depth = this.txDepth;
    const outermost = depth === 0 && !this.sessionTx;
    const sp = `sp${depth}`;
    this.db.exec(outermost ? 'BEGIN' : `SAVEPOINT ${sp}`);
    this.txDepth++;
    let result: T;
    try {
      result = fn();
      if (result instanceof Promise) {
        throw new VltError('INTERNAL', 'store transactions must be synchronous');
      }
    } catch (e) {
      this.txDepth--;
      try {
        this.db.exec(outermost ? 'ROLLBACK' : `ROLLBACK TO ${sp}; RELEASE ${sp}`);
      } catch {
        // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL).
      }
      throw e;
    }
    this.txDepth--;
    this.db.exec(outermost ? 'COMMIT' : `RELEASE ${sp}`);
    return result;
  }

  /** Serialises the database; see the class comment for why the cache is dropped. */
  export(): Uint8Array {
    if (this.txDepth > 0) throw new VltError('INTERNAL', 'cannot persist the index inside a transaction');
    if (this.sessionTx) {
      this.db.exec('COMMIT');
      this.sessionTx = false;
    }
    this.statements.clear();
    const bytes = this.db.export();
    this.db.exec(PRAGMAS_SQL);
    return bytes;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Embedding cache
// ---------------------------------------------------------------------------------------------

/**
 * Vectors by (model key, content hash) in `embeddings.db`. The file is loaded on first use,
 * because it can be far larger than the index (40K chunks of 1536 dims is 240 MB) and most
 * commands never touch it. In read mode vectors can still be put, but only in memory.
 */
export class EmbeddingStore implements EmbeddingCache {
  private conn: Connection | undefined;
  private loading: Promise<Connection> | undefined;
  private dirty = false;
  private closed = false;

  constructor(
    private readonly SQL: SqlJsStatic,
    readonly filePath: string,
    private readonly writable: boolean,
    private readonly logger: Logger,
  ) {}

  private ensure(): Promise<Connection> {
    if (this.closed) return Promise.reject(new VltError('INTERNAL', 'the index store is closed'));
    if (this.conn) return Promise.resolve(this.conn);
    this.loading ??= this.load().then(
      (c) => {
        this.conn = c;
        return c;
      },
      (e: unknown) => {
        this.loading = undefined;
        throw e;
      },
    );
    return this.loading;
  }

  private async load(): Promise<Connection> {
    const file = await readIfExists(this.filePath);
    if (file) {
      const attempt = openChecked(this.SQL, file.bytes, { version: EMBEDDINGS_SCHEMA_VERSION, tables: ['meta', 'embeddings'] });
      if (attempt.db) return new Connection(attempt.db);
      // It is only a cache: losing it costs money and time, never correctness, so a bad file
      // is set aside (write mode) or ignored (read mode) with a warning instead of an error.
      if (this.writable) {
        const moved = await moveAside(this.filePath, this.logger);
        this.logger.warn(`${EMBEDDINGS_FILE} ${attempt.problem}; moved it to ${moved} and starting an empty embedding cache`);
      } else {
        this.logger.warn(`${EMBEDDINGS_FILE} ${attempt.problem}; ignoring the embedding cache`);
      }
    }
    const db = new this.SQL.Database();
    db.exec(`PRAGMA page_size = ${PAGE_SIZE};`);
    const conn = new Connection(db);
    db.exec(EMBEDDINGS_SCHEMA_SQL);
    conn.run('INSERT INTO meta(key, value) VALUES (?, ?)', ['schema_version', String(EMBEDDINGS_SCHEMA_VERSION)]);
    this.dirty = this.writable;
    return conn;
  }

  async getMany(model: string, hashes: string[]): Promise<Map<string, Float32Array>> {
    const conn = await this.ensure();
    const out = new Map<string, Float32Array>();
    const s = conn.stmt('SELECT dims, vector FROM embeddings WHERE model = ? AND hash = ?');
    for (const hash of hashes) {
      if (out.has(hash)) continue;
      try {
        s.bind([model, hash]);
        if (!s.step()) continue;
        const [dims, vector] = s.get();
        // A row whose length disagrees with its dimensions is damaged; treat it as a miss.
        if (vector instanceof Uint8Array && vector.byteLength === num(dims) * 4) out.set(hash, bytesToVector(vector));
      } finally {
        s.reset();
      }
    }
    return out;
  }

  async putMany(model: string, entries: Array<[string, Float32Array]>): Promise<void> {
    if (entries.length === 0) return;
    const conn = await this.ensure();
    conn.transaction(() => {
      const s = conn.stmt('INSERT OR REPLACE INTO embeddings(model, hash, dims, vector) VALUES (?, ?, ?, ?)');
      for (const [hash, vector] of entries) s.run([model, hash, vector.length, vectorToBytes(vector)]);
    });
    this.dirty = true;
  }

  /** Number of cached vectors, per model. Loads the file if it was not loaded yet. */
  async counts(): Promise<Record<string, number>> {
    const conn = await this.ensure();
    const out: Record<string, number> = {};
    for (const [model, n] of conn.all('SELECT model, count(*) FROM embeddings GROUP BY model')) out[str(model)] = num(n);
    return out;
  }

  /** Deletes every vector of `model` whose hash is not in `keep`; returns how many went. */
  async prune(model: string, keep: ReadonlySet<string>): Promise<number> {
    const conn = await this.ensure();
    const stale = conn.all('SELECT hash FROM embeddings WHERE model = ?', [model]).map((r) => str(r[0])).filter((h) => !keep.has(h));
    if (stale.length === 0) return 0;
    conn.transaction(() => {
      for (const h of stale) conn.run('DELETE FROM embeddings WHERE model = ? AND hash = ?', [model, h]);
    });
    this.dirty = true;
    return stale.length;
  }

  get hasUnsavedChanges(): boolean {
    return this.dirty;
  }

  /** Writes embeddings.db if anything changed since the last write (write mode only). */
  async flush(): Promise<void> {
    if (!this.writable || !this.dirty || !this.conn) return;
    const bytes = this.conn.export();
    this.dirty = false;
    try {
      await writeFileAtomic(this.filePath, bytes);
    } catch (e) {
      this.dirty = true;
      throw e;
    }
  }

  close(): void {
    this.closed = true;
    this.conn?.close();
    this.conn = undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Index store
// ---------------------------------------------------------------------------------------------

const CHUNK_COLUMNS = `c.id, c.file_id, f.path, f.language, c.start_line, c.end_line, c.kind, c.symbol, c.signature,
  c.container, c.decorators, c.docstring, c.text, c.hash`;

function chunkFromRow(r: SqlValue[]): ChunkRow {
  const row: ChunkRow = {
    id: num(r[0]),
    fileId: num(r[1]),
    path: str(r[2]),
    language: str(r[3]) as LanguageId,
    startLine: num(r[4]),
    endLine: num(r[5]),
    kind: str(r[6]) as Chunk['kind'],
    text: str(r[12]),
    hash: str(r[13]),
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

const SYMBOL_COLUMNS = `s.id, s.file_id, f.path, s.name, s.kind, s.qualified_name, s.signature, s.start_line, s.end_line, s.container`;

function symbolFromRow(r: SqlValue[]): SymbolRow {
  const row: SymbolRow = {
    id: num(r[0]),
    fileId: num(r[1]),
    path: str(r[2]),
    name: str(r[3]),
    kind: str(r[4]) as SymbolKind,
    qualifiedName: str(r[5]),
    signature: str(r[6]),
    startLine: num(r[7]),
    endLine: num(r[8]),
  };
  const container = optStr(r[9]);
  if (container !== undefined) row.container = container;
  return row;
}

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

/** Meta keys the store maintains itself; `setMeta` refuses them. */
const RESERVED_META = new Set(['schema_version', 'generation', 'created_at', 'updated_at', 'next_file_id', 'next_chunk_id']);

/** Above this many ids, `getChunks` switches from one lookup per id to `IN (...)` batches. */
const IN_BATCH = 200;

/**
 * The workspace index. Open it with {@link IndexStore.open}; in write mode it holds the writer
 * lock until {@link IndexStore.close}. Mutations are synchronous and in memory; nothing
 * reaches disk until {@link IndexStore.commit}.
 */
export class IndexStore {
  /** Set in write mode when an unusable index.db was set aside: one sentence saying why. */
  rebuildReason: string | undefined;
  /** Whether a valid index.db was loaded from disk (false for a new or rebuilt index). */
  loadedFromDisk = false;
  readonly embeddings: EmbeddingStore;

  private conn: Connection;
  private dirty = false;
  private closed = false;
  private nextFileId = 1;
  private nextChunkId = 1;
  private diskIdentity: string | undefined;
  private commitChain: Promise<void> = Promise.resolve();
  /**
   * Reference names each mutated file lost and gained since the postings were last folded in,
   * in mutation order (see the schema notes). Truncated when a transaction rolls back.
   */
  private postingLog: Array<{ fileId: number; removed: readonly string[]; added: readonly string[] }> = [];
  /** Set when a file's old reference blob was unreadable, so its old names are unknown. */
  private postingsNeedRebuild = false;

  private constructor(
    private readonly SQL: SqlJsStatic,
    readonly workspaceRoot: string,
    readonly mode: 'read' | 'write',
    private readonly logger: Logger,
    /** The writer lock while this store holds it (write mode). */
    private lock: FileLock | undefined,
  ) {
    this.conn = new Connection(new SQL.Database());
    this.embeddings = new EmbeddingStore(SQL, this.embeddingsPath, mode === 'write', logger);
  }

  get dir(): string {
    return path.join(this.workspaceRoot, VLT_DIR);
  }
  get indexPath(): string {
    return path.join(this.dir, INDEX_FILE);
  }
  get embeddingsPath(): string {
    return path.join(this.dir, EMBEDDINGS_FILE);
  }
  get lockPath(): string {
    return path.join(this.dir, LOCK_FILE);
  }

  /**
   * Opens the index of `workspaceRoot`. Read mode never takes the lock and throws
   * INDEX_CORRUPT for an unusable file (an absent one gives an empty store); write mode takes
   * the lock, removes temporary files of dead writers, and replaces an unusable file with a
   * fresh database, explaining why in `rebuildReason`.
   */
  static async open(workspaceRoot: string, opts: OpenOptions): Promise<IndexStore> {
    const SQL = await loadSqlJs();
    const logger = opts.logger ?? silentLogger;
    const root = path.resolve(workspaceRoot);
    const dir = path.join(root, VLT_DIR);
    let lock: FileLock | undefined;
    if (opts.mode === 'write') {
      try {
        await fsp.mkdir(dir, { recursive: true });
      } catch (e) {
        throw new VltError('IO', `could not create ${dir}: ${errorMessage(e)}`, { path: dir }, { cause: e });
      }
      lock = await takeWriterLock(path.join(dir, LOCK_FILE), logger);
    }
    const store = new IndexStore(SQL, root, opts.mode, logger, lock);
    try {
      if (opts.mode === 'write') {
        const removed = await removeStaleTempFiles(dir);
        if (removed.length > 0) logger.info(`removed ${removed.length} leftover temporary file(s) from ${dir}`);
      }
      await store.load();
    } catch (e) {
      store.close();
      throw e;
    }
    return store;
  }

  private async load(): Promise<void> {
    const file = await readIfExists(this.indexPath);
    let db: Database | undefined;
    if (file) {
      const attempt = openChecked(this.SQL, file.bytes, { version: SCHEMA_VERSION, tables: REQUIRED_TABLES });
      if (attempt.db) {
        db = attempt.db;
      } else if (this.mode === 'read') {
        throw new VltError('INDEX_CORRUPT', `${INDEX_FILE} ${attempt.problem}; rebuild it with \`vlt coderag init\``, {
          path: this.indexPath,
        });
      } else {
        const moved = await moveAside(this.indexPath, this.logger);
        this.rebuildReason = `${INDEX_FILE} ${attempt.problem}; moved it to ${moved} and rebuilding the index`;
        // The caller reports `rebuildReason` to the user once; here it is only traced.
        this.logger.debug(this.rebuildReason);
      }
    }
    this.conn.close();
    if (db) {
      this.conn = new Connection(db, this.mode === 'write');
      this.loadedFromDisk = true;
      this.diskIdentity = file?.identity;
      this.dirty = false;
    } else {
      this.conn = this.createFresh();
      this.loadedFromDisk = false;
      this.diskIdentity = undefined;
      // A new index is written on the first commit even if nothing is added, so that readers
      // find an (empty) index instead of none.
      this.dirty = this.mode === 'write';
    }
    const maxFile = num(this.conn.first('SELECT max(id) FROM files')?.[0]);
    const maxChunk = num(this.conn.first('SELECT max(id) FROM chunks')?.[0]);
    this.nextFileId = Math.max(maxFile + 1, Number(this.getMeta('next_file_id') ?? 1) || 1);
    this.nextChunkId = Math.max(maxChunk + 1, Number(this.getMeta('next_chunk_id') ?? 1) || 1);
  }

  private createFresh(): Connection {
    const db = new this.SQL.Database();
    // The page size must be set before the first table is created.
    db.exec(`PRAGMA page_size = ${PAGE_SIZE};`);
    const conn = new Connection(db, this.mode === 'write');
    db.exec(SCHEMA_SQL);
    const now = new Date().toISOString();
    conn.transaction(() => {
      // `generation` is absent until the first commit, so "never committed" is visible as such.
      for (const [k, v] of [
        ['schema_version', String(SCHEMA_VERSION)],
        ['created_at', now],
      ] as const) {
        conn.run('INSERT INTO meta(key, value) VALUES (?, ?)', [k, v]);
      }
    });
    return conn;
  }

  private async statIdentity(): Promise<string | undefined> {
    try {
      return identityOf(await fsp.stat(this.indexPath));
    } catch {
      return undefined;
    }
  }

  /** True when the index holds no files (a new, rebuilt or absent index). */
  get isEmpty(): boolean {
    this.assertOpen();
    return this.conn.first('SELECT 1 FROM files LIMIT 1') === undefined;
  }

  /** Number of commits ever made to this index (0 before the first). */
  get generation(): number {
    return Number(this.getMeta('generation') ?? 0) || 0;
  }

  /** Whether there are mutations not yet written by {@link commit}. */
  get hasUnsavedChanges(): boolean {
    return this.dirty || this.embeddings.hasUnsavedChanges;
  }

  // -- reader freshness ------------------------------------------------------------------------

  /** Whether index.db on disk differs from the one this store loaded (a writer committed). */
  async changedOnDisk(): Promise<boolean> {
    return (await this.statIdentity()) !== this.diskIdentity;
  }

  /**
   * Loads index.db again if another process replaced it since. Returns whether it did.
   * Statements and iterators obtained before become invalid. Allowed in read mode, and in
   * write mode while the lock is given back (see {@link releaseLock}) and nothing is unsaved.
   */
  async reload(): Promise<boolean> {
    this.assertOpen();
    if (this.mode === 'write' && (this.lock !== undefined || this.hasUnsavedChanges)) {
      throw new VltError('INTERNAL', 'reload() needs a read-only store, or a writer that gave its lock back with nothing unsaved');
    }
    if (!(await this.changedOnDisk())) return false;
    await this.load();
    return true;
  }

  /** Write mode: whether this store holds the writer lock now. */
  get holdsLock(): boolean {
    return this.lock !== undefined;
  }

  /**
   * Write mode: gives the writer lock back, so that other processes (a terminal's `vlt coderag
   * sync`) can write while this long-lived writer is idle. Refused with unsaved changes: they
   * would be lost to the next writer. {@link acquireLock} takes it again before the next change.
   */
  releaseLock(): void {
    this.assertOpen();
    if (this.mode !== 'write' || this.lock === undefined) return;
    if (this.hasUnsavedChanges) throw new VltError('INTERNAL', 'commit before giving the index lock back');
    this.lock.release();
    this.lock = undefined;
  }

  /**
   * Write mode: takes the writer lock again after {@link releaseLock} (INDEX_LOCKED while
   * another process writes). When another writer committed in between, index.db is loaded
   * again first, so that this store never writes over that commit; returns whether it was.
   */
  async acquireLock(): Promise<boolean> {
    this.assertOpen();
    if (this.mode !== 'write') throw new VltError('INTERNAL', 'acquireLock() is for stores opened in write mode');
    if (this.lock !== undefined) return false;
    const lock = await takeWriterLock(this.lockPath, this.logger);
    this.lock = lock;
    try {
      if (!(await this.changedOnDisk())) return false;
      await this.load();
      return true;
    } catch (e) {
      lock.release();
      this.lock = undefined;
      throw e;
    }
  }

  // -- mutations -------------------------------------------------------------------------------

  /**
   * Runs `fn` in one transaction. Wrapping a batch of {@link replaceFile} calls in one is much
   * faster than a transaction per file; each call inside still rolls back alone on error.
   */
  transaction<T>(fn: () => T): T {
    this.assertWritable();
    return this.tx(fn);
  }

  /** A transaction that also undoes its entries in the posting log when it rolls back. */
  private tx<T>(fn: () => T): T {
    const mark = this.postingLog.length;
    try {
      return this.conn.transaction(fn);
    } catch (e) {
      this.postingLog.length = mark;
      throw e;
    }
  }

  /**
   * Stores one parsed file, replacing whatever the path had: its chunks, symbols and
   * references are deleted and the new ones inserted in one transaction. The file keeps its
   * id; chunks get new ids. `chunkHashes[i]` is the content hash of `parsed.chunks[i]`.
   */
  replaceFile(file: FileInfo, parsed: ParsedFile, chunkHashes: readonly string[]): ReplaceResult {
    this.assertWritable();
    if (chunkHashes.length !== parsed.chunks.length) {
      throw new VltError(
        'INTERNAL',
        `replaceFile(${file.path}): ${parsed.chunks.length} chunks but ${chunkHashes.length} chunk hashes`,
      );
    }
    const { bytes: refBlob, names } = encodeRefsWithNames(parsed.refs);
    const conn = this.conn;
    const result = this.tx((): ReplaceResult => {
      const existing = conn.first('SELECT id, refs FROM files WHERE path = ?', [file.path]);
      let fileId: number;
      let removedChunkIds: number[] = [];
      let oldNames: readonly string[] = [];
      const fileParams: SqlValue[] = [
        file.hash,
        file.mtimeMs,
        file.size,
        file.language,
        JSON.stringify(parsed.imports),
        JSON.stringify(parsed.importSpecs),
        parsed.refs.length,
        file.generated ? 1 : 0,
        parsed.refs.length > 0 ? refBlob : null,
      ];
      if (existing) {
        fileId = num(existing[0]);
        ({ chunkIds: removedChunkIds, names: oldNames } = this.deleteChildren(fileId, existing[1]));
        conn.run(
          'UPDATE files SET hash = ?, mtime_ms = ?, size = ?, language = ?, imports = ?, import_specs = ?, ref_count = ?, generated = ?, refs = ? WHERE id = ?',
          [...fileParams, fileId],
        );
      } else {
        fileId = this.nextFileId++;
        conn.run(
          'INSERT INTO files(id, path, hash, mtime_ms, size, language, imports, import_specs, ref_count, generated, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [fileId, file.path, ...fileParams],
        );
      }
      const chunkIds: number[] = [];
      const insertChunk = conn.stmt(
        `INSERT INTO chunks(id, file_id, start_line, end_line, kind, symbol, signature, container, decorators, hash, docstring, text)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (let i = 0; i < parsed.chunks.length; i++) {
        const c = parsed.chunks[i]!;
        const id = this.nextChunkId++;
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
          utf8Scratch.text(c.text),
        ]);
        chunkIds.push(id);
      }
      const insertSymbol = conn.stmt(
        `INSERT INTO symbols(file_id, name, kind, qualified_name, signature, start_line, end_line, container)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const s of parsed.symbols) {
        insertSymbol.run([fileId, s.name, s.kind, s.qualifiedName, s.signature, s.startLine, s.endLine, s.container ?? null]);
      }
      this.postingLog.push({ fileId, removed: oldNames, added: names });
      return { fileId, chunkIds, removedChunkIds };
    });
    this.dirty = true;
    return result;
  }

  /** Deletes a file and everything derived from it; returns the ids of its chunks. */
  removeFile(filePath: string): number[] {
    this.assertWritable();
    const conn = this.conn;
    const removed = this.tx(() => {
      const existing = conn.first('SELECT id, refs FROM files WHERE path = ?', [filePath]);
      if (!existing) return undefined;
      const fileId = num(existing[0]);
      const { chunkIds, names } = this.deleteChildren(fileId, existing[1]);
      conn.run('DELETE FROM files WHERE id = ?', [fileId]);
      this.postingLog.push({ fileId, removed: names, added: [] });
      return chunkIds;
    });
    if (removed === undefined) return [];
    this.dirty = true;
    return removed;
  }

  /** Deletes a file's chunks and symbols; returns their ids and the file's old ref names. */
  private deleteChildren(fileId: number, oldRefs: SqlValue | undefined): { chunkIds: number[]; names: string[] } {
    const conn = this.conn;
    const chunkIds = conn.all('SELECT id FROM chunks WHERE file_id = ?', [fileId]).map((r) => num(r[0]));
    conn.run('DELETE FROM chunks WHERE file_id = ?', [fileId]);
    conn.run('DELETE FROM symbols WHERE file_id = ?', [fileId]);
    let names: string[] = [];
    if (oldRefs instanceof Uint8Array) {
      try {
        names = decodeRefNames(oldRefs);
      } catch {
        // A damaged blob cannot say which postings mention the file; rebuild them all.
        this.postingsNeedRebuild = true;
      }
    }
    return { chunkIds, names };
  }

  /**
   * Folds the posting log into `ref_postings`. Names are applied in sorted order so the
   * table's B-trees grow by appends during a full build. Must run outside transactions,
   * because the log is cleared once the table holds its changes.
   */
  private flushPostings(): void {
    if (this.postingsNeedRebuild) {
      this.rebuildPostings();
      return;
    }
    if (this.postingLog.length === 0) return;
    // Per name, the file ids in mutation order: positive = gained, negative = lost.
    const ops = new Map<string, number[]>();
    const push = (name: string, op: number): void => {
      const list = ops.get(name);
      if (list) list.push(op);
      else ops.set(name, [op]);
    };
    for (const e of this.postingLog) {
      for (const n of e.removed) push(n, -e.fileId);
      for (const n of e.added) push(n, e.fileId);
    }
    const conn = this.conn;
    conn.transaction(() => {
      const get = conn.stmt('SELECT files FROM ref_postings WHERE name = ?');
      const insert = conn.stmt('INSERT INTO ref_postings(name, files) VALUES (?, ?)');
      const update = conn.stmt('UPDATE ref_postings SET files = ? WHERE name = ?');
      const del = conn.stmt('DELETE FROM ref_postings WHERE name = ?');
      for (const name of [...ops.keys()].sort()) {
        let old: Uint8Array | undefined;
        try {
          get.bind([name]);
          if (get.step()) {
            const v = get.get()[0];
            if (v instanceof Uint8Array) old = v;
          }
        } finally {
          get.reset();
        }
        const ids = old ? applyOps(decodePosting(old), ops.get(name)!) : applyOps([], ops.get(name)!);
        if (ids.length === 0) {
          if (old) del.run([name]);
        } else if (old) {
          update.run([encodePosting(ids), name]);
        } else {
          insert.run([name, encodePosting(ids)]);
        }
      }
    });
    this.postingLog = [];
  }

  /** Recomputes every posting from the files' reference blobs (repair path). */
  private rebuildPostings(): void {
    const byName = new Map<string, number[]>();
    for (const [id, blob] of this.conn.all('SELECT id, refs FROM files WHERE refs IS NOT NULL ORDER BY id')) {
      if (!(blob instanceof Uint8Array)) continue;
      let names: string[];
      try {
        names = decodeRefNames(blob);
      } catch {
        continue;
      }
      for (const n of names) {
        const list = byName.get(n);
        if (list) list.push(num(id));
        else byName.set(n, [num(id)]);
      }
    }
    const conn = this.conn;
    conn.transaction(() => {
      conn.run('DELETE FROM ref_postings', []);
      const insert = conn.stmt('INSERT INTO ref_postings(name, files) VALUES (?, ?)');
      for (const name of [...byName.keys()].sort()) insert.run([name, encodePosting(byName.get(name)!)]);
    });
    this.postingLog = [];
    this.postingsNeedRebuild = false;
  }

  /** Replaces the whole list of files that discovery or parsing skipped. */
  setSkipped(list: readonly SkippedRow[]): void {
    this.assertWritable();
    const key = (r: SkippedRow) => `${r.path}\0${r.reason}\0${r.detail ?? ''}`;
    const old = this.getSkipped();
    if (old.length === list.length) {
      const before = new Set(old.map(key));
      if (list.every((r) => before.has(key(r)))) return;
    }
    const conn = this.conn;
    conn.transaction(() => {
      conn.run('DELETE FROM skipped', []);
      const ins = conn.stmt('INSERT OR REPLACE INTO skipped(path, reason, detail) VALUES (?, ?, ?)');
      for (const s of list) ins.run([s.path, s.reason, s.detail ?? null]);
    });
    this.dirty = true;
  }

  setBlob(key: string, bytes: Uint8Array): void {
    this.assertWritable();
    this.conn.run('INSERT OR REPLACE INTO blobs(key, value) VALUES (?, ?)', [key, bytes]);
    this.dirty = true;
  }

  deleteBlob(key: string): void {
    this.assertWritable();
    this.conn.run('DELETE FROM blobs WHERE key = ?', [key]);
    this.dirty = true;
  }

  setMeta(key: string, value: string): void {
    this.assertWritable();
    if (RESERVED_META.has(key)) throw new VltError('INTERNAL', `meta key ${key} is maintained by the store`);
    if (this.getMeta(key) === value) return;
    this.conn.run('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)', [key, value]);
    this.dirty = true;
  }

  /**
   * Persists the index atomically (and embeddings.db when vectors were added): the database
   * is exported, written to a temporary file, flushed and renamed over the old one, so a crash
   * at any point leaves either the previous or the new complete index. Bumps `generation`.
   * Iterators from {@link allChunksForIndexing} must be finished before committing, because
   * sql.js frees every statement when exporting.
   */
  commit(): Promise<void> {
    try {
      this.assertWritable();
    } catch (e) {
      return Promise.reject(e);
    }
    const next = this.commitChain.then(() => this.commitNow());
    // The chain only orders commits; each caller sees its own commit's error.
    this.commitChain = next.catch(() => undefined);
    return next;
  }

  private async commitNow(): Promise<void> {
    this.assertOpen();
    await this.embeddings.flush();
    if (!this.dirty) return;
    const conn = this.conn;
    if (conn.inTransaction) throw new VltError('INTERNAL', 'cannot commit the index inside a transaction');
    this.flushPostings();
    const generation = this.generation + 1;
    conn.transaction(() => {
      const set = conn.stmt('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)');
      set.run(['generation', String(generation)]);
      set.run(['updated_at', new Date().toISOString()]);
      set.run(['next_file_id', String(this.nextFileId)]);
      set.run(['next_chunk_id', String(this.nextChunkId)]);
    });
    const bytes = conn.export();
    // Cleared before the write so that mutations made while it is in flight stay pending.
    this.dirty = false;
    try {
      await writeFileAtomic(this.indexPath, bytes);
    } catch (e) {
      this.dirty = true;
      throw e;
    }
    this.loadedFromDisk = true;
    this.diskIdentity = await this.statIdentity();
  }

  /**
   * Closes the databases and releases the lock. Uncommitted changes are dropped (with a
   * warning), because a half-done indexing run must not be persisted by accident. Await a
   * pending {@link commit} first: closing releases the lock while its file write may still be
   * in flight.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.mode === 'write' && this.hasUnsavedChanges) {
      this.logger.warn('closing the index store with uncommitted changes; they are discarded');
    }
    try {
      this.conn.close();
    } catch {
      // Closing can only fail if the database was already closed.
    }
    this.embeddings.close();
    this.lock?.release();
  }

  // -- queries ---------------------------------------------------------------------------------

  listFiles(): FileRow[] {
    this.assertOpen();
    return this.conn.all(`SELECT ${FILE_COLUMNS} FROM files ORDER BY path`).map(fileFromRow);
  }

  getFile(filePath: string): FileRow | undefined {
    this.assertOpen();
    const r = this.conn.first(`SELECT ${FILE_COLUMNS} FROM files WHERE path = ?`, [filePath]);
    return r ? fileFromRow(r) : undefined;
  }

  getFileById(fileId: number): FileRow | undefined {
    this.assertOpen();
    const r = this.conn.first(`SELECT ${FILE_COLUMNS} FROM files WHERE id = ?`, [fileId]);
    return r ? fileFromRow(r) : undefined;
  }

  /** Chunks by id, in the order asked; unknown ids are left out. */
  getChunks(ids: readonly number[]): ChunkRow[] {
    this.assertOpen();
    const byId = new Map<number, ChunkRow>();
    if (ids.length <= IN_BATCH) {
      const s = this.conn.stmt(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?`);
      for (const id of ids) {
        if (byId.has(id)) continue;
        try {
          s.bind([id]);
          if (s.step()) byId.set(id, chunkFromRow(s.get()));
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
        for (const r of this.conn.all(sql, batch)) {
          const row = chunkFromRow(r);
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

  chunksOfFile(fileId: number): ChunkRow[] {
    this.assertOpen();
    return this.conn
      .all(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.file_id = ? ORDER BY c.start_line, c.id`, [fileId])
      .map(chunkFromRow);
  }

  /**
   * Every chunk with its file's path and language, for rebuilding the search index or the
   * embeddings. Rows are streamed from one statement; finish (or break out of) the loop before
   * calling {@link commit}.
   */
  /** Every chunk's id and enriched-text hash (the embedding cache key), without its text. */
  chunkHashes(): Array<{ id: number; hash: string }> {
    this.assertOpen();
    return this.conn.all('SELECT id, hash FROM chunks ORDER BY id').map(([id, hash]) => ({ id: Number(id), hash: String(hash) }));
  }

  *allChunksForIndexing(): Generator<IndexableChunk, void, undefined> {
    this.assertOpen();
    const s = this.conn.db.prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id`);
    try {
      while (s.step()) yield chunkFromRow(s.get());
    } finally {
      try {
        s.free();
      } catch {
        // Already freed by an export in the middle of the iteration.
      }
    }
  }

  /**
   * Symbols named `name` (exactly, or as a prefix), with their file paths. A qualified name
   * such as `Writer.Close` or `io::Read` matches symbols whose qualified name equals it or ends
   * with it after a separator.
   */
  findSymbols(name: string, opts: { prefix?: boolean; limit?: number } = {}): SymbolRow[] {
    this.assertOpen();
    const limit = Math.max(1, Math.floor(opts.limit ?? 100));
    const qualified = opts.prefix ? null : /^(.*?)(?:\.|::|#|\/)([^.:#/]+)$/.exec(name);
    if (qualified) {
      // Names themselves may contain separators (a markdown heading "1.2 Setup"), so exact
      // name matches come first, then symbols whose qualified name ends with `name`.
      const byName = (n: string): SymbolRow[] =>
        this.conn
          .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? ORDER BY f.path, s.start_line`, [n])
          .map(symbolFromRow);
      const exact = byName(name);
      const seen = new Set(exact.map((r) => r.id));
      const viaQualified = byName(qualified[2]!).filter(
        (r) => !seen.has(r.id) && (r.qualifiedName === name || endsWithQualified(r.qualifiedName, name)),
      );
      return [...exact, ...viaQualified].slice(0, limit);
    }
    if (opts.prefix) {
      if (name.length === 0) {
        return this.conn
          .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY s.name, f.path, s.start_line LIMIT ?`, [limit])
          .map(symbolFromRow);
      }
      // A range on the name index; U+10FFFF sorts after every character in UTF-8 order.
      return this.conn
        .all(
          `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name >= ? AND s.name < ? ORDER BY s.name, f.path, s.start_line LIMIT ?`,
          [name, `${name}\u{10FFFF}`, limit],
        )
        .map(symbolFromRow);
    }
    return this.conn
      .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? ORDER BY f.path, s.start_line LIMIT ?`, [name, limit])
      .map(symbolFromRow);
  }

  symbolsOfFile(fileId: number): SymbolRow[] {
    this.assertOpen();
    return this.conn
      .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.file_id = ? ORDER BY s.start_line, s.id`, [fileId])
      .map(symbolFromRow);
  }

  /** Every definition; with `generated: false`, none of generated files. */
  allSymbols(opts: { generated?: boolean } = {}): SymbolRow[] {
    this.assertOpen();
    const where = opts.generated === false ? ' WHERE f.generated = 0' : '';
    return this.conn.all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id${where} ORDER BY s.id`).map(symbolFromRow);
  }

  /** A file's indexed references; with `onlyName`, just the uses of that name (decoded alone). */
  getRefs(fileId: number, onlyName?: string): SymbolRef[] {
    this.assertOpen();
    const blob = this.conn.first('SELECT refs FROM files WHERE id = ?', [fileId])?.[0];
    return blob instanceof Uint8Array ? decodeRefs(blob, onlyName) : [];
  }

  /** Files that use the identifier `name` at least once, by path. */
  filesReferencing(name: string): Array<{ fileId: number; path: string }> {
    this.assertOpen();
    const conn = this.conn;
    let ids: number[];
    if (this.postingsNeedRebuild && !conn.inTransaction) this.flushPostings();
    if (this.postingsNeedRebuild) {
      // Inside a transaction with unknown old names: scan every file's names (slow, rare).
      ids = conn
        .all('SELECT id, refs FROM files WHERE refs IS NOT NULL ORDER BY id')
        .filter(([, blob]) => blob instanceof Uint8Array && safeRefNames(blob).includes(name))
        .map((r) => num(r[0]));
    } else {
      if (this.postingLog.length > 0 && !conn.inTransaction) this.flushPostings();
      const blob = conn.first('SELECT files FROM ref_postings WHERE name = ?', [name])?.[0];
      ids = blob instanceof Uint8Array ? decodePosting(blob) : [];
      if (this.postingLog.length > 0) {
        // Inside a transaction the log cannot be folded in yet (a rollback would lose it), so
        // this name's pending changes are applied to the answer only.
        const ops: number[] = [];
        for (const e of this.postingLog) {
          if (e.removed.includes(name)) ops.push(-e.fileId);
          if (e.added.includes(name)) ops.push(e.fileId);
        }
        ids = applyOps(ids, ops);
      }
    }
    const pathOf = conn.stmt('SELECT path FROM files WHERE id = ?');
    const out: Array<{ fileId: number; path: string }> = [];
    for (const id of ids) {
      try {
        pathOf.bind([id]);
        if (pathOf.step()) out.push({ fileId: id, path: str(pathOf.get()[0]) });
      } finally {
        pathOf.reset();
      }
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Structured imports of every file, for the code graph: one pass, no refs decoded. */
  allImportSpecs(): Map<number, ImportSpec[]> {
    this.assertOpen();
    const out = new Map<number, ImportSpec[]>();
    for (const [id, specs] of this.conn.all("SELECT id, import_specs FROM files WHERE import_specs != '[]'")) {
      out.set(num(id), JSON.parse(str(specs)) as ImportSpec[]);
    }
    return out;
  }

  /** Structured imports of one file. */
  importSpecsOf(fileId: number): ImportSpec[] {
    this.assertOpen();
    const raw = this.conn.first('SELECT import_specs FROM files WHERE id = ?', [fileId])?.[0];
    return raw === undefined || raw === null ? [] : (JSON.parse(str(raw)) as ImportSpec[]);
  }

  /**
   * Every referenced name with the ids of the files that use it (ascending), from the posting
   * table: the whole definition→reference graph in one pass, without decoding any file's refs.
   */
  allRefPostings(): Array<{ name: string; fileIds: number[] }> {
    this.assertOpen();
    if ((this.postingsNeedRebuild || this.postingLog.length > 0) && !this.conn.inTransaction) this.flushPostings();
    const out: Array<{ name: string; fileIds: number[] }> = [];
    for (const [name, blob] of this.conn.all('SELECT name, files FROM ref_postings')) {
      if (blob instanceof Uint8Array) out.push({ name: str(name), fileIds: decodePosting(blob) });
    }
    return out;
  }

  /** Every use of `name`, in path and line order, up to `limit`. */
  findRefs(name: string, limit = 1000): RefLocation[] {
    const out: RefLocation[] = [];
    const refsOf = this.conn.stmt('SELECT refs FROM files WHERE id = ?');
    for (const f of this.filesReferencing(name)) {
      let blob: SqlValue | undefined;
      try {
        refsOf.bind([f.fileId]);
        blob = refsOf.step() ? refsOf.get()[0] : undefined;
      } finally {
        refsOf.reset();
      }
      if (!(blob instanceof Uint8Array)) continue;
      for (const ref of decodeRefs(blob, name)) {
        out.push({ ...ref, fileId: f.fileId, path: f.path });
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  getSkipped(): SkippedRow[] {
    this.assertOpen();
    return this.conn.all('SELECT path, reason, detail FROM skipped ORDER BY path').map((r) => {
      const row: SkippedRow = { path: str(r[0]), reason: str(r[1]) };
      const detail = optStr(r[2]);
      if (detail !== undefined) row.detail = detail;
      return row;
    });
  }

  hasBlob(key: string): boolean {
    this.assertOpen();
    return this.conn.first('SELECT 1 FROM blobs WHERE key = ?', [key]) !== undefined;
  }

  getBlob(key: string): Uint8Array | undefined {
    this.assertOpen();
    const v = this.conn.first('SELECT value FROM blobs WHERE key = ?', [key])?.[0];
    return v instanceof Uint8Array ? v : undefined;
  }

  getMeta(key: string): string | undefined {
    this.assertOpen();
    const v = this.conn.first('SELECT value FROM meta WHERE key = ?', [key])?.[0];
    return v === undefined || v === null ? undefined : str(v);
  }

  stats(): StoreStats {
    this.assertOpen();
    const c = this.conn;
    const count = (sql: string): number => num(c.first(sql)?.[0]);
    const languages: Record<string, number> = {};
    for (const [lang, n] of c.all('SELECT language, count(*) FROM files GROUP BY language ORDER BY language')) {
      languages[str(lang)] = num(n);
    }
    const skippedByReason: Record<string, number> = {};
    for (const [reason, n] of c.all('SELECT reason, count(*) FROM skipped GROUP BY reason ORDER BY reason')) {
      skippedByReason[str(reason)] = num(n);
    }
    let bytesOnDisk = 0;
    for (const file of [this.indexPath, this.embeddingsPath]) {
      try {
        bytesOnDisk += fs.statSync(file).size;
      } catch {
        // A file not written yet takes no space.
      }
    }
    return {
      files: count('SELECT count(*) FROM files'),
      chunks: count('SELECT count(*) FROM chunks'),
      symbols: count('SELECT count(*) FROM symbols'),
      refs: count('SELECT coalesce(sum(ref_count), 0) FROM files'),
      bytesOnDisk,
      languages,
      updatedAt: this.getMeta('updated_at') ?? null,
      generation: this.generation,
      skippedByReason,
      generatedFiles: count('SELECT count(*) FROM files WHERE generated <> 0'),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new VltError('INTERNAL', 'the index store is closed');
  }

  private assertWritable(): void {
    this.assertOpen();
    if (this.mode !== 'write') throw new VltError('INTERNAL', 'the index store was opened read-only');
    if (this.lock === undefined) throw new VltError('INTERNAL', 'the index store gave its writer lock back; acquireLock() first');
  }
}

/** Applies signed file-id operations (positive adds, negative removes) to a sorted id list. */
function applyOps(sortedIds: number[], ops: readonly number[]): number[] {
  // Fast path of a full build: nothing stored yet and only additions, in increasing file order.
  if (sortedIds.length === 0) {
    let increasing = true;
    for (let i = 0; i < ops.length && increasing; i++) increasing = ops[i]! > (i === 0 ? 0 : ops[i - 1]!);
    if (increasing) return ops.slice();
  }
  const set = new Set(sortedIds);
  for (const op of ops) {
    if (op > 0) set.add(op);
    else set.delete(-op);
  }
  return [...set].sort((a, b) => a - b);
}

function safeRefNames(blob: Uint8Array): string[] {
  try {
    return decodeRefNames(blob);
  } catch {
    return [];
  }
}

function endsWithQualified(qualifiedName: string, suffix: string): boolean {
  if (!qualifiedName.endsWith(suffix)) return false;
  const before = qualifiedName.slice(0, qualifiedName.length - suffix.length);
  return before.endsWith('.') || before.endsWith('::') || before.endsWith('#') || before.endsWith('/');
}
