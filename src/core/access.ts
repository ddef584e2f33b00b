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
