/**
 * The mounts of the notes vault, and the confinement rule for the ones the user did not choose:
 * a vault that the workspace itself places (its vlt.toml's `[vault] root`, or the default
 * layout of README.md, docs/ and .vlt/notes/) must stay inside the workspace, through any
 * symbolic link, unless the user trusts the workspace.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VltError } from '../errors';

/** One root of the vault, mounted at a logical path. */
export interface VaultMount {
  /** Absolute path of the folder (or of the single file) on disk. */
  abs: string;
  /** Where its notes appear in the vault: '' for the top, `docs`, or a file's own path. */
  logical: string;
  kind: 'dir' | 'file';
  writable: boolean;
}

/** Builds the mounts of a workspace: the configured root, or README + docs/ + .vlt/notes/. */
export function vaultMounts(workspaceRoot: string, root: string | undefined): VaultMount[] {
  if (root !== undefined) return [{ abs: path.resolve(workspaceRoot, root), logical: '', kind: 'dir', writable: true }];
  const mounts: VaultMount[] = [];
  for (const name of ['README.md', 'readme.md', 'Readme.md']) {
    const abs = path.join(workspaceRoot, name);
    if (isFile(abs)) {
      mounts.push({ abs, logical: name, kind: 'file', writable: false });
      break;
    }
  }
  mounts.push({ abs: path.join(workspaceRoot, 'docs'), logical: 'docs', kind: 'dir', writable: false });
  mounts.push({ abs: path.join(workspaceRoot, '.vlt', 'notes'), logical: '', kind: 'dir', writable: true });
  return mounts;
}

function isFile(abs: string): boolean {
  try {
    return fs.statSync(abs).isFile();
  } catch {
    return false;
  }
}

/**
 * The first mount that resolves outside the workspace (real paths; for a mount that does not
 * exist yet, its nearest existing folder), with both paths for the message; undefined when all
 * stay inside.
 */
export function mountOutside(workspaceRoot: string, mounts: readonly VaultMount[]): { shown: string; real: string } | undefined {
  const root = realOrNearest(path.resolve(workspaceRoot));
  for (const m of mounts) {
    const real = realOrNearest(m.abs);
    const rel = path.relative(root, real);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return { shown: m.abs, real };
  }
  return undefined;
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
function realOrNearest(p: string): string {
  const rest: string[] = [];
  for (let cur = p; ; cur = path.dirname(cur)) {
    try {
      return path.join(fs.realpathSync.native(cur), ...rest.reverse());
    } catch {
      if (path.dirname(cur) === cur) return p;
      rest.push(path.basename(cur));
    }
  }
}

export function safeRealpath(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

export function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

export function outsideVault(notePath: string): VltError {
  return new VltError('PATH_OUTSIDE_VAULT', `${notePath} resolves outside the vault through a symbolic link; only notes inside the vault can be read or written`);
}
