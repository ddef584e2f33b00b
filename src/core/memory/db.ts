/**
 * `.vlt/memory.db`: threads, session contexts and their summaries, in a sql.js database of its
 * own. It is kept apart from `index.db` because the index can be hundreds of megabytes and is
 * rewritten whole on every commit, while a thread push must finish in milliseconds.
 *
 * sql.js holds the database in memory, so a write is: take the short cross-process lock
 * (`.vlt/memory.lock`), reload the file if another process replaced it since we last looked,
 * apply the change in a transaction, export, and replace the file atomically. Reloading under
 * the lock is what makes concurrent writers safe: each one changes the latest complete file,
 * so no entry is ever lost. Readers take no lock; they reload when the file changed.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { BindParams, Database, SqlValue } from 'sql.js';
import { VltError } from '../errors';
import type { Logger } from '../ports';
import { acquireFileLock, removeStaleTempFiles, writeFileAtomic } from '../store/atomic';
import { loadSqlJs, VLT_DIR } from '../store/store';

export const MEMORY_FILE = 'memory.db';
export const MEMORY_LOCK_FILE = 'memory.lock';
/**
 * Thread entry vectors live in a file of their own: they are large (a 1,536-dimension vector
 * is 6 KB) and written only by a seek, and every push rewrites memory.db whole, so keeping
 * them there would make each push pay for every vector ever computed.
 */
export const VECTORS_FILE = 'memory-vectors.db';
export const VECTORS_LOCK_FILE = 'memory-vectors.lock';

/** Version of the table layout. A file of another version is moved aside and started afresh. */
export const MEMORY_SCHEMA_VERSION = 1;

/** How long a writer waits for another before it gives up: far above any real write. */
const LOCK_TIMEOUT_MS = 15_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS threads (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  summary TEXT,
  summary_kind TEXT,
  summary_state TEXT,
  last_summarized_node_id INTEGER NOT NULL DEFAULT 0,
  summarized_at INTEGER
);
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  thread TEXT NOT NULL,
  seq INTEGER NOT NULL,
  author TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (thread, seq)
);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  summary TEXT,
  summary_kind TEXT,
  summary_tokens INTEGER NOT NULL DEFAULT 0,
  summary_state TEXT,
  compression_count INTEGER NOT NULL DEFAULT 0,
  focus TEXT NOT NULL DEFAULT '{}',
  last_exchange INTEGER NOT NULL DEFAULT 0,
  last_kind TEXT,
  open_question INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS session_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  exchange INTEGER NOT NULL,
  kind TEXT NOT NULL,
  author TEXT NOT NULL,
  tool TEXT,
  text TEXT NOT NULL,
  meta TEXT,
  tokens INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS session_events_by_session ON session_events (session, id);
CREATE TABLE IF NOT EXISTS session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  from_exchange INTEGER NOT NULL,
  to_exchange INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`;

/** Vectors by the hash of the text they embed, so that they never depend on entry ids. */
const VECTORS_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
  hash TEXT NOT NULL,
  model TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (hash, model)
);
`;

/** Which of the two memory files a {@link MemoryDb} holds. */
export type MemoryFileKind = 'memory' | 'vectors';

const LAYOUT: Record<MemoryFileKind, { file: string; lock: string; schema: string }> = {
  memory: { file: MEMORY_FILE, lock: MEMORY_LOCK_FILE, schema: SCHEMA },
  vectors: { file: VECTORS_FILE, lock: VECTORS_LOCK_FILE, schema: VECTORS_SCHEMA },
};

export type Row = Record<string, SqlValue>;

/** A thin, typed view of one connection, for the code that runs inside read and write. */
export interface Tx {
  all(sql: string, params?: BindParams): Row[];
  first(sql: string, params?: BindParams): Row | undefined;
  run(sql: string, params?: BindParams): void;
  /** Row id of the last insert. */
  lastId(): number;
}

/** Identity of the file as last seen: a replaced file has a new inode, and likely size and mtime. */
interface Stamp {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

export class MemoryDb {
  private db: Database | undefined;
  private stamp: Stamp | undefined;
  /** Serialises loads so that two concurrent readers do not both parse the file. */
  private loading: Promise<void> | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
    private readonly layout: { file: string; lock: string; schema: string },
  ) {}

  /**
   * Opens (without creating) a memory file of a workspace: `memory.db` by default, or the
   * entry vectors' file. The file appears on the first write.
   */
  static async open(workspaceRoot: string, logger: Logger, kind: MemoryFileKind = 'memory'): Promise<MemoryDb> {
    const dir = path.join(workspaceRoot, VLT_DIR);
    const mdb = new MemoryDb(dir, logger, LAYOUT[kind]);
    await loadSqlJs();
    return mdb;
  }

  /** Another memory file of the same workspace (the entry vectors' beside memory.db). */
  sibling(kind: MemoryFileKind): MemoryDb {
    return new MemoryDb(this.dir, this.logger, LAYOUT[kind]);
  }

  get file(): string {
    return path.join(this.dir, this.layout.file);
  }

  get lockFile(): string {
    return path.join(this.dir, this.layout.lock);
  }

  /** Runs `fn` over the latest committed state. Takes no lock. */
  async read<T>(fn: (tx: Tx) => T): Promise<T> {
    const db = await this.current();
    return fn(txOf(db));
  }

