/**
 * `.vlt/memory-text.pack`: the text of thread entries and of session digests, appended and never
 * rewritten. memory.db keeps where each text lies (`text_at`, `text_len`, in bytes) instead of
 * the text, because sql.js writes the whole database on every change: with the texts inside, an
 * oracle that logs every answer to a thread, and a shared session that keeps a digest of every
 * compressed batch, made each later write (and so each question) slower than the one before.
 *
 * Appends happen under memory.db's lock and before the transaction that records them commits,
 * so a committed row always points at bytes that are on disk. A writer killed between the two
 * leaves bytes no row points at: they cost disk, nothing else. A range past the end of the file
 * (a pack deleted or cut by hand) reads as a marked gap, never as a failure.
 */
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { VltError } from '../errors';

/** Where one text lies in the pack, in bytes. */
export interface TextRef {
  at: number;
  len: number;
}

/** What a read gives for a range the pack no longer holds. */
export const MISSING_TEXT = '(text missing: memory-text.pack does not hold it)';

export class TextPack {
  constructor(readonly file: string) {}

  /** Appends the texts, flushed to disk, and returns where each lies. The caller holds the lock. */
  async append(texts: readonly string[]): Promise<TextRef[]> {
    if (texts.length === 0) return [];
    let fh: FileHandle | undefined;
    try {
      fh = await fsp.open(this.file, 'a');
      let at = (await fh.stat()).size;
      const refs: TextRef[] = [];
      const bufs: Buffer[] = [];
      for (const t of texts) {
        const b = Buffer.from(t, 'utf8');
        refs.push({ at, len: b.length });
        bufs.push(b);
        at += b.length;
      }
      await fh.writeFile(Buffer.concat(bufs));
      await fh.sync();
      return refs;
    } catch (e) {
      throw new VltError('IO', `cannot append to ${this.file}: ${String(e)}`, { path: this.file }, { cause: e });
    } finally {
      await fh?.close();
    }
  }

  /**
   * Overwrites these ranges with zero bytes, flushed: a text that is forgotten (a cleared
   * session's digests) does not stay readable in the pack. The caller holds the lock.
   */
  async erase(refs: readonly TextRef[]): Promise<void> {
    if (refs.length === 0) return;
    let fh: FileHandle | undefined;
    try {
      fh = await fsp.open(this.file, 'r+');
      const size = (await fh.stat()).size;
      for (const r of refs) {
        const len = Math.min(r.len, size - r.at);
        if (r.at >= 0 && len > 0) await fh.write(Buffer.alloc(len), 0, len, r.at);
      }
      await fh.sync();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new VltError('IO', `cannot erase texts in ${this.file}: ${String(e)}`, { path: this.file }, { cause: e });
    } finally {
      await fh?.close();
    }
  }

  /** The texts at these ranges, in order. */
  async read(refs: readonly TextRef[]): Promise<string[]> {
    if (refs.length === 0) return [];
    let fh: FileHandle | undefined;
    try {
      fh = await fsp.open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return refs.map(() => MISSING_TEXT);
      throw new VltError('IO', `cannot read ${this.file}: ${String(e)}`, { path: this.file }, { cause: e });
    }
    try {
      const size = (await fh.stat()).size;
      const out: string[] = [];
      for (const r of refs) {
        if (r.at < 0 || r.len < 0 || r.at + r.len > size) {
          out.push(MISSING_TEXT);
          continue;
        }
        const buf = Buffer.alloc(r.len);
        let got = 0;
        while (got < r.len) {
          const { bytesRead } = await fh.read(buf, got, r.len - got, r.at + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        out.push(buf.toString('utf8', 0, got));
      }
      return out;
    } finally {
      await fh.close();
    }
  }
}
