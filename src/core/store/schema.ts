/**
 * What lies where: the files under `<workspace>/.vlt/` that the index uses, and the table
 * layouts of index.db and embeddings.db with their versions. A file of another version is
 * rebuilt (index.db) or started empty (embeddings.db), never migrated.
 */

/**
 * Version of the table layout of index.db. A file with any other version is rebuilt.
 * 3: `files.generated`, and generated files stored for navigation (without chunks) instead of
 * skipped; an index of version 2 lacks both, so it is rebuilt rather than read.
 * 4: chunk text in pack files beside index.db (`chunks.text_pack`, `text_at`, `text_len` and the
 * `text_packs` table; see packs.ts) instead of `chunks.text`.
 * 5: a file's definitions as one blob (defs-codec.ts) and the `def_postings` table instead of
 * the `symbols` table and its two indexes (on the Linux kernel, 538 of the 884 MiB that every
 * process loads whole); the definitions' and references' blobs in the packs beside index.db
 * (`files.defs_pack`, `defs_at`, `defs_len`, and `refs_…`), not in it; both postings tables
 * WITHOUT ROWID.
 */
export const SCHEMA_VERSION = 5;

/** Version of embeddings.db. Kept separate so that an index schema change keeps the vectors. */
export const EMBEDDINGS_SCHEMA_VERSION = 1;

export const INDEX_FILE = 'index.db';
export const EMBEDDINGS_FILE = 'embeddings.db';
export const LOCK_FILE = 'index.lock';
/** The identity of the index.db this index's writer last wrote (db-file.ts: its check is skipped). */
export const WRITTEN_FILE = 'index.written';
export const VLT_DIR = '.vlt';
/**
 * The meta key saying whether the index's latest commit is a checkpoint of a build that has not
 * finished (`incomplete`: it stopped, or is still running) or a finished build (`complete`).
 */
export const BUILD_STATE_META = 'build_state';

/*
 * Notes on the layout:
 * - A file's definitions and references are one blob each (defs-codec.ts, refs-codec.ts) in
 *   the packs (packs.ts), named by `defs_pack`/`defs_at`/`defs_len` and `refs_…` (pack null:
 *   none). `def_count` and `ref_count` count them without reading the blobs.
 * - `def_postings` answers "which files define name X" (exact and prefix lookups of a name), as
 *   `ref_postings` does for uses; a definition is then read from its file's blob.
 * - `chunks.docstring` is bound as a UTF-8 BLOB: sql.js marshals a string parameter through a
 *   JavaScript array of bytes, which made inserting chunk text twice as slow when chunk text
 *   was a column. It is decoded with TextDecoder on the way out.
 * - A chunk's text is not in index.db but in a pack file (packs.ts): `text_pack` is a
 *   `text_packs` id, `text_at` and `text_len` its UTF-8 byte range there.
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
export const SCHEMA_SQL = `
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
  def_count INTEGER NOT NULL DEFAULT 0,
  defs_pack INTEGER,
  defs_at INTEGER,
  defs_len INTEGER,
  refs_pack INTEGER,
  refs_at INTEGER,
  refs_len INTEGER
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
  text_pack INTEGER NOT NULL,
  text_at INTEGER NOT NULL,
  text_len INTEGER NOT NULL
);
CREATE TABLE text_packs(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, bytes INTEGER NOT NULL, dead INTEGER NOT NULL);
CREATE INDEX chunks_file_lines ON chunks(file_id, start_line, end_line);
CREATE TABLE def_postings(name TEXT PRIMARY KEY, files BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE ref_postings(name TEXT PRIMARY KEY, files BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE skipped(path TEXT PRIMARY KEY, reason TEXT NOT NULL, detail TEXT) WITHOUT ROWID;
CREATE TABLE blobs(key TEXT PRIMARY KEY, value BLOB NOT NULL);
`;

/**
 * Indexes added to the schema after indexes were written with it, and the ones they replace: a
 * writer that opens an older index adds them (its next commit writes them), so no re-index is
 * needed. `chunks_file_lines` covers a file's chunk ranges, so reading them touches the index's
 * few pages instead of one table page per chunk.
 */
export const ADDED_INDEXES: ReadonlyArray<{ name: string; sql: string; replaces?: string }> = [
  { name: 'chunks_file_lines', sql: 'CREATE INDEX chunks_file_lines ON chunks(file_id, start_line, end_line)', replaces: 'chunks_file' },
];

export const REQUIRED_TABLES = ['meta', 'files', 'chunks', 'def_postings', 'ref_postings', 'skipped', 'blobs', 'text_packs'];

export const EMBEDDINGS_SCHEMA_SQL = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE embeddings(model TEXT NOT NULL, hash TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(model, hash));
`;

/** Bigger pages mean fewer B-tree levels and less per-page overhead for 1-2 KB chunk rows. */
export const PAGE_SIZE = 8192;
