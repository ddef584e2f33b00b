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
 *
 * This file is the IndexStore: opening, the writer lock, mutations and commits. Its parts live
 * beside it: schema.ts (files and tables), sqlite.ts (sql.js and the connection), db-file.ts
 * (checking a file before trusting it), refs-codec.ts (binary references and postings),
 * postings.ts (the name → files table), file-writes.ts (a file's rows written or deleted),
 * file-queries.ts and symbol-queries.ts (the reads), blobs.ts, sidecar.ts and byte-source.ts
 * (large blobs beside index.db), embedding-store.ts (embeddings.db), lock.ts and atomic.ts. Everything they export that callers
 * use is exported here too, so `store/store` stays the one import of the store.
 */
import { ensurePrivateDir } from './state-dir';
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { VltError } from '../errors';
import { silentLogger, type Logger } from '../ports';
import type { ImportSpec, ParsedFile, SymbolRef } from '../types';
import { removeStaleTempFiles, writeFileAtomic } from './atomic';
import { FileSegmentDir } from '../search/text-segment';
import { Packs, type TextRef } from './packs';
import { eachFileBlob } from './file-blobs';
import { identityOf, moveAside, openChecked, readForReader, readIfExists, recordWritten, writtenIdentity } from './db-file';
import { EmbeddingStore } from './embedding-store';
import * as files from './file-queries';
import * as writes from './file-writes';
import type { FileLock } from './lock';
import { NamePostings } from './postings';
import { bytesOnDisk as totalBytes } from '../status';
import { Blobs } from './blobs';
import type { ByteSource } from './byte-source';
import { decodeRefNames, encodeRefsWithNames } from './refs-codec';
import { decodeDefNames, encodeDefsWithNames } from './defs-codec';
import type { ChunkRow, FileInfo, FileRow, IndexableChunk, RefLocation, SkippedRow, SymbolRow } from './rows';
import { ADDED_INDEXES, BUILD_STATE_META, EMBEDDINGS_FILE, INDEX_FILE, LOCK_FILE, PAGE_SIZE, REQUIRED_TABLES, SCHEMA_SQL, SCHEMA_VERSION, VLT_DIR, WRITTEN_FILE } from './schema';
import { Connection, loadSqlJs, num, str } from './sqlite';
import * as symbols from './symbol-queries';
import { takeWriterLock } from './writer-lock';

export { memorySource, readRange, type ByteSource } from './byte-source';
export { offerEarlyRead, type EarlyRead } from './db-file';
export { EmbeddingStore } from './embedding-store';
export { decodePosting, decodeRefNames, decodeRefs, encodePosting, encodeRefs, encodeRefsWithNames, REFS_FORMAT_VERSION } from './refs-codec';
export type { ChunkRow, FileInfo, FileRow, IndexableChunk, RefLocation, SkippedRow, SymbolRow } from './rows';
export { BUILD_STATE_META, EMBEDDINGS_FILE, EMBEDDINGS_SCHEMA_VERSION, INDEX_FILE, LOCK_FILE, SCHEMA_VERSION, VLT_DIR } from './schema';
export { loadSqlJs, locateSqlWasm } from './sqlite';

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
  /** Of which the sidecar files (sidecar.ts). */
  sidecarBytes: number;
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
// Writer lock
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Index store
// ---------------------------------------------------------------------------------------------

/** The persisted symbol table's blob, and the meta key holding the generation it describes. */
export const SYMBOLS_BLOB = 'symbols';
/**
 * The changes a writer laid over the committed symbol table since it was written (a small blob
 * in index.db): the table then describes the generation the delta names, read with it.
 */
export const SYMBOLS_DELTA_BLOB = 'symbols-delta';

/** What a writer persists of its symbol tables at a commit: the whole table, or a delta over the committed one. */
export type SymbolTableUpdate = { table: Uint8Array } | { delta: Uint8Array };
/** The meta key naming the search index's text segment files (JSON array). */
const TEXT_SEGMENTS_META = 'text_segments';
const SYMBOLS_GENERATION_META = 'symbols_generation';
/** Stands for a file blob that could not be read: decoding it fails, so its postings are rebuilt. */
const CORRUPT_BLOB = Uint8Array.of(255);

/** Meta keys the store maintains itself; `setMeta` refuses them. */
const RESERVED_META = new Set(['schema_version', 'generation', 'created_at', 'updated_at', 'next_file_id', 'next_chunk_id', SYMBOLS_GENERATION_META]);

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
  /** Symbol rows changed since the last commit: the persisted symbol table is rewritten with them. */
  private symbolsDirty = false;
  private closed = false;
  /**
   * Set by a writing engine: encodes the symbol table for the commit of `generation` (undefined:
   * none, and a stale one is dropped).
   */
  symbolTableWriter: ((generation: number) => SymbolTableUpdate | undefined) | undefined;
  /** Set by a writing engine: called after each commit reached the disk (the status summary). */
  onCommitted: (() => void) | undefined;
  /** The next file and chunk ids to hand out (file-writes.ts). */
  private readonly ids: writes.IdCounters = { nextFileId: 1, nextChunkId: 1 };
  private diskIdentity: string | undefined;
  private commitChain: Promise<void> = Promise.resolve();
  /** Which files use a name (`ref_postings`) and which define one (`def_postings`). */
  private readonly postings = new NamePostings(() => this.conn, { table: 'ref_postings', names: decodeRefNames, blobs: () => eachFileBlob(this.conn, this.texts, 'refs') });
  private readonly defPostings = new NamePostings(() => this.conn, { table: 'def_postings', names: decodeDefNames, blobs: () => eachFileBlob(this.conn, this.texts, 'defs') });
  private segments: FileSegmentDir | undefined;
  /** Chunk text, in pack files beside index.db (chunk-text.ts). */
  private readonly texts: Packs;
  /** The chunk text packs the last commit (loaded or written) names. */
  private committedPacks: string[] = [];
  /** The text segments the last commit (loaded or written) names. */
  private committedSegments: string[] = [];
  /** Where the segment sequence stood when the pending commit's snapshot named its segments. */
  private segmentMark = 0;

  private constructor(
    private readonly SQL: SqlJsStatic,
    readonly workspaceRoot: string,
    readonly mode: 'read' | 'write',
    private readonly logger: Logger,
    /** The writer lock while this store holds it (write mode). */
    private lock: FileLock | undefined,
  ) {
    this.conn = new Connection(new SQL.Database());
    this.texts = new Packs(this.dir, () => this.conn);
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
    const logger = opts.logger ?? silentLogger;
    const root = path.resolve(workspaceRoot);
    const dir = path.join(root, VLT_DIR);
    // A reader reads the file while the SQLite runtime compiles; a writer reads it under its lock.
    const early = opts.mode === 'read' ? readForReader(path.join(dir, INDEX_FILE)) : undefined;
    early?.catch(() => undefined);
    const SQL = await loadSqlJs();
    let lock: FileLock | undefined;
    if (opts.mode === 'write') {
      await ensurePrivateDir(dir);
      lock = await takeWriterLock(path.join(dir, LOCK_FILE), logger, !fs.existsSync(path.join(dir, INDEX_FILE)));
    }
    const store = new IndexStore(SQL, root, opts.mode, logger, lock);
    try {
      if (opts.mode === 'write') {
        const removed = await removeStaleTempFiles(dir);
        if (removed.length > 0) logger.info(`removed ${removed.length} leftover temporary file(s) from ${dir}`);
      }
      await store.load(early);
    } catch (e) {
      store.close();
      throw e;
    }
    return store;
  }

  private async load(prefetched?: ReturnType<typeof readIfExists>): Promise<void> {
    const file = await (prefetched ?? readIfExists(this.indexPath));
    let db: Database | undefined;
    if (file) {
      const written = writtenIdentity(path.join(this.dir, WRITTEN_FILE)) === file.identity;
      const attempt = openChecked(this.SQL, file.bytes, { version: SCHEMA_VERSION, tables: REQUIRED_TABLES, written });
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
    this.knownGeneration = undefined;
    if (db) {
      this.conn = new Connection(db, this.mode === 'write');
      this.loadedFromDisk = true;
      this.diskIdentity = file?.identity;
      this.dirty = this.mode === 'write' && this.addMissingIndexes();
    } else {
      this.conn = this.createFresh();
      this.loadedFromDisk = false;
      this.diskIdentity = undefined;
      // A new index is written on the first commit even if nothing is added, so that readers
      // find an (empty) index instead of none.
      this.dirty = this.mode === 'write';
    }
    this.committedSegments = this.textSegmentNames();
    // Pack ids are the loaded database's: a writer's own pack, committed, is left to it.
    this.texts.close();
    this.committedPacks = Packs.namesIn(this.conn);
    const maxFile = num(this.conn.first('SELECT max(id) FROM files')?.[0]);
    const maxChunk = num(this.conn.first('SELECT max(id) FROM chunks')?.[0]);
    this.ids.nextFileId = Math.max(maxFile + 1, Number(this.getMeta('next_file_id') ?? 1) || 1);
    this.ids.nextChunkId = Math.max(maxChunk + 1, Number(this.getMeta('next_chunk_id') ?? 1) || 1);
  }

  /** Adds the indexes an index written by an earlier version lacks (see ADDED_INDEXES); whether it added any. */
  private addMissingIndexes(): boolean {
    const have = new Set(this.conn.all("SELECT name FROM sqlite_master WHERE type = 'index'").map((r) => str(r[0])));
    const missing = ADDED_INDEXES.filter((i) => !have.has(i.name));
    if (missing.length === 0) return false;
    this.conn.transaction(() => {
      for (const i of missing) {
        this.conn.run(i.sql, []);
        if (i.replaces) this.conn.run(`DROP INDEX IF EXISTS ${i.replaces}`, []);
      }
    });
    return true;
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
  /**
   * The files a build that has not finished saved so far (its checkpoint is the latest commit:
   * it stopped, or is still running); undefined for a finished build.
   */
  partialBuildFiles(): number | undefined {
    this.assertOpen();
    if (this.getMeta(BUILD_STATE_META) !== 'incomplete') return undefined;
    return num(this.conn.first('SELECT count(*) FROM files')?.[0]);
  }

  get isEmpty(): boolean {
    this.assertOpen();
    return this.conn.first('SELECT 1 FROM files LIMIT 1') === undefined;
  }

  /** Number of commits ever made to this index (0 before the first). */
  get generation(): number {
    // Asked for on every lookup of the index's state (once per symbol while tables are built):
    // read once per loaded database and commit, not one query each time.
    this.knownGeneration ??= Number(this.getMeta('generation') ?? 0) || 0;
    return this.knownGeneration;
  }

  /** The generation in meta, once read; forgotten whenever another database is loaded or committed. */
  private knownGeneration: number | undefined;

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
    const lock = await takeWriterLock(this.lockPath, this.logger, false);
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
    const mark = this.postings.mark();
    const defMark = this.defPostings.mark();
    try {
      return this.conn.transaction(fn);
    } catch (e) {
      this.postings.rollbackTo(mark);
      this.defPostings.rollbackTo(defMark);
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
    const refs = encodeRefsWithNames(parsed.refs);
    const defs = encodeDefsWithNames(parsed.symbols);
    const conn = this.conn;
    const result = this.tx((): ReplaceResult => {
      const existing = writes.existingFile(conn, file.path);
      const oldNames = existing ? this.postings.namesOf(this.blobAt(existing.refs)) : [];
      const oldDefNames = existing ? this.defPostings.namesOf(this.blobAt(existing.defs)) : [];
      const removedChunkIds = existing ? writes.deleteChildren(conn, this.texts, existing) : [];
      const { fileId, chunkIds } = writes.writeFileRows(conn, this.texts, this.ids, file, parsed, chunkHashes, { defs: defs.bytes, refs: refs.bytes }, existing);
      this.symbolsDirty = true;
      this.postings.record(fileId, oldNames, refs.names);
      this.defPostings.record(fileId, oldDefNames, defs.names);
      return { fileId, chunkIds, removedChunkIds };
    });
    this.dirty = true;
    return result;
  }

  /** The bytes at a file blob's place, or undefined (none, or unreadable: its names then count as unknown). */
  private blobAt(place: TextRef | undefined): Uint8Array | undefined {
    if (!place) return undefined;
    try {
      return this.texts.readBytes(place);
    } catch (e) {
      this.logger.warn(`[store] a file's stored names could not be read (${e instanceof Error ? e.message : String(e)}); the name postings will be rebuilt`);
      return CORRUPT_BLOB;
    }
  }

  /** Deletes a file and everything derived from it; returns the ids of its chunks. */
  removeFile(filePath: string): number[] {
    this.assertWritable();
    const conn = this.conn;
    const removed = this.tx(() => {
      const existing = writes.existingFile(conn, filePath);
      if (!existing) return undefined;
      this.postings.record(existing.fileId, this.postings.namesOf(this.blobAt(existing.refs)), []);
      this.defPostings.record(existing.fileId, this.defPostings.namesOf(this.blobAt(existing.defs)), []);
      const chunkIds = writes.deleteChildren(conn, this.texts, existing);
      conn.run('DELETE FROM files WHERE id = ?', [existing.fileId]);
      this.symbolsDirty = true;
      return chunkIds;
    });
    if (removed === undefined) return [];
    this.dirty = true;
    return removed;
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

  /** A large blob is written beside index.db at the commit (sidecar.ts). */
  setBlob(key: string, bytes: Uint8Array): void {
    this.assertWritable();
    this.blobs.set(key, bytes);
    this.dirty = true;
  }

  deleteBlob(key: string): void {
    this.assertWritable();
    this.blobs.delete(key);
    this.dirty = true;
  }

  private readonly blobs = new Blobs(() => this.dir, () => this.conn, (key) => this.getMeta(key));

  setMeta(key: string, value: string): void {
    this.assertWritable();
    if (RESERVED_META.has(key) || key.startsWith('sidecar:')) throw new VltError('INTERNAL', `meta key ${key} is maintained by the store`);
    if (this.getMeta(key) === value) return;
    this.conn.run('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)', [key, value]);
    this.dirty = true;
  }

  deleteMeta(key: string): void {
    this.assertWritable();
    if (RESERVED_META.has(key) || key.startsWith('sidecar:')) throw new VltError('INTERNAL', `meta key ${key} is maintained by the store`);
    if (this.getMeta(key) === undefined) return;
    this.conn.run('DELETE FROM meta WHERE key = ?', [key]);
    this.dirty = true;
  }

  /**
   * Persists the index atomically (and embeddings.db when vectors were added): the database
   * is exported, written to a temporary file, flushed and renamed over the old one, so a crash
   * at any point leaves either the previous or the new complete index. Bumps `generation`.
   * Iterators from {@link allChunksForIndexing} must be finished before committing, because
   * sql.js frees every statement when exporting.
   */
  commit(opts: { symbolTable?: boolean } = {}): Promise<void> {
    try {
      this.assertWritable();
    } catch (e) {
      return Promise.reject(e);
    }
    const next = this.commitChain.then(() => this.commitNow(opts.symbolTable !== false));
    // The chain only orders commits; each caller sees its own commit's error.
    this.commitChain = next.catch(() => undefined);
    return next;
  }

  /**
   * The persisted symbol table and the generation it must carry to describe the symbols as
   * stored; undefined when there is none, or symbols changed since it was written.
   */
  symbolTable(): { source: ByteSource; generation: number; delta?: Uint8Array } | undefined {
    if (this.symbolsDirty) return undefined;
    const generation = Number(this.getMeta(SYMBOLS_GENERATION_META));
    if (!Number.isInteger(generation) || generation <= 0) return undefined;
    const source = this.openBlob(SYMBOLS_BLOB);
    const delta = this.getBlob(SYMBOLS_DELTA_BLOB);
    return source ? { source, generation, ...(delta ? { delta } : {}) } : undefined;
  }

  /**
   * @param symbolTable whether to write the persisted symbol table when symbols changed: a long
   *   build's checkpoints do not (encoding it reads every symbol, at every checkpoint); they drop
   *   the stale one instead, and the build's last commit writes it.
   */
  private async commitNow(symbolTable: boolean): Promise<void> {
    this.assertOpen();
    await this.embeddings.flush();
    if (!this.dirty) return;
    const conn = this.conn;
    if (conn.inTransaction) throw new VltError('INTERNAL', 'cannot commit the index inside a transaction');
    const t0 = performance.now();
    this.postings.flush();
    this.defPostings.flush();
    const tPostings = performance.now();
    const generation = this.generation + 1;
    // The persisted symbol table is rewritten with the symbols it describes, in the same commit
    // (and once for an index that has none yet); its generation says which state it is.
    const symbolsChanged = this.symbolsDirty || !this.hasBlob(SYMBOLS_BLOB);
    let update = symbolsChanged && symbolTable ? this.symbolTableWriter?.(generation) : undefined;
    const wroteTable = update !== undefined;
    const delta = update && 'delta' in update ? update.delta : undefined;
    // A delta keeps the committed table's file; anything else replaces it (or drops it: none).
    const replaced = symbolsChanged && !delta ? [[SYMBOLS_BLOB, update && 'table' in update ? update.table : null] as const] : [];
    const sidecars = await this.blobs.writeSidecars(generation, new Map(replaced));
    // Written, the table is not held through the export (on the Linux kernel, 290 MB of the peak).
    update = undefined;
    conn.transaction(() => {
      const set = conn.stmt('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)');
      set.run(['generation', String(generation)]);
      set.run(['updated_at', new Date().toISOString()]);
      set.run(['next_file_id', String(this.ids.nextFileId)]);
      set.run(['next_chunk_id', String(this.ids.nextChunkId)]);
      if (wroteTable) set.run([SYMBOLS_GENERATION_META, String(generation)]);
      if (delta) conn.run('INSERT OR REPLACE INTO blobs(key, value) VALUES (?, ?)', [SYMBOLS_DELTA_BLOB, delta]);
      else if (symbolsChanged) conn.run('DELETE FROM blobs WHERE key = ?', [SYMBOLS_DELTA_BLOB]);
      sidecars.apply(conn);
    });
    this.knownGeneration = undefined;
    // Chunk text reaches disk before the index.db that names it.
    this.texts.beforeCommit();
    // Free pages (left by moved blobs, re-parsed files) are dropped once they are a fifth of the file.
    const tBefore = performance.now();
    const bytes = conn.export({ vacuumAbove: 0.2 });
    const tExport = performance.now();
    // Cleared before the write so that mutations made while it is in flight stay pending.
    this.dirty = false;
    const wasSymbolsDirty = this.symbolsDirty;
    this.symbolsDirty = false;
    try {
      await writeFileAtomic(this.indexPath, bytes);
    } catch (e) {
      this.dirty = true;
      this.symbolsDirty ||= wasSymbolsDirty;
      throw e;
    }
    const tWrite = performance.now();
    this.logger.debug(
      `[store] commit ${generation}: postings ${ms(tPostings - t0)}, symbol table and sidecars ${ms(tBefore - tPostings)}, export ${ms(tExport - tBefore)} (${(bytes.length / 2 ** 20).toFixed(0)} MiB), write ${ms(tWrite - tExport)}`,
    );
    this.loadedFromDisk = true;
    this.diskIdentity = await this.statIdentity();
    recordWritten(path.join(this.dir, WRITTEN_FILE), this.diskIdentity);
    sidecars.done();
    const segments = this.textSegmentNames();
    this.textSegments.committedNow(segments, this.committedSegments, this.segmentMark);
    this.committedSegments = segments;
    const packs = Packs.namesIn(conn);
    this.texts.prune(packs, this.committedPacks);
    this.committedPacks = packs;
    this.onCommitted?.();
  }

  /**
   * Closes the databases and releases the lock. Uncommitted changes are dropped (with a
   * warning), because a half-done indexing run must not be persisted by accident. Await a
   * pending {@link commit} first: closing releases the lock while its file write may still be
   * in flight.
   */
  close(opts: { discard?: boolean } = {}): void {
    if (this.closed) return;
    this.closed = true;
    if (this.mode === 'write' && this.hasUnsavedChanges && !opts.discard) {
      this.logger.warn('closing the index store with uncommitted changes; they are discarded');
    }
    try {
      this.conn.close();
    } catch {
      // Closing can only fail if the database was already closed.
    }
    this.texts.close();
    this.embeddings.close();
    this.lock?.release();
  }

  // -- queries: files, chunks and skipped files (file-queries.ts) ------------------------------

  listFiles(): FileRow[] {
    this.assertOpen();
    return files.listFiles(this.conn);
  }

  getFile(filePath: string): FileRow | undefined {
    this.assertOpen();
    return files.getFile(this.conn, filePath);
  }

  getFileById(fileId: number): FileRow | undefined {
    this.assertOpen();
    return files.getFileById(this.conn, fileId);
  }

  /** Chunks by id, in the order asked; unknown ids are left out. */
  getChunks(ids: readonly number[]): ChunkRow[] {
    this.assertOpen();
    return files.getChunks(this.conn, this.texts, ids);
  }

  chunksOfFile(fileId: number): ChunkRow[] {
    this.assertOpen();
    return files.chunksOfFile(this.conn, this.texts, fileId);
  }

  /** A file's chunks as ids and line ranges, without their text. */
  chunkRangesOfFile(fileId: number): Array<{ id: number; start: number; end: number }> {
    this.assertOpen();
    return files.chunkRangesOfFile(this.conn, fileId);
  }

  /** {@link chunkRangesOfFile} for many files in a few queries. */
  chunkRangesOfFiles(fileIds: Iterable<number>): Map<number, Array<{ id: number; start: number; end: number }>> {
    this.assertOpen();
    return files.chunkRangesOfFiles(this.conn, fileIds);
  }

  /** Chunks whose text holds `needle` (case-sensitive), in path and line order, at most `limit`. */
  chunksContaining(needle: string, limit = 10_000): ChunkRow[] {
    this.assertOpen();
    return files.chunksContaining(this.conn, this.texts, needle, limit);
  }

  /** When the index was last committed (ISO time), without the counts {@link stats} runs. */
  lastUpdate(): string | null {
    return this.getMeta('updated_at') ?? null;
  }

  /** Ids of the files with a chunk holding any of `needles` (case-sensitive), in path order. */
  filesContainingAny(needles: readonly string[]): number[] {
    this.assertOpen();
    return files.filesContainingAny(this.conn, this.texts, needles);
  }

  /** Every chunk's id and enriched-text hash (the embedding cache key), without its text. */
  chunkHashes(): Array<{ id: number; hash: string }> {
    this.assertOpen();
    return files.chunkHashes(this.conn);
  }

  /**
   * Every chunk with its file's path and language, for rebuilding the search index or the
   * embeddings. Rows are streamed from one statement; finish (or break out of) the loop before
   * calling {@link commit}.
   */
  *allChunksForIndexing(): Generator<IndexableChunk, void, undefined> {
    this.assertOpen();
    yield* files.allChunks(this.conn, this.texts);
  }

  getSkipped(): SkippedRow[] {
    this.assertOpen();
    return files.getSkipped(this.conn);
  }

  // -- queries: symbols, references and imports (symbol-queries.ts) -------------------------

  /**
   * Symbols named `name` (exactly, or as a prefix), with their file paths. A qualified name
   * such as `Writer.Close` or `io::Read` matches symbols whose qualified name equals it or ends
   * with it after a separator.
   */
  findSymbols(name: string, opts: { prefix?: boolean; limit?: number } = {}): SymbolRow[] {
    this.assertOpen();
    return symbols.findSymbols(this.conn, this.texts, this.defPostings, name, opts);
  }

  symbolsOfFile(fileId: number): SymbolRow[] {
    this.assertOpen();
    return symbols.symbolsOfFile(this.conn, this.texts, fileId);
  }

  /** Every definition; with `generated: false`, none of generated files. */
  allSymbols(opts: { generated?: boolean } = {}): SymbolRow[] {
    this.assertOpen();
    return symbols.allSymbols(this.conn, this.texts, opts);
  }

  /** {@link allSymbols} one at a time, without holding them all (see symbol-queries.ts). */
  *eachSymbol(opts: { generated?: boolean } = {}): Generator<SymbolRow, void, undefined> {
    this.assertOpen();
    yield* symbols.eachSymbol(this.conn, this.texts, opts);
  }

  /** A file's indexed references; with `onlyName`, just the uses of that name (decoded alone). */
  getRefs(fileId: number, onlyName?: string): SymbolRef[] {
    this.assertOpen();
    return symbols.getRefs(this.conn, this.texts, fileId, onlyName);
  }

  /** Files that use the identifier `name` at least once, by path. */
  filesReferencing(name: string): Array<{ fileId: number; path: string }> {
    this.assertOpen();
    return symbols.pathsOf(this.conn, this.postings.filesUsing(name));
  }

  /** How many files use the identifier `name`: the posting's length, with no path looked up. */
  countFilesReferencing(name: string): number {
    this.assertOpen();
    return this.postings.filesUsing(name).length;
  }

  /** {@link countFilesReferencing} for many names in a few queries. */
  countFilesReferencingMany(names: Iterable<string>): Map<string, number> {
    this.assertOpen();
    return new Map([...this.postings.filesUsingMany(names)].map(([name, ids]) => [name, ids.length]));
  }

  /** Every use of `name`, in path and line order, up to `limit`. */
  findRefs(name: string, limit = 1000): RefLocation[] {
    return symbols.findRefs(this.conn, this.texts, this.filesReferencing(name), name, limit);
  }

  /**
   * Every referenced name with the ids of the files that use it (ascending), from the posting
   * table: the whole definition→reference graph in one pass, without decoding any file's refs.
   */
  allRefPostings(): Array<{ name: string; fileIds: number[] }> {
    this.assertOpen();
    return this.postings.all();
  }

  /** Structured imports of every file, for the code graph: one pass, no refs decoded. */
  allImportSpecs(): Map<number, ImportSpec[]> {
    this.assertOpen();
    return symbols.allImportSpecs(this.conn);
  }

  /** Structured imports of one file. */
  importSpecsOf(fileId: number): ImportSpec[] {
    this.assertOpen();
    return symbols.importSpecsOf(this.conn, fileId);
  }

  // -- blobs, meta and statistics ------------------------------------------------------------

  hasBlob(key: string): boolean {
    this.assertOpen();
    return this.blobs.has(key);
  }

  /** A blob; a sidecar blob whose file is gone (pruned after later commits) is none. */
  getBlob(key: string): Uint8Array | undefined {
    this.assertOpen();
    return this.blobs.get(key);
  }

  /**
   * Where the search index's text segments live: files beside index.db (a reader opens them,
   * and keeps the segments it writes itself in memory).
   */
  get textSegments(): FileSegmentDir {
    return (this.segments ??= new FileSegmentDir(this.dir, this.mode === 'write'));
  }

  /** Records the text segments the next commit's search snapshot names (files the cleanup after it keeps). */
  setTextSegments(names: readonly string[]): void {
    this.setMeta(TEXT_SEGMENTS_META, JSON.stringify(names));
    this.segmentMark = this.textSegments.mark();
  }

  private textSegmentNames(): string[] {
    try {
      const v = JSON.parse(this.getMeta(TEXT_SEGMENTS_META) ?? '[]') as unknown;
      return Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : [];
    } catch {
      return [];
    }
  }

  /** A blob to be read by range (see {@link Blobs.open}); the caller closes it. */
  openBlob(key: string): ByteSource | undefined {
    this.assertOpen();
    return this.blobs.open(key);
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
    // Files beside index.db: sidecars, chunk text packs, text segments.
    const sidecarBytes = this.blobs.sidecarBytes() + count('SELECT coalesce(sum(bytes), 0) FROM text_packs') + totalBytes(this.textSegmentNames().map((n) => path.join(this.dir, n)), 0);
    const bytesOnDisk = totalBytes([this.indexPath, this.embeddingsPath], sidecarBytes);
    return {
      files: count('SELECT count(*) FROM files'),
      chunks: count('SELECT count(*) FROM chunks'),
      symbols: count('SELECT coalesce(sum(def_count), 0) FROM files'),
      refs: count('SELECT coalesce(sum(ref_count), 0) FROM files'),
      bytesOnDisk,
      sidecarBytes,
      languages,
      updatedAt: this.lastUpdate(),
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

function ms(n: number): string {
  return `${Math.round(n)} ms`;
}
