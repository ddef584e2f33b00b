/**
 * Which workspace files a tool may hand out. `read_file_range` serves agents, and in the
 * oracle's agent mode what it reads goes to a model, so it reads the project's source and
 * nothing else:
 *
 * - never vlt's own state (`.vlt/`: the MCP token, memory) or version-control folders (`.git/`,
 *   `.hg/`, `.svn/`), at any depth;
 * - never a file the index skips as ignored (`.gitignore`, `.git/info/exclude`);
 * - never a file the `[security] deny` list names (secrets by name: `.env*`, `*.pem`, `*.key`,
 *   SSH keys; a vlt.toml may only add patterns), which the index skips too.
 *
 * Each refusal is a VltError ACCESS_DENIED that says why. Callers check the path as asked and
 * the path it resolves to, so a symbolic link cannot lead around the rules.
 */
import * as path from 'node:path';
import { ALWAYS_SKIPPED_DIRS, deniedBy, isGitignored } from './discovery';
import { VltError } from './errors';
import type { WorkspaceFs } from './ports';

const STATE_DIRS = new Map([...ALWAYS_SKIPPED_DIRS].map((d) => [d.toLowerCase(), d === '.vlt' ? "vlt's own state" : 'version control']));

/**
 * Refuses (ACCESS_DENIED) a workspace-relative, `/`-separated file path that a tool may not
 * read; `shown` is the path as the caller gave it, for the message.
 */
export async function checkReadAccess(root: string, rel: string, opts: { fs: WorkspaceFs; deny: readonly string[]; shown?: string }): Promise<void> {
  const shown = opts.shown ?? rel;
  const segs = rel.split('/').filter((s) => s !== '' && s !== '.');
  for (const s of segs) {
    const what = STATE_DIRS.get(s.toLowerCase());
    if (what) throw new VltError('ACCESS_DENIED', `${shown} is inside ${s}/ (${what}); tools do not read it`, { path: shown });
  }
  const pattern = deniedBy(segs.join('/'), opts.deny);
  if (pattern) throw new VltError('ACCESS_DENIED', `${shown} matches "${pattern}" in the [security] deny list (secrets); tools do not read it`, { path: shown, pattern });
  if (await isGitignored(root, segs.join('/'), opts.fs)) {
    throw new VltError('ACCESS_DENIED', `${shown} is ignored (.gitignore or .git/info/exclude), so the index skips it; tools do not read it`, { path: shown });
  }
}

function inside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel !== '' && !rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel);
}

const posix = (p: string) => p.split(path.sep).join('/');

/**
 * A file a tool may read, given as the caller wrote it: inside the workspace (no `..`, no
 * absolute path elsewhere, no symbolic link leading out), allowed by {@link checkReadAccess} as
 * asked and as resolved, existing and a regular file. Its workspace-relative path, its real path
 * and its size; otherwise a VltError (PATH_OUTSIDE_WORKSPACE, ACCESS_DENIED, PATH_NOT_FOUND, USAGE, IO).
 */
export async function readableFile(root: string, rel: string, opts: { fs: WorkspaceFs; deny: readonly string[] }): Promise<{ rel: string; real: string; size: number }> {
  if (rel.includes('\0')) throw new VltError('USAGE', 'the path contains a NUL character');
  const abs = path.resolve(root, rel);
  if (!inside(root, abs)) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${rel} is outside the workspace; give a path relative to the workspace root`);
  // Before anything is resolved: a refused path gets the same answer whether or not it exists.
  await checkReadAccess(root, posix(path.relative(root, abs)), { ...opts, shown: rel });
  let real: string;
  try {
    real = await opts.fs.realpath(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new VltError(code === 'ENOENT' || code === 'ENOTDIR' ? 'PATH_NOT_FOUND' : 'IO', `${rel}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(e))}`);
  }
  // A symlink inside the workspace that leads out of it is refused like a `..` path.
  const realRoot = await opts.fs.realpath(root).catch(() => root);
  if (!inside(realRoot, real)) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${rel} leads outside the workspace (a symbolic link); it was not read`);
  // A link inside the workspace is held to the rules of the file it leads to.
  await checkReadAccess(realRoot, posix(path.relative(realRoot, real)), { ...opts, shown: rel });
  const st = await opts.fs.stat(real);
  if (st.kind !== 'file') throw new VltError('USAGE', `${rel} is not a regular file`);
  return { rel: posix(path.relative(root, abs)), real, size: st.size };
}
