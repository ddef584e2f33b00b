/**
 * A name postings table (which files use a name: `ref_postings`; which files define one:
 * `def_postings`), kept up to date lazily. Each stored or removed file logs the names it lost
 * and gained; the log is folded into the table, one read and one write per touched name, before
 * the next commit (see the layout notes in schema.ts for why postings are not one row per use).
 */
import { decodePosting, encodePosting } from './refs-codec';
import { str, type Connection } from './sqlite';

/** Names per query of a batched read (well under SQLite's limit on bound parameters). */
const BATCH = 500;

interface LogEntry {
  fileId: number;
  removed: readonly string[];
  added: readonly string[];
}

/** Which postings table, and the files' blobs it indexes. */
export interface PostingsSource {
  table: 'ref_postings' | 'def_postings';
  /** The distinct names of one blob. */
  names(blob: Uint8Array): string[];
  /** Every file's blob, with its id (the repair path). */
  blobs(): Iterable<{ fileId: number; blob: Uint8Array }>;
}

export class NamePostings {
  /**
   * Reference names each mutated file lost and gained since the postings were last folded in,
   * in mutation order. Truncated when a transaction rolls back.
   */
  private log: LogEntry[] = [];
  /** Set when a file's old reference blob was unreadable, so its old names are unknown. */
  private needRebuild = false;

  constructor(
    private readonly conn: () => Connection,
    private readonly source: PostingsSource,
  ) {}

  /** Whether anything is waiting to be folded into the table. */
  get pending(): boolean {
    return this.needRebuild || this.log.length > 0;
  }

  /** A position in the log, to go back to with {@link rollbackTo} when a transaction fails. */
  mark(): number {
    return this.log.length;
  }

  rollbackTo(mark: number): void {
    this.log.length = mark;
  }

  record(fileId: number, removed: readonly string[], added: readonly string[]): void {
    this.log.push({ fileId, removed, added });
  }

  /** The names a file's stored blob holds; a damaged blob makes the next fold rebuild everything. */
  namesOf(blob: Uint8Array | undefined): string[] {
    if (!blob) return [];
    try {
      return this.source.names(blob);
    } catch {
      // A damaged blob cannot say which postings mention the file; rebuild them all.
      this.needRebuild = true;
      return [];
    }
  }

