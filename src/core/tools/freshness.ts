/**
 * Freshness of search hits. The index is a snapshot; the files keep changing under it. An
 * agent that edits a file and searches again must never be handed the old code as if it were
 * current, so before a hit leaves a tool its file is hashed again (once per file per call) and
 * compared with the hash recorded at index time. A changed file has its snippet re-read from
 * disk for the same line range; a vanished one says so. Reads are confined to the workspace.
 */
import * as path from 'node:path';
import { sha1 } from '../parse/prepare';
import type { WorkspaceFs } from '../ports';
import { errorMessage } from '../errors';

/** What the file of a hit looks like on disk now, compared with the index. */
export type FileState =
  | { kind: 'same' }
  | { kind: 'changed'; lines: string[] }
  | { kind: 'gone'; note: string };

export interface LiveSnippet {
  snippet: string;
  stale: boolean;
  note?: string;
}

/**
 * Checks the files of search hits against the disk. One instance serves one tool call: it
 * caches each file's state so that several hits in one file cost one read, and it is dropped
 * afterwards so that the next call sees the next edit.
 */
export class FreshnessChecker {
  private readonly states = new Map<string, Promise<FileState>>();
  private realRoot: Promise<string> | undefined;

  constructor(
    private readonly root: string,
    private readonly fs: WorkspaceFs,
    /** Files larger than this are not read (the indexer would skip them now as well). */
    private readonly maxFileBytes: number,
  ) {}

  /** The state of `relPath` now; `indexedHash` is the SHA-1 the index recorded for it. */
  state(relPath: string, indexedHash: string): Promise<FileState> {
    let s = this.states.get(relPath);
    if (!s) {
      s = this.check(relPath, indexedHash);
      this.states.set(relPath, s);
    }
    return s;
  }

  /**
   * The snippet a hit should carry: the indexed one when the file is unchanged, else the
   * same lines read live (up to `maxLines` from `startLine`), marked stale with a note.
   */
  async snippet(relPath: string, indexedHash: string, startLine: number, endLine: number, indexedSnippet: string, maxLines: number): Promise<LiveSnippet> {
    const st = await this.state(relPath, indexedHash);
    if (st.kind === 'same') return { snippet: indexedSnippet, stale: false };
    if (st.kind === 'gone') return { snippet: '', stale: true, note: st.note };
    if (startLine > st.lines.length) {
      return { snippet: '', stale: true, note: `the file changed since it was indexed and now has only ${st.lines.length} lines; search again after the index is refreshed (vlt coderag sync)` };
    }
    const last = Math.min(endLine, startLine + maxLines - 1, st.lines.length);
    return {
      snippet: st.lines.slice(startLine - 1, last).join('\n'),
      stale: true,
      note: 'the file changed since it was indexed; the snippet was re-read from disk for the indexed line range, which may have shifted',
    };
  }

  private async realpathOfRoot(): Promise<string> {
    try {
      return this.fs.realpathSync ? this.fs.realpathSync(this.root) : await this.fs.realpath(this.root);
    } catch {
      return this.root;
    }
  }

  private async check(relPath: string, indexedHash: string): Promise<FileState> {
    // The index stores workspace-relative paths; one that resolves outside the root means a
    // damaged or foreign index, and is never read.
    const abs = path.resolve(this.root, relPath);
    if (!isInside(this.root, abs)) return { kind: 'gone', note: 'the indexed path leads outside the workspace; it was not read' };
    let real: string;
    try {
      real = this.fs.realpathSync ? this.fs.realpathSync(abs) : await this.fs.realpath(abs);
    } catch (e) {
      return { kind: 'gone', note: goneNote(e) };
    }
    // A file replaced by a symlink to somewhere outside the workspace after indexing must not
    // be read: discovery never indexes such links, and the tool must not become a way around that.
    this.realRoot ??= this.realpathOfRoot();
    if (!isInside(await this.realRoot, real)) return { kind: 'gone', note: 'the file is now a link leading outside the workspace; it was not read' };
    try {
      const st = this.fs.statSync ? this.fs.statSync(real) : await this.fs.stat(real);
      if (st.kind !== 'file') return { kind: 'gone', note: 'the path is no longer a regular file' };
      if (st.size > this.maxFileBytes) return { kind: 'gone', note: `the file grew past the index size limit (${this.maxFileBytes} bytes) since it was indexed; it was not read` };
      // A file seen with this hash at this size and mtime before is not read and hashed again:
      // an edit changes the mtime (the indexer trusts the same signal).
      const seen = verified.get(real);
      if (seen && seen.hash === indexedHash && seen.size === st.size && seen.mtimeMs === st.mtimeMs) return { kind: 'same' };
      const bytes = await this.fs.readFile(real);
      if (sha1(bytes) === indexedHash) {
        remember(real, { hash: indexedHash, size: st.size, mtimeMs: st.mtimeMs });
        return { kind: 'same' };
      }
      return { kind: 'changed', lines: new TextDecoder('utf-8').decode(bytes).split(/\r?\n/) };
    } catch (e) {
      return { kind: 'gone', note: goneNote(e) };
    }
  }
}

/** Files whose content was last found to match their indexed hash, by real path; bounded. */
const verified = new Map<string, { hash: string; size: number; mtimeMs: number }>();
const VERIFIED_MAX = 20_000;

function remember(real: string, v: { hash: string; size: number; mtimeMs: number }): void {
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
  verified.set(real, v);
}

function isInside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

function goneNote(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'the file was deleted or moved since it was indexed';
  return `the file could not be read now (${code ?? errorMessage(e)})`;
}
