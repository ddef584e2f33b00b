/**
 * The index's blobs: small ones in index.db's `blobs` table, large ones (sidecar.ts) as files
 * beside it, set and deleted in memory until the commit writes them. IndexStore delegates here.
 */
import type { Connection } from './sqlite';
import { memorySource, type ByteSource } from './byte-source';
import { formatSidecarRef, openSidecar, parseSidecarRef, pruneSidecars, readSidecar, SIDECAR_KEYS, sidecarMeta, writeSidecar, type SidecarRef } from './sidecar';

/** One commit's sidecar files: written before index.db, named inside its transaction, pruned after. */
export interface SidecarCommit {
  /** Inside the commit's transaction: index.db names the new files (and drops table copies). */
  apply(conn: Connection): void;
  /** After index.db is on disk: forgets what was pending, and prunes older files. */
  done(): void;
}

export class Blobs {
  /** Sidecar blobs set or deleted since the last commit (null: deleted). */
  private readonly pending = new Map<string, Uint8Array | null>();

  constructor(
    private readonly dirOf: () => string,
    private readonly conn: () => Connection,
    private readonly meta: (key: string) => string | undefined,
  ) {}

  set(key: string, bytes: Uint8Array): void {
    if (SIDECAR_KEYS.has(key)) this.pending.set(key, bytes);
    else this.conn().run('INSERT OR REPLACE INTO blobs(key, value) VALUES (?, ?)', [key, bytes]);
  }

  delete(key: string): void {
    if (SIDECAR_KEYS.has(key)) this.pending.set(key, null);
    else this.conn().run('DELETE FROM blobs WHERE key = ?', [key]);
  }

  has(key: string): boolean {
    const pending = this.pending.get(key);
    if (pending !== undefined) return pending !== null;
    if (SIDECAR_KEYS.has(key) && this.meta(sidecarMeta(key)) !== undefined) return true;
    return this.conn().first('SELECT 1 FROM blobs WHERE key = ?', [key]) !== undefined;
  }

  /** A blob; a sidecar blob whose file is gone (pruned after later commits) is none. */
  get(key: string): Uint8Array | undefined {
    const at = this.locate(key);
    return at && 'ref' in at ? readSidecar(this.dirOf(), at.ref) : at?.bytes;
  }

  /**
   * A blob to be read by range: a sidecar file is held open (and stays readable when a later
   * commit prunes it) instead of read whole; other blobs are in memory already.
   */
  open(key: string): ByteSource | undefined {
    const at = this.locate(key);
    return at && 'ref' in at ? openSidecar(this.dirOf(), at.ref) : at && memorySource(at.bytes);
  }

  /** Where a blob is: set and not yet committed, in a sidecar file index.db names, or in its table. */
  private locate(key: string): { bytes: Uint8Array } | { ref: SidecarRef } | undefined {
    const pending = this.pending.get(key);
    if (pending !== undefined) return pending ? { bytes: pending } : undefined;
    const ref = SIDECAR_KEYS.has(key) ? parseSidecarRef(this.meta(sidecarMeta(key))) : undefined;
    if (ref) return { ref };
    const v = this.conn().first('SELECT value FROM blobs WHERE key = ?', [key])?.[0];
    return v instanceof Uint8Array ? { bytes: v } : undefined;
  }

  /** The sizes of the sidecar files index.db names. */
  sidecarBytes(): number {
    let n = 0;
    for (const key of SIDECAR_KEYS) n += parseSidecarRef(this.meta(sidecarMeta(key)))?.size ?? 0;
    return n;
  }

  /**
   * Writes the pending sidecar blobs, and `extra` ones (the symbol table the commit encodes), as
   * new files for `generation`: before index.db, so that it never names a file that is not complete.
   */
  async writeSidecars(generation: number, extra: ReadonlyMap<string, Uint8Array | null>): Promise<SidecarCommit> {
    const blobs = new Map([...this.pending, ...extra]);
    const written = new Map<string, SidecarRef | null>();
    const before = new Map<string, SidecarRef | undefined>();
    for (const [key, blob] of blobs) {
      before.set(key, parseSidecarRef(this.meta(sidecarMeta(key))));
      written.set(key, blob ? await writeSidecar(this.dirOf(), key, generation, blob) : null);
    }
    return {
      apply: (conn) => {
        const set = conn.stmt('INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)');
        for (const [key, ref] of written) {
          // An index written before sidecars held the blob in its table: it goes now.
          conn.run('DELETE FROM blobs WHERE key = ?', [key]);
          if (ref) set.run([sidecarMeta(key), formatSidecarRef(ref)]);
          else conn.run('DELETE FROM meta WHERE key = ?', [sidecarMeta(key)]);
        }
      },
      done: () => {
        for (const key of written.keys()) this.pending.delete(key);
        // The file before stays for a reader of the previous generation that has yet to read it.
        for (const [key, ref] of written) pruneSidecars(this.dirOf(), key, [ref?.name, before.get(key)?.name].filter((n): n is string => n !== undefined));
      },
    };
  }
}
