/**
 * Chunk text, and each file's definitions and references (their binary blobs), live beside
 * index.db, in append-only pack files, not in it: sql.js holds a whole database in memory and
 * copies it whole at every commit, and chunk text was over half of it (800 of 1,770 MB on the
 * Linux kernel), the files' blobs 336 of the 709 MB left. A row names its pack (an id in
 * `text_packs`), the byte offset and the length of its bytes (see {@link PACKED_COLUMNS}); a
 * reader reads them by range.
 *
 * A writer appends to a pack of its own, started at its first write and never shared, so a pack
 * another process reads never changes below the length a commit recorded. At a commit the pack
 * is flushed to disk before index.db, whose `text_packs` row records how many bytes it holds,
 * so a committed index never names bytes that are not on disk; bytes written after the last
 * commit of a writer that crashed are never named, and the pack is removed once no commit names
 * it. Removed chunks leave their bytes in place, counted as dead; a commit rewrites the live
 * texts of a pack that is mostly dead, or of many small packs, into the writer's pack. After a
 * commit the writer removes the packs neither it nor the commit before names (a reader of that
 * one may still read them), as it does for text segments.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeFilesWhere } from './sidecar';
import { num, str, type Connection } from './sqlite';

export const PACK_NAME = /^text-\d+-[0-9a-z]+\.pack$/;
/** A writer starts a new pack once its own holds this many bytes. */
const MAX_PACK_BYTES = 1024 * 2 ** 20;
/** A pack whose dead bytes are at least this share of it is rewritten. */
const DEAD_SHARE = 0.5;
/** Packs smaller than this are gathered into the writer's pack once there are more than {@link MAX_SMALL_PACKS}. */
const SMALL_PACK_BYTES = 8 * 2 ** 20;
const MAX_SMALL_PACKS = 8;
/** Pack files a reader keeps open. */
const OPEN_PACKS = 16;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Where a chunk's text, or a file's blob, lies. */
export interface TextRef {
  pack: number;
  at: number;
  len: number;
}

/**
 * Every place a row names bytes in a pack: a table and its pack, offset and length columns.
 * Rewriting a pack moves the bytes of each.
 */
export const PACKED_COLUMNS = [
  { table: 'chunks', pack: 'text_pack', at: 'text_at', len: 'text_len' },
  { table: 'files', pack: 'defs_pack', at: 'defs_at', len: 'defs_len' },
  { table: 'files', pack: 'refs_pack', at: 'refs_at', len: 'refs_len' },
] as const;

interface OwnPack {
  id: number;
  name: string;
  fd: number;
  /** Bytes appended, written or not. */
  size: number;
  /** Bytes on disk; the rest are in the write buffer. */
  written: number;
}

/**
 * Appended text is written in runs of this many bytes: one write per chunk was 4.5 s of a
 * half-kernel build's main thread.
 */
const WRITE_BUFFER_BYTES = 1 << 20;

export class Packs {
  private own: OwnPack | undefined;
  /** Open packs by id (the writer's own is read through its descriptor), least recently used first. */
  private readonly open = new Map<number, { fd: number; name: string }>();
  /** Dead bytes per pack since the last commit. */
  private readonly dead = new Map<number, number>();
  private counter = Date.now();
  /** Text appended to the writer's pack and not yet written: the first `pending` bytes. */
  private readonly buffer = new Uint8Array(WRITE_BUFFER_BYTES);
  private pending = 0;

  constructor(
    private readonly dir: string,
    private readonly conn: () => Connection,
    private readonly maxPackBytes = MAX_PACK_BYTES,
  ) {}

  /** Appends a chunk's text to the writer's pack (buffered: see {@link flushOwn}). */
  append(text: string): TextRef {
    // At most 3 bytes per UTF-16 unit: a text that fits the buffer's room is encoded into it.
    if (text.length * 3 > WRITE_BUFFER_BYTES - this.pending) this.flushOwn();
    if (text.length * 3 <= WRITE_BUFFER_BYTES - this.pending) {
      const len = encoder.encodeInto(text, this.buffer.subarray(this.pending)).written;
      return this.place(this.buffer.subarray(this.pending, this.pending + len));
    }
    return this.place(encoder.encode(text));
  }