  /**
   * Runs `fn` in a transaction over the latest committed state and commits it to disk before
   * returning; when `fn` throws, nothing changes. Waits for other writers (any process).
   */
  async write<T>(fn: (tx: Tx) => T): Promise<T> {
    this.ensureOpen();
    await fsp.mkdir(this.dir, { recursive: true }).catch((e: unknown) => {
      throw new VltError('IO', `cannot create ${this.dir}: ${String(e)}`, { path: this.dir }, { cause: e });
    });
    const release = await acquireFileLock(this.lockFile, {
      timeoutMs: LOCK_TIMEOUT_MS,
      onTakeOver: (why) => this.logger.warn(why),
      busyError: (holder) =>
        new VltError(
          'MEMORY_LOCKED',
          holder
            ? `the memory store ${this.file} stayed locked by pid ${holder.pid} on ${holder.hostname} for ${LOCK_TIMEOUT_MS / 1000} s; if that process no longer runs, delete ${this.lockFile}`
            : `the memory store ${this.file} stayed locked for ${LOCK_TIMEOUT_MS / 1000} s; if no vlt process runs, delete ${this.lockFile}`,
          { lockPath: this.lockFile },
        ),
    });
    try {
      const db = await this.current();
      db.exec('BEGIN');
      let result: T;
      try {
        result = fn(txOf(db));
        db.exec('COMMIT');
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
      try {
        await writeFileAtomic(this.file, db.export());
        this.stamp = await statStamp(this.file);
      } catch (e) {
        // Memory now holds a change the disk does not: forget it, so the next call reloads.
        this.forget();
        throw e;
      }
      return result;
    } finally {
      await release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.forget();
  }

  private ensureOpen(): void {
    if (this.closed) throw new VltError('INTERNAL', 'the memory store is closed');
  }

  private forget(): void {
    this.db?.close();
    this.db = undefined;
    this.stamp = undefined;
  }

  /** The database as on disk now: the loaded copy when the file has not changed, else a reload. */
  private async current(): Promise<Database> {
    this.ensureOpen();
    while (this.loading) await this.loading;
    const stamp = await statStamp(this.file).catch(() => undefined);
    if (this.db && sameStamp(stamp, this.stamp)) return this.db;
    const load = this.load(stamp);
    this.loading = load;
    try {
      await load;
    } finally {
      this.loading = undefined;
    }
    return this.db!;
  }

  private async load(stamp: Stamp | undefined): Promise<void> {
    const SQL = await loadSqlJs();
    this.forget();
    let bytes: Uint8Array | undefined;
    if (stamp) {
      try {
        bytes = await fsp.readFile(this.file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new VltError('IO', `cannot read ${this.file}: ${String(e)}`, { path: this.file }, { cause: e });
        }
      }
    }
    let db: Database | undefined;
    if (bytes && bytes.length > 0) {
      try {
        db = new SQL.Database(bytes);
        const version = Number(db.exec("SELECT value FROM meta WHERE key = 'schema_version'")[0]?.values[0]?.[0] ?? 0);
        if (version !== MEMORY_SCHEMA_VERSION) throw new Error(`schema version ${version}, expected ${MEMORY_SCHEMA_VERSION}`);
      } catch (e) {
        db?.close();
        db = undefined;
        await this.moveAside(e);
      }
    }
    if (!db) {
      db = new SQL.Database();
      db.exec(this.layout.schema);
      db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", [String(MEMORY_SCHEMA_VERSION)]);
    }
    this.db = db;
    this.stamp = bytes ? stamp : undefined;
    // Leftovers of writers killed mid-write cost disk only; cleaning on load keeps them bounded.
    void removeStaleTempFiles(this.dir);
  }

  /**
   * Keeps an unusable file for a post-mortem instead of deleting what may be someone's notes,
   * and says where it went. Runs only on a read path, so a concurrent writer may have replaced
   * the file since: the rename then moves the newer file aside, which the next load repeats
   * harmlessly because a fresh file always carries the right version.
   */
  private async moveAside(cause: unknown): Promise<void> {
    const aside = `${this.file}.unusable-${Date.now()}`;
    try {
      await fsp.rename(this.file, aside);
      this.logger.warn(`memory store ${this.file} cannot be used (${cause instanceof Error ? cause.message : String(cause)}); moved it to ${path.basename(aside)} and started an empty one`);
    } catch {
      // Someone else moved or replaced it already.
    }
  }
}

function txOf(db: Database): Tx {
  return {
    all(sql, params) {
      const stmt = db.prepare(sql);
      try {
        if (params) stmt.bind(params);
        const rows: Row[] = [];
        while (stmt.step()) rows.push(stmt.getAsObject());
        return rows;
      } finally {
        stmt.free();
      }
    },
    first(sql, params) {
      const stmt = db.prepare(sql);
      try {
        if (params) stmt.bind(params);
        return stmt.step() ? stmt.getAsObject() : undefined;
      } finally {
        stmt.free();
      }
    },
    run(sql, params) {
      db.run(sql, params);
    },
    lastId() {
      return Number(db.exec('SELECT last_insert_rowid()')[0]?.values[0]?.[0] ?? 0);
    },
  };
}

async function statStamp(file: string): Promise<Stamp> {
  const s = await fsp.stat(file, { bigint: true });
  return { ino: s.ino, size: s.size, mtimeNs: s.mtimeNs };
}

function sameStamp(a: Stamp | undefined, b: Stamp | undefined): boolean {
  if (!a || !b) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** A column as a string ('' for NULL). */
export function str(v: SqlValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return v === null || v === undefined ? '' : String(v);
}

export function num(v: SqlValue | undefined): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

export function optStr(v: SqlValue | undefined): string | undefined {
  return v === null || v === undefined ? undefined : str(v);
}
