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
 *
 * Writes that must be cheap (a session record after every MCP tool call) go to a journal
 * instead: `memory-journal.jsonl`, appended under the same lock, one JSON record per line, each
 * preceded by a newline so that a record torn by a kill cannot swallow the next one. The journal
 * is folded into the database (in order, once, under the lock) before anything reads what it
 * holds; see {@link MemoryDb.foldJournal}.
 *
 * Texts that only accumulate (thread entries, session digests) lie in an append-only text pack
 * beside it (text-pack.ts), so that the file rewritten on each write stays small.
 */
import { ensurePrivateDir } from '../store/state-dir';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import type { BindParams, Database, SqlValue } from 'sql.js';
import { VltError } from '../errors';
import type { Logger } from '../ports';
import { removeStaleTempFiles, writeFileAtomic } from '../store/atomic';
import { describeStaleLock, waitForLock } from '../store/lock';
import { VLT_DIR } from '../store/schema';
import { loadSqlJs } from '../store/sqlite';
import { TextPack, type TextRef } from './text-pack';

export const MEMORY_FILE = 'memory.db';
export const MEMORY_LOCK_FILE = 'memory.lock';
export const MEMORY_JOURNAL_FILE = 'memory-journal.jsonl';
/**
 * Thread entry vectors live in a file of their own: they are large (a 1,536-dimension vector
 * is 6 KB) and written only by a seek, and every push rewrites memory.db whole, so keeping
 * them there would make each push pay for every vector ever computed.
 */
export const VECTORS_FILE = 'memory-vectors.db';
export const VECTORS_LOCK_FILE = 'memory-vectors.lock';
/** The text of thread entries and session digests, appended (see text-pack.ts). */
export const TEXT_PACK_FILE = 'memory-text.pack';

/** Version of the table layout. A file of another version is moved aside and started afresh. */
export const MEMORY_SCHEMA_VERSION = 1;

/** How long a writer waits for another before it gives up: far above any real write. */
const LOCK_TIMEOUT_MS = 15_000;

/** Both databases keep their schema version and settings here. */
const META_TABLE = 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);';

const SCHEMA = `
${META_TABLE}
CREATE TABLE IF NOT EXISTS threads (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  summary TEXT,
  summary_kind TEXT,
  summary_state TEXT,
  last_summarized_node_id INTEGER NOT NULL DEFAULT 0,
  summarized_at INTEGER,
  summary_model TEXT
);
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  thread TEXT NOT NULL,
  seq INTEGER NOT NULL,
  author TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  text_at INTEGER,
  text_len INTEGER,
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
  created_at INTEGER NOT NULL,
  text_at INTEGER,
  text_len INTEGER
);
`;

/**
 * The tables whose text may lie in the text pack (`text_at`, `text_len`; `text` is then empty).
 * A file written before the pack existed gets the two columns when loaded: its rows keep their
 * text inline, which every reader still takes as it is.
 */
const PACKED_TABLES = ['entries', 'session_summaries'] as const;

/** Vectors by the hash of the text they embed, so that they never depend on entry ids. */
const VECTORS_SCHEMA = `
${META_TABLE}
CREATE TABLE IF NOT EXISTS vectors (
  hash TEXT NOT NULL,
  model TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (hash, model)
);
`;

/** Which of the two memory files a {@link MemoryDb} holds. */
export type MemoryFileKind = 'memory' | 'vectors';

interface Layout {
  file: string;
  lock: string;
  schema: string;
  /** The append-only journal of deferred records, for the files that have one. */
  journal?: string;
  /** The append-only text pack, for the files that have one. */
  pack?: string;
}

