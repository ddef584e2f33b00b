/**
 * The embedding cache: vectors by (model key, content hash) in `.vlt/embeddings.db`, apart from
 * the index so that rebuilding a corrupt or outdated index keeps paid-for embeddings.
 */
import type { SqlJsStatic } from 'sql.js';
import type { EmbeddingCache } from '../embeddings';
import { VltError } from '../errors';
import type { Logger } from '../ports';
import { writeFileAtomic } from './atomic';
import { moveAside, openChecked, readIfExists } from './db-file';
import { EMBEDDINGS_FILE, EMBEDDINGS_SCHEMA_SQL, EMBEDDINGS_SCHEMA_VERSION, PAGE_SIZE } from './schema';
import { Connection, num, str } from './sqlite';

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
