/**
 * The WorkspaceFs port over Node's file system, used by the CLI and MCP hosts. Errors are
 * passed through unchanged so that callers can map their `code` (ENOENT, EACCES, ELOOP...)
 * to skip reasons.
 */
import { readFileSync, realpathSync, statSync, type Dirent, type Stats } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import type { DirEntry, EntryKind, FileStat, WorkspaceFs } from '../core/ports';

function direntKind(d: Dirent): EntryKind {
  // A symlink is reported as such (not followed) so that the walker can detect loops.
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'dir';
  if (d.isFile()) return 'file';
  return 'other';
}

function statKind(s: Stats): EntryKind {
  if (s.isDirectory()) return 'dir';
  if (s.isFile()) return 'file';
  return 'other';
}

function fileStat(s: Stats): FileStat {
  return { size: s.size, mtimeMs: s.mtimeMs, kind: statKind(s) };
}

export const nodeWorkspaceFs: WorkspaceFs = {
  localDisk: true,
  async readDir(absPath: string): Promise<DirEntry[]> {
    const entries = await readdir(absPath, { withFileTypes: true });
    return entries.map((d) => ({ name: d.name, kind: direntKind(d) }));
  },
  async stat(absPath: string): Promise<FileStat> {
    // stat (not lstat) follows symlinks, which is what the port documents for realpath
    // and what callers want when they ask for the size of a symlinked file.
    return fileStat(await stat(absPath));
  },
  statSync(absPath: string): FileStat {
    return fileStat(statSync(absPath));
  },
  realpathSync(absPath: string): string {
    // The native call is one realpath(3), not a walk of lstat calls per path component.
    return realpathSync.native(absPath);
  },
  async realpath(absPath: string): Promise<string> {
    return realpath(absPath);
  },
  async readFile(absPath: string): Promise<Uint8Array> {
    return readFile(absPath);
  },
  readFileSync(absPath: string): Uint8Array {
    return readFileSync(absPath);
  },
};