  /** Appends bytes (a file's blob) to the writer's pack, buffered as text is. */
  appendBytes(bytes: Uint8Array): TextRef {
    if (bytes.byteLength > WRITE_BUFFER_BYTES - this.pending) this.flushOwn();
    if (bytes.byteLength <= WRITE_BUFFER_BYTES - this.pending) {
      this.buffer.set(bytes, this.pending);
      return this.place(this.buffer.subarray(this.pending, this.pending + bytes.byteLength));
    }
    return this.place(bytes);
  }

  /** Gives `bytes` (just put after the buffer's pending bytes, or to be written now) their place in the writer's pack. */
  private place(bytes: Uint8Array): TextRef {
    const len = bytes.byteLength;
    const buffered = bytes.buffer === this.buffer.buffer;
    const own = this.ownPack(len, buffered);
    const ref = { pack: own.id, at: own.size, len };
    own.size += len;
    if (buffered) this.pending += len;
    else {
      writeAll(own.fd, bytes, own.written);
      own.written += len;
    }
    return ref;
  }

  /** Writes the buffered text of the writer's pack. */
  private flushOwn(): void {
    const own = this.own;
    if (own && this.pending > 0) {
      writeAll(own.fd, this.buffer.subarray(0, this.pending), own.written);
      own.written += this.pending;
    }
    this.pending = 0;
  }

  /** The writer's pack, with room for `need` more bytes; `buffered`: they were just encoded after the pending ones. */
  private ownPack(need: number, buffered: boolean): OwnPack {
    if (this.own && this.own.size + need <= this.maxPackBytes) return this.own;
    if (this.own) {
      // Text encoded into the buffer after the pending bytes moves to its start: the new pack's.
      const moved = buffered ? this.buffer.slice(this.pending, this.pending + need) : undefined;
      this.closeOwn();
      if (moved) this.buffer.set(moved, 0);
    }
    const conn = this.conn();
    const id = num(conn.first('SELECT coalesce(max(id), 0) + 1 FROM text_packs')?.[0]);
    const name = `text-${this.counter++}-${Math.random().toString(36).slice(2, 8) || '0'}.pack`;
    const fd = fs.openSync(path.join(this.dir, name), 'w+', 0o644);
    conn.run('INSERT INTO text_packs(id, name, bytes, dead) VALUES (?, ?, 0, 0)', [id, name]);
    this.own = { id, name, fd, size: 0, written: 0 };
    return this.own;
  }

  /** Flushes the writer's full pack and records its length; the next text starts another. */
  private closeOwn(): void {
    const own = this.own;
    if (!own) return;
    this.flushOwn();
    this.own = undefined;
    try {
      fs.fsyncSync(own.fd);
      this.conn().run('UPDATE text_packs SET bytes = ? WHERE id = ?', [own.size, own.id]);
    } finally {
      fs.closeSync(own.fd);
    }
  }

  /** Reads a chunk's text. */
  read(ref: TextRef): string {
    return ref.len === 0 ? '' : decoder.decode(this.readBytes(ref));
  }

  /** Reads the bytes at `ref`. */
  readBytes(ref: TextRef): Uint8Array {
    if (ref.len === 0) return new Uint8Array(0);
    if (this.own?.id === ref.pack && ref.at + ref.len > this.own.written) this.flushOwn();
    const fd = this.fdOf(ref.pack);
    const bytes = new Uint8Array(ref.len);
    let done = 0;
    while (done < ref.len) {
      const n = fs.readSync(fd, bytes, done, ref.len - done, ref.at + done);
      if (n === 0) throw new Error(`pack ${this.open.get(ref.pack)?.name ?? ref.pack} ends before byte ${ref.at + ref.len}`);
      done += n;
    }
    return bytes;
  }

