/**
 * Reads of definitions, references and imports from index.db: symbols by name (exact, prefix
 * or qualified), a file's references decoded from its blob, and every use of a name through
 * the posting table. Each takes the store's connection; {@link IndexStore} exposes them as its
 * methods.
 */
import type { SqlValue } from 'sql.js';
import type { ImportSpec, SymbolKind, SymbolRef } from '../types';
import { decodeRefs } from './refs-codec';
import type { RefLocation, SymbolRow } from './rows';
import { num, optStr, str, type Connection } from './sqlite';

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

export function findSymbols(conn: Connection, name: string, opts: { prefix?: boolean; limit?: number }): SymbolRow[] {
  const limit = Math.max(1, Math.floor(opts.limit ?? 100));
  const qualified = opts.prefix ? null : /^(.*?)(?:\.|::|#|\/)([^.:#/]+)$/.exec(name);
  if (qualified) {
    // Names themselves may contain separators (a markdown heading "1.2 Setup"), so exact
    // name matches come first, then symbols whose qualified name ends with `name`.
    const byName = (n: string): SymbolRow[] =>
      conn.all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? ORDER BY f.path, s.start_line`, [n]).map(symbolFromRow);
    const exact = byName(name);
    const seen = new Set(exact.map((r) => r.id));
    const viaQualified = byName(qualified[2]!).filter((r) => !seen.has(r.id) && (r.qualifiedName === name || endsWithQualified(r.qualifiedName, name)));
    return [...exact, ...viaQualified].slice(0, limit);
  }
  if (opts.prefix) {
    if (name.length === 0) {
      return conn
        .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY s.name, f.path, s.start_line LIMIT ?`, [limit])
        .map(symbolFromRow);
    }
    // A range on the name index; U+10FFFF sorts after every character in UTF-8 order.
    return conn
      .all(
        `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name >= ? AND s.name < ? ORDER BY s.name, f.path, s.start_line LIMIT ?`,
        [name, `${name}\u{10FFFF}`, limit],
      )
      .map(symbolFromRow);
  }
  return conn
    .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? ORDER BY f.path, s.start_line LIMIT ?`, [name, limit])
    .map(symbolFromRow);
}

export function symbolsOfFile(conn: Connection, fileId: number): SymbolRow[] {
  return conn
    .all(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.file_id = ? ORDER BY s.start_line, s.id`, [fileId])
    .map(symbolFromRow);
}

export function allSymbols(conn: Connection, opts: { generated?: boolean }): SymbolRow[] {
  return [...eachSymbol(conn, opts)];
}

/**
 * Every definition, streamed from one statement of its own in id order (on the Linux kernel,
 * 3.1 M rows: as one array of rows, and the arrays of values they were made from, well over a
 * gigabyte). A file's path is one string for all its definitions. Finish (or break out of) the
 * loop before a commit, which frees every statement.
 */
export function* eachSymbol(conn: Connection, opts: { generated?: boolean }): Generator<SymbolRow, void, undefined> {
  const where = opts.generated === false ? ' WHERE f.generated = 0' : '';
  const s = conn.db.prepare(`SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id${where} ORDER BY s.id`);
  let fileId = -1;
  let path = '';
  try {
    while (s.step()) {
      const row = symbolFromRow(s.get());
      if (row.fileId === fileId) row.path = path;
      else {
        fileId = row.fileId;
        path = row.path;
      }
      if (row.qualifiedName === row.name) row.qualifiedName = row.name;
      yield row;
    }
  } finally {
    try {
      s.free();
    } catch {
      // Already freed by an export in the middle of the iteration.
    }
  }
}

export function getRefs(conn: Connection, fileId: number, onlyName?: string): SymbolRef[] {
  const blob = conn.first('SELECT refs FROM files WHERE id = ?', [fileId])?.[0];
  return blob instanceof Uint8Array ? decodeRefs(blob, onlyName) : [];
}

/** The paths of file ids, sorted by path; ids of files that are gone are left out. */
export function pathsOf(conn: Connection, ids: readonly number[]): Array<{ fileId: number; path: string }> {
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

/** The uses of `name` in `files` (those {@link pathsOf} gives for the name's posting), up to `limit`. */
export function findRefs(conn: Connection, files: ReadonlyArray<{ fileId: number; path: string }>, name: string, limit: number): RefLocation[] {
  const out: RefLocation[] = [];
  const refsOf = conn.stmt('SELECT refs FROM files WHERE id = ?');
  for (const f of files) {
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

export function allImportSpecs(conn: Connection): Map<number, ImportSpec[]> {
  const out = new Map<number, ImportSpec[]>();
  for (const [id, specs] of conn.all("SELECT id, import_specs FROM files WHERE import_specs != '[]'")) {
    out.set(num(id), JSON.parse(str(specs)) as ImportSpec[]);
  }
  return out;
}

export function importSpecsOf(conn: Connection, fileId: number): ImportSpec[] {
  const raw = conn.first('SELECT import_specs FROM files WHERE id = ?', [fileId])?.[0];
  return raw === undefined || raw === null ? [] : (JSON.parse(str(raw)) as ImportSpec[]);
}

function endsWithQualified(qualifiedName: string, suffix: string): boolean {
  if (!qualifiedName.endsWith(suffix)) return false;
  const before = qualifiedName.slice(0, qualifiedName.length - suffix.length);
  return before.endsWith('.') || before.endsWith('::') || before.endsWith('#') || before.endsWith('/');
}
