/**
 * Reads of definitions, references and imports from index.db: definitions by name (exact,
 * prefix or qualified) through the definition postings, a file's definitions and references
 * decoded from its blobs, and every use of a name through the reference postings. Each takes the store's connection; {@link IndexStore} exposes them as its
 * methods.
 */
import type { ImportSpec, SymbolRef } from '../types';
import { decodeRefs } from './refs-codec';
import { decodeDefs, defId } from './defs-codec';
import type { NamePostings } from './postings';
import type { Packs } from './packs';
import { blobColumns, eachFileBlob, placeAt, readFileBlob } from './file-blobs';
import type { RefLocation, SymbolRow } from './rows';
import { num, str, type Connection } from './sqlite';

/** A file's decoded definitions as rows (ids from the file's id and each one's position). */
function rowsOf(fileId: number, path: string, blob: Uint8Array | undefined, onlyName?: string): SymbolRow[] {
  if (!blob) return [];
  return decodeDefs(blob, onlyName).map((d) => {
    const row: SymbolRow = { id: defId(fileId, d.position), fileId, path, name: d.name, kind: d.kind, qualifiedName: d.qualifiedName, signature: d.signature, startLine: d.startLine, endLine: d.endLine };
    if (d.container !== undefined) row.container = d.container;
    return row;
  });
}

/** Definitions in start-line order, the file's own order breaking ties (ids grow with it). */
function byLine(a: SymbolRow, b: SymbolRow): number {
  return a.startLine - b.startLine || a.id - b.id;
}

/** The definitions named exactly `name`, by path and line, up to `limit`. */
function named(conn: Connection, packs: Packs, defs: NamePostings, name: string, limit: number): SymbolRow[] {
  const out: SymbolRow[] = [];
  for (const f of pathsOf(conn, defs.filesUsing(name))) {
    for (const row of rowsOf(f.fileId, f.path, readFileBlob(conn, packs, f.fileId, 'defs'), name).sort(byLine)) {
      out.push(row);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

export function findSymbols(conn: Connection, packs: Packs, defs: NamePostings, name: string, opts: { prefix?: boolean; limit?: number }): SymbolRow[] {
  const limit = Math.max(1, Math.floor(opts.limit ?? 100));
  const qualified = opts.prefix ? null : /^(.*?)(?:\.|::|#|\/)([^.:#/]+)$/.exec(name);
  if (qualified) {
    // Names themselves may contain separators (a markdown heading "1.2 Setup"), so exact
    // name matches come first, then symbols whose qualified name ends with `name`.
    const exact = named(conn, packs, defs, name, Number.MAX_SAFE_INTEGER);
    const seen = new Set(exact.map((r) => r.id));
    const viaQualified = named(conn, packs, defs, qualified[2]!, Number.MAX_SAFE_INTEGER).filter((r) => !seen.has(r.id) && (r.qualifiedName === name || endsWithQualified(r.qualifiedName, name)));
    return [...exact, ...viaQualified].slice(0, limit);
  }
  if (!opts.prefix) return named(conn, packs, defs, name, limit);
  // Names in order from the postings' range (U+10FFFF sorts after every character in UTF-8
  // order), then each name's definitions by path and line.
  const out: SymbolRow[] = [];
  for (const n of defs.namesBetween(name, `${name}\u{10FFFF}`, limit)) {
    out.push(...named(conn, packs, defs, n, limit - out.length));
    if (out.length >= limit) break;
  }
  return out;
}

export function symbolsOfFile(conn: Connection, packs: Packs, fileId: number): SymbolRow[] {
  const r = conn.first(`SELECT path, ${blobColumns('defs')} FROM files WHERE id = ?`, [fileId]);
  const place = r ? placeAt(r, 1) : undefined;
  return r && place ? rowsOf(fileId, str(r[0]), packs.readBytes(place)).sort(byLine) : [];
}

export function allSymbols(conn: Connection, packs: Packs, opts: { generated?: boolean }): SymbolRow[] {
  return [...eachSymbol(conn, packs, opts)];
}

/**
 * Every definition, file by file in id order, each file's in its stored order, streamed from
 * one statement of its own (on the Linux kernel, 3.1 M definitions: as one array of rows, well
 * over a gigabyte). Finish (or break out of) the loop before a commit, which frees every
 * statement.
 */
export function* eachSymbol(conn: Connection, packs: Packs, opts: { generated?: boolean }): Generator<SymbolRow, void, undefined> {
  for (const f of eachFileBlob(conn, packs, 'defs', opts.generated === false ? ' AND generated = 0' : '')) yield* rowsOf(f.fileId, f.path, f.blob);
}

export function getRefs(conn: Connection, packs: Packs, fileId: number, onlyName?: string): SymbolRef[] {
  const blob = readFileBlob(conn, packs, fileId, 'refs');
  return blob ? decodeRefs(blob, onlyName) : [];
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
export function findRefs(conn: Connection, packs: Packs, files: ReadonlyArray<{ fileId: number; path: string }>, name: string, limit: number): RefLocation[] {
  const out: RefLocation[] = [];
  for (const f of files) {
    const blob = readFileBlob(conn, packs, f.fileId, 'refs');
    if (!blob) continue;
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