const LAYOUT: Record<MemoryFileKind, Layout> = {
  memory: { file: MEMORY_FILE, lock: MEMORY_LOCK_FILE, schema: SCHEMA, journal: MEMORY_JOURNAL_FILE, pack: TEXT_PACK_FILE },
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
    private readonly layout: Layout,
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

  get journalFile(): string {
    if (!this.layout.journal) throw new VltError('INTERNAL', `${this.layout.file} has no journal`);
    return path.join(this.dir, this.layout.journal);
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
    return this.locked(async () => {
      const db = await this.current();
      const result = transact(db, fn);
      await this.commit(db);
      return result;
    });
  }

  /**
   * Like {@link write}, with `texts` appended to the text pack first (under the same lock, and
   * flushed before the transaction commits): `fn` gets where each lies, to store in the rows'
   * `text_at` and `text_len`. When `fn` throws or returns without using them, the appended bytes
   * stay unreferenced, which costs disk only.
   */
  async writeWithTexts<T>(texts: readonly string[], fn: (tx: Tx, refs: TextRef[]) => T): Promise<T> {
    const pack = this.pack();
    return this.locked(async () => {
      const refs = await pack.append(texts);
      const db = await this.current();
      const result = transact(db, (tx) => fn(tx, refs));
      await this.commit(db);
      return result;
    });
  }

  /**
   * Forgets rows and their texts: under the lock, erases from the text pack the ranges `select`
   * names (rows with `text_at`, `text_len`), then runs `remove` in a transaction and commits. The
   * texts go first, so that nothing forgotten stays readable even if the commit fails.
   */
  async writeForgetting(select: (tx: Tx) => Row[], remove: (tx: Tx) => void): Promise<void> {
    const pack = this.pack();
    await this.locked(async () => {
      const db = await this.current();
      const rows = select(txOf(db)).filter((r) => r.text_at !== null && r.text_at !== undefined);
      await pack.erase(rows.map((r) => ({ at: num(r.text_at), len: num(r.text_len) })));
      transact(db, remove);
      await this.commit(db);
    });
  }

  /**
   * The rows with the text of those whose text lies in the pack read into `text` (in place; the
   * same array is returned). Rows read with `text_at` and `text_len` selected; others are left.
   */
  async resolveTexts<R extends Row>(rows: R[]): Promise<R[]> {
    const packed = rows.filter((r) => r.text_at !== null && r.text_at !== undefined);
    if (packed.length === 0) return rows;
    const texts = await this.pack().read(packed.map((r) => ({ at: num(r.text_at), len: num(r.text_len) })));
    packed.forEach((r, i) => {
      (r as Row).text = texts[i]!;
    });
    return rows;
  }

  private pack(): TextPack {
    if (!this.layout.pack) throw new VltError('INTERNAL', `${this.layout.file} has no text pack`);
    return new TextPack(path.join(this.dir, this.layout.pack));
  }

  /**
   * Appends records to the journal under the lock and returns the journal's size afterwards,
   * so that the caller can decide when to fold. Costs an append, not a rewrite of the store.
   */
  async appendJournal(records: readonly JournalRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const text = records.map((r) => `\n${JSON.stringify(r)}`).join('');
    return this.locked(async () => {
      let fh: FileHandle | undefined;
      try {
        fh = await fsp.open(this.journalFile, 'a');
        await fh.writeFile(text, 'utf8');
        return (await fh.stat()).size;
      } catch (e) {
        throw new VltError('IO', `cannot append to ${this.journalFile}: ${String(e)}`, { path: this.journalFile }, { cause: e });
      } finally {
        await fh?.close();
      }
    });
  }

  /** Whether the journal holds records not yet folded into the database. */
  async journalPending(): Promise<boolean> {
    const size = await fsp.stat(this.journalFile).then(
      (st) => st.size,
      () => 0,
    );
    return size > 0;
  }

  /**
   * Folds the journal into the database: under the lock, reads every record (a torn or
   * unreadable line is skipped with a warning), drops the ones an earlier fold already applied
   * (a fold killed between writing the database and emptying the journal leaves them there; the
   * id of the last one applied is kept in `meta`), lets `prepare` ready the rest outside the
   * transaction (it may yield), applies them with `apply` in one transaction, writes the file and
   * empties the journal. `extra` records are applied after the journal's, in the same
   * transaction, without going through the file: a write that must return what it wrote uses
   * them. Returns `apply`'s result, or undefined when there was nothing to fold.
   */
  async foldJournal<P, R>(
    prepare: (records: JournalRecord[]) => Promise<P>,
    apply: (tx: Tx, prepared: P) => R,
    extra: readonly JournalRecord[] = [],
  ): Promise<R | undefined> {
    const journal = this.journalFile;
    if (extra.length === 0 && !(await this.journalPending())) return undefined;
    return this.locked(async () => {
      let raw = '';
      try {
        raw = await fsp.readFile(journal, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new VltError('IO', `cannot read ${journal}: ${String(e)}`, { path: journal }, { cause: e });
      }
      const { records, unreadable } = parseJournal(raw);
      if (unreadable > 0) this.logger.warn(`${path.basename(journal)}: skipped ${unreadable} torn or unreadable record(s)`);
      const db = await this.current();
      const last = str(db.exec("SELECT value FROM meta WHERE key = 'journal_last'")[0]?.values[0]?.[0]);
      const seen = last ? records.findIndex((r) => r.u === last) : -1;
      const fresh = records.slice(seen + 1);
      let result: R | undefined;
      if (fresh.length + extra.length > 0) {
        const prepared = await prepare([...fresh, ...extra]);
        const newLast = fresh.at(-1)?.u;
        result = transact(db, (tx) => {
          const r = apply(tx, prepared);
          if (newLast) tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_last', ?)", [newLast]);
          return r;
        });
        await this.commit(db);
      }
      if (raw.length > 0) {
        await fsp.truncate(journal, 0).catch((e: unknown) => {
          // The records stay and are recognised as applied by the next fold.
          this.logger.warn(`cannot empty ${journal}: ${String(e)}`);
        });
      }
      return result;
    });
  }

  /** Runs `fn` holding the cross-process lock of this file. */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    this.ensureOpen();
    await ensurePrivateDir(this.dir);
    const lock = await waitForLock(this.lockFile, {
      timeoutMs: LOCK_TIMEOUT_MS,
      onTakeOver: (stale) => this.logger.warn(`taking over ${describeStaleLock(stale)}: ${this.lockFile}`),
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
      return await fn();
    } finally {
      lock.release();
    }
  }

  /** Writes the committed in-memory state to disk, atomically. */
  private async commit(db: Database): Promise<void> {
    try {
      await writeFileAtomic(this.file, db.export());
      this.stamp = await statStamp(this.file);
    } catch (e) {
      // Memory now holds a change the disk does not: forget it, so the next call reloads.
      this.forget();
      throw e;
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
        if (this.layout.pack) addPackColumns(db);
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

/** Gives a file written before the text pack (and the summary's model) existed the columns they need (in memory; saved with the next write). */
function addPackColumns(db: Database): void {
  const columnsOf = (table: string) => new Set((db.exec(`PRAGMA table_info(${table})`)[0]?.values ?? []).map((r) => String(r[1])));
  for (const table of PACKED_TABLES) {
    const columns = columnsOf(table);
    if (columns.size === 0 || columns.has('text_at')) continue;
    db.run(`ALTER TABLE ${table} ADD COLUMN text_at INTEGER`);
    db.run(`ALTER TABLE ${table} ADD COLUMN text_len INTEGER`);
  }
  // Which model wrote a thread's summary (a summary is redone when the configured model changes).
  const threads = columnsOf('threads');
  if (threads.size > 0 && !threads.has('summary_model')) db.run('ALTER TABLE threads ADD COLUMN summary_model TEXT');
}

/** One record of the journal: `u` is its unique id; the rest belongs to whoever wrote it. */
export interface JournalRecord {
  u: string;
  [field: string]: unknown;
}

function parseJournal(raw: string): { records: JournalRecord[]; unreadable: number } {
  const records: JournalRecord[] = [];
  let unreadable = 0;
  for (const line of raw.split('\n')) {
    if (line.length === 0) continue;
    try {
      const r = JSON.parse(line) as unknown;
      if (r && typeof r === 'object' && typeof (r as JournalRecord).u === 'string') records.push(r as JournalRecord);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { records, unreadable };
}

/** Runs `fn` in a transaction: committed when it returns, rolled back when it throws. */
function transact<T>(db: Database, fn: (tx: Tx) => T): T {
  db.exec('BEGIN');
  try {
    const result = fn(txOf(db));
    db.exec('COMMIT');
    return result;
  } catch (e) {
    db.exec('ROLLBACK');
    throw e;
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