  private fdOf(pack: number): number {
    if (this.own?.id === pack) return this.own.fd;
    const held = this.open.get(pack);
    if (held) {
      this.open.delete(pack);
      this.open.set(pack, held);
      return held.fd;
    }
    const name = str(this.conn().first('SELECT name FROM text_packs WHERE id = ?', [pack])?.[0]);
    if (!PACK_NAME.test(name)) throw new Error(`the index names no chunk text pack ${pack}`);
    const fd = fs.openSync(path.join(this.dir, name), 'r');
    this.open.set(pack, { fd, name });
    for (const [id, h] of this.open) {
      if (this.open.size <= OPEN_PACKS) break;
      this.open.delete(id);
      fs.closeSync(h.fd);
    }
    return fd;
  }

  /** A removed chunk's (or a replaced file blob's) bytes, dead from now on. */
  noteDead(pack: number, bytes: number): void {
    this.dead.set(pack, (this.dead.get(pack) ?? 0) + bytes);
  }

  /**
   * Before a commit's database is written: rewrites mostly dead or small packs into the
   * writer's own, flushes it to disk, and records every pack's length and dead bytes in
   * `text_packs`.
   */
  beforeCommit(): void {
    const conn = this.conn();
    this.flushDead(conn);
    const packs = conn.all('SELECT id, bytes, dead FROM text_packs ORDER BY id').map((r) => ({ id: num(r[0]), bytes: num(r[1]), dead: num(r[2]) }));
    const others = packs.filter((p) => p.id !== this.own?.id);
    const small = others.filter((p) => p.bytes < SMALL_PACK_BYTES);
    const rewrite = others.filter((p) => (p.bytes > 0 && p.dead >= p.bytes * DEAD_SHARE) || (small.length > MAX_SMALL_PACKS && p.bytes < SMALL_PACK_BYTES));
    for (const p of rewrite) this.rewrite(conn, p.id);
    this.flushDead(conn);
    const own = this.own;
    if (own) {
      this.flushOwn();
      fs.fsyncSync(own.fd);
      conn.run('UPDATE text_packs SET bytes = ? WHERE id = ?', [own.size, own.id]);
    }
  }

  private flushDead(conn: Connection): void {
    for (const [id, bytes] of this.dead) conn.run('UPDATE text_packs SET dead = dead + ? WHERE id = ?', [bytes, id]);
    this.dead.clear();
  }

  /** Moves a pack's live bytes (of every column that names packs) into the writer's pack, and forgets the pack. */
  private rewrite(conn: Connection, pack: number): void {
    for (const c of PACKED_COLUMNS) {
      const rows = conn.all(`SELECT id, ${c.at}, ${c.len} FROM ${c.table} WHERE ${c.pack} = ? ORDER BY ${c.at}`, [pack]).map((r) => ({ id: num(r[0]), at: num(r[1]), len: num(r[2]) }));
      const move = conn.stmt(`UPDATE ${c.table} SET ${c.pack} = ?, ${c.at} = ? WHERE id = ?`);
      for (const r of rows) {
        const to = this.appendBytes(this.readBytes({ pack, at: r.at, len: r.len }));
        move.run([to.pack, to.at, r.id]);
      }
    }
    conn.run('DELETE FROM text_packs WHERE id = ?', [pack]);
    const held = this.open.get(pack);
    if (held) {
      this.open.delete(pack);
      fs.closeSync(held.fd);
    }
  }

  /** The pack files a database names. */
  static namesIn(conn: Connection): string[] {
    return conn.all('SELECT name FROM text_packs').map((r) => str(r[0]));
  }

  /**
   * After a commit that names `current`, with `previous` named by the commit before: removes
   * the other pack files (the writer's own is among `current`).
   */
  prune(current: readonly string[], previous: readonly string[]): void {
    const keep = new Set([...current, ...previous]);
    if (this.own) keep.add(this.own.name);
    removeFilesWhere(this.dir, (name) => PACK_NAME.test(name) && !keep.has(name));
  }

  /** Another database was loaded: pack ids may name other packs now. */
  forgetOpen(): void {
    for (const h of this.open.values()) fs.closeSync(h.fd);
    this.open.clear();
  }

  close(): void {
    this.forgetOpen();
    const own = this.own;
    this.pending = 0;
    this.own = undefined;
    if (own) fs.closeSync(own.fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, bytes.byteLength - done, position + done);
}
