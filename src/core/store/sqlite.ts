/**
 * sql.js (SQLite compiled to WebAssembly): loading the runtime once per process, and the
 * connection every database of the store goes through (cached statements, nested transactions
 * as savepoints, export), with the helpers that read and bind its values.
 */
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic, SqlValue, Statement } from 'sql.js';
import { VltError, errorMessage } from '../errors';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

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

export function num(v: SqlValue | undefined): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

export function str(v: SqlValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return utf8Decoder.decode(v);
  return v === null || v === undefined ? '' : String(v);
}

export function optStr(v: SqlValue | undefined): string | undefined {
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

export const utf8Scratch = new Utf8Scratch();

/**
 * A sql.js connection with a cache of prepared statements. sql.js frees every statement when
 * the database is exported, so the cache is dropped and the connection settings re-applied
 * after each export.
 */
/** Free pages below this many are not worth a VACUUM (2 MB at 8 KB pages). */
const MIN_VACUUM_PAGES = 256;

export class Connection {
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

  /**
   * Serialises the database; see the class comment for why the cache is dropped. With
   * `vacuumAbove`, a database whose free pages are more than that share of it is rebuilt
   * without them first: export writes free pages too, and every reader loads them.
   */
  export(opts: { vacuumAbove?: number } = {}): Uint8Array {
    if (this.txDepth > 0) throw new VltError('INTERNAL', 'cannot persist the index inside a transaction');
    if (this.sessionTx) {
      this.db.exec('COMMIT');
      this.sessionTx = false;
    }
    if (opts.vacuumAbove !== undefined) {
      const free = Number(this.db.exec('PRAGMA freelist_count')[0]?.values[0]?.[0] ?? 0);
      const pages = Number(this.db.exec('PRAGMA page_count')[0]?.values[0]?.[0] ?? 0);
      if (free >= MIN_VACUUM_PAGES && free > pages * opts.vacuumAbove) {
        try {
          this.db.exec('VACUUM');
        } catch {
          // A statement still stepping: the next commit compacts instead.
        }
      }
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