  /**
   * Folds the log into the postings table. Names are applied in sorted order so the table's
   * B-trees grow by appends during a full build. Must run outside transactions, because the
   * log is cleared once the table holds its changes.
   */
  flush(): void {
    if (this.needRebuild) {
      this.rebuild();
      return;
    }
    if (this.log.length === 0) return;
    // Per name, the file ids in mutation order: positive = gained, negative = lost.
    const ops = new Map<string, number[]>();
    const push = (name: string, op: number): void => {
      const list = ops.get(name);
      if (list) list.push(op);
      else ops.set(name, [op]);
    };
    for (const e of this.log) {
      for (const n of e.removed) push(n, -e.fileId);
      for (const n of e.added) push(n, e.fileId);
    }
    const conn = this.conn();
    conn.transaction(() => {
      const table = this.source.table;
      const get = conn.stmt(`SELECT files FROM ${table} WHERE name = ?`);
      const insert = conn.stmt(`INSERT INTO ${table}(name, files) VALUES (?, ?)`);
      const update = conn.stmt(`UPDATE ${table} SET files = ? WHERE name = ?`);
      const del = conn.stmt(`DELETE FROM ${table} WHERE name = ?`);
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
    this.log = [];
  }

  /** Recomputes every posting from the files' blobs (repair path). */
  private rebuild(): void {
    const conn = this.conn();
    const byName = new Map<string, number[]>();
    const { table } = this.source;
    for (const { fileId, blob } of this.safeBlobs()) {
      for (const n of this.safeNames(blob)) {
        const list = byName.get(n);
        if (list) list.push(fileId);
        else byName.set(n, [fileId]);
      }
    }
    conn.transaction(() => {
      conn.run(`DELETE FROM ${table}`, []);
      const insert = conn.stmt(`INSERT INTO ${table}(name, files) VALUES (?, ?)`);
      for (const name of [...byName.keys()].sort()) insert.run([name, encodePosting(byName.get(name)!)]);
    });
    this.log = [];
    this.needRebuild = false;
  }

  /** Every file's blob, one at a time; an unreadable pack ends the list (what it held cannot be indexed). */
  private *safeBlobs(): Generator<{ fileId: number; blob: Uint8Array }, void, undefined> {
    const it = this.source.blobs()[Symbol.iterator]();
    for (;;) {
      let next: IteratorResult<{ fileId: number; blob: Uint8Array }>;
      try {
        next = it.next();
      } catch {
        return;
      }
      if (next.done) return;
      yield next.value;
    }
  }

  private safeNames(blob: Uint8Array): string[] {
    try {
      return this.source.names(blob);
    } catch {
      return [];
    }
  }

  /** Ids of the files that use `name`, ascending, pending changes included. */
  filesUsing(name: string): number[] {
    const conn = this.conn();
    if (this.needRebuild && !conn.inTransaction) this.flush();
    if (this.needRebuild) {
      // Inside a transaction with unknown old names: scan every file's names (slow, rare).
      const ids: number[] = [];
      for (const { fileId, blob } of this.safeBlobs()) if (this.safeNames(blob).includes(name)) ids.push(fileId);
      return ids;
    }
    if (this.log.length > 0 && !conn.inTransaction) this.flush();
    const blob = conn.first(`SELECT files FROM ${this.source.table} WHERE name = ?`, [name])?.[0];
    const ids = blob instanceof Uint8Array ? decodePosting(blob) : [];
    if (this.log.length === 0) return ids;
    // Inside a transaction the log cannot be folded in yet (a rollback would lose it), so this
    // name's pending changes are applied to the answer only.
    const ops: number[] = [];
    for (const e of this.log) {
      if (e.removed.includes(name)) ops.push(-e.fileId);
      if (e.added.includes(name)) ops.push(e.fileId);
    }
    return applyOps(ids, ops);
  }

  /**
   * {@link filesUsing} for many names: one query per {@link BATCH} names instead of one per
   * name (a search ranks hundreds of definitions by how widely they are used). Names no file
   * uses map to [].
   */
  filesUsingMany(names: Iterable<string>): Map<string, number[]> {
    const conn = this.conn();
    const wanted = [...new Set(names)];
    const out = new Map<string, number[]>();
    if ((this.needRebuild || this.log.length > 0) && !conn.inTransaction) this.flush();
    if (this.needRebuild || this.log.length > 0) {
      // Inside a transaction with changes not folded in yet: name by name, as filesUsing does.
      for (const name of wanted) out.set(name, this.filesUsing(name));
      return out;
    }
    for (let i = 0; i < wanted.length; i += BATCH) {
      const part = wanted.slice(i, i + BATCH);
      for (const [name, blob] of conn.all(`SELECT name, files FROM ${this.source.table} WHERE name IN (${part.map(() => '?').join(',')})`, part)) {
        if (blob instanceof Uint8Array) out.set(str(name), decodePosting(blob));
      }
    }
    for (const name of wanted) if (!out.has(name)) out.set(name, []);
    return out;
  }

  /**
   * The names from `from` (inclusive) to `to` (exclusive) in the table's order (SQLite's binary
   * order of UTF-8), pending names included; at most `limit`.
   */
  namesBetween(from: string, to: string, limit: number): string[] {
    const conn = this.conn();
    if (this.pending && !conn.inTransaction) this.flush();
    const stored = conn.all(`SELECT name FROM ${this.source.table} WHERE name >= ? AND name < ? ORDER BY name LIMIT ?`, [from, to, limit]).map((r) => str(r[0]));
    if (!this.pending) return stored;
    // Inside a transaction: names only the log holds may belong in the range too.
    const names = new Set(stored);
    for (const e of this.log) for (const n of e.added) if (n >= from && n < to) names.add(n);
    return [...names].sort(compareUtf8).slice(0, limit);
  }

  /** Every name with the ids of the files that hold it (ascending). */
  all(): Array<{ name: string; fileIds: number[] }> {
    const conn = this.conn();
    if (this.pending && !conn.inTransaction) this.flush();
    const out: Array<{ name: string; fileIds: number[] }> = [];
    for (const [name, blob] of conn.all(`SELECT name, files FROM ${this.source.table}`)) {
      if (blob instanceof Uint8Array) out.push({ name: str(name), fileIds: decodePosting(blob) });
    }
    return out;
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

/** SQLite's order of TEXT values (memcmp of UTF-8), which code-point order matches. */
function compareUtf8(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
