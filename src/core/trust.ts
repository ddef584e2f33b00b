/**
 * Workspace trust and the user-level configuration folder.
 *
 * A workspace's own `vlt.toml` comes with the repository, so whoever wrote the repository
 * wrote it. The settings that decide where code and API keys are sent (endpoints, models, the
 * names of key variables) and the programs the workspace may provide (its own TypeScript) are
 * honoured only when the user trusts the workspace: with `vlt trust`, which records the
 * workspace's real path and the SHA-256 of its vlt.toml in `trusted.json` in the user's config
 * folder, or when the host says so (VS Code's workspace trust, passed to `vlt lsp`). A vlt.toml
 * that changed since `vlt trust` is untrusted again until the user trusts it anew.
 *
 * The user's config folder is `$VLT_CONFIG_HOME`, else `$XDG_CONFIG_HOME/vlt`, else
 * `~/.config/vlt` (HOME, or USERPROFILE on Windows), taken from the environment the caller
 * passes: with none of them set there is no user folder, so nothing is trusted and no user
 * config is read.
 */
import { createHash } from 'node:crypto';
import { promises as fsp, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { VltError } from './errors';
import { writeFileAtomic } from './store/atomic';

/** The workspace configuration file, relative to the workspace root. */
export const WORKSPACE_CONFIG_FILE = 'vlt.toml';
/** The user-level configuration, in the user's config folder. */
export const USER_CONFIG_FILE = 'config.toml';
/** The workspaces the user trusts, in the user's config folder. */
export const TRUST_FILE = 'trusted.json';

/** Where the decision came from: the host (the editor's workspace trust), `vlt trust`, or nowhere. */
export type TrustSource = 'host' | 'vlt-trust' | 'none';

export interface WorkspaceTrust {
  trusted: boolean;
  source: TrustSource;
  /** `vlt trust` was given for this workspace, but its vlt.toml changed since. */
  stale: boolean;
}

/** One entry of `trusted.json`. */
export interface TrustRecord {
  /** The workspace's real path (symbolic links resolved). */
  path: string;
  /** SHA-256 of its vlt.toml when it was trusted, or null when it had none. */
  config_sha256: string | null;
  trusted_at: string;
}

interface TrustFile {
  version: 1;
  workspaces: TrustRecord[];
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** The user's vlt config folder, or undefined when the environment names no home at all. */
export function userConfigDir(env: NodeJS.ProcessEnv): string | undefined {
  const own = envValue(env, 'VLT_CONFIG_HOME');
  if (own) return path.resolve(own);
  const xdg = envValue(env, 'XDG_CONFIG_HOME');
  // The XDG spec ignores a relative XDG_CONFIG_HOME.
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'vlt');
  const home = envValue(env, 'HOME') ?? envValue(env, 'USERPROFILE');
  return home ? path.join(home, '.config', 'vlt') : undefined;
}

/** SHA-256 of a workspace's vlt.toml bytes, or null for a workspace without one. */
export function configDigest(bytes: Uint8Array | undefined): string | null {
  return bytes === undefined ? null : createHash('sha256').update(bytes).digest('hex');
}

/** The workspace's real path: trust is recorded for the folder, whatever link led to it. */
export function workspaceKey(root: string): string {
  const abs = path.resolve(root);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

function trustFilePath(env: NodeJS.ProcessEnv): string | undefined {
  const dir = userConfigDir(env);
  return dir && path.join(dir, TRUST_FILE);
}

/** The records of `trusted.json`; a missing file is an empty list, an unreadable one an error. */
export async function readTrustRecords(env: NodeJS.ProcessEnv): Promise<TrustRecord[]> {
  const file = trustFilePath(env);
  if (!file) return [];
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw new VltError('IO', `${file}: cannot read: ${code ?? String(e)}`, { path: file }, { cause: e });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new VltError('CONFIG_INVALID', `${file}: not valid JSON; fix or delete it (then run \`vlt trust\` again where you need it)`, { path: file }, { cause: e });
  }
  const list = (doc as Partial<TrustFile> | null)?.workspaces;
  if (!Array.isArray(list)) throw new VltError('CONFIG_INVALID', `${file}: expected {"version": 1, "workspaces": [...]}`, { path: file });
  return list.filter(
    (r): r is TrustRecord =>
      typeof r === 'object' && r !== null && typeof (r as TrustRecord).path === 'string' && (typeof (r as TrustRecord).config_sha256 === 'string' || (r as TrustRecord).config_sha256 === null),
  );
}

async function writeTrustRecords(env: NodeJS.ProcessEnv, records: TrustRecord[]): Promise<string> {
  const file = trustFilePath(env);
  if (!file) throw new VltError('USAGE', 'no user config folder: set HOME, XDG_CONFIG_HOME or VLT_CONFIG_HOME');
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const doc: TrustFile = { version: 1, workspaces: records };
  await writeFileAtomic(file, new TextEncoder().encode(`${JSON.stringify(doc, null, 2)}\n`));
  return file;
}

async function readWorkspaceConfig(root: string): Promise<Uint8Array | undefined> {
  try {
    return await fsp.readFile(path.join(root, WORKSPACE_CONFIG_FILE));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new VltError('IO', `${WORKSPACE_CONFIG_FILE}: cannot read: ${code ?? String(e)}`, { path: path.join(root, WORKSPACE_CONFIG_FILE) }, { cause: e });
  }
}

/**
 * Whether the workspace is trusted. `host` is the host's own decision (the editor's workspace
 * trust) and wins when given; otherwise `trusted.json` decides, and its record holds only while
 * the vlt.toml is the one the user trusted (`configBytes`: its content now, undefined for none).
 */
export async function resolveTrust(root: string, configBytes: Uint8Array | undefined, env: NodeJS.ProcessEnv, host?: boolean): Promise<WorkspaceTrust> {
  if (host !== undefined) return { trusted: host, source: 'host', stale: false };
  const key = workspaceKey(root);
  const rec = (await readTrustRecords(env)).find((r) => r.path === key);
  if (!rec) return { trusted: false, source: 'none', stale: false };
  if (rec.config_sha256 !== configDigest(configBytes)) return { trusted: false, source: 'vlt-trust', stale: true };
  return { trusted: true, source: 'vlt-trust', stale: false };
}

/** `vlt trust`: records the workspace and the digest of its vlt.toml as it is now. */
export async function trustWorkspace(root: string, env: NodeJS.ProcessEnv): Promise<TrustRecord & { file: string }> {
  const key = workspaceKey(root);
  const st = await fsp.stat(key).catch(() => undefined);
  if (!st) throw new VltError('PATH_NOT_FOUND', `workspace ${key} does not exist`);
  if (!st.isDirectory()) throw new VltError('NOT_A_DIRECTORY', `workspace ${key} is not a directory`);
  const rec: TrustRecord = { path: key, config_sha256: configDigest(await readWorkspaceConfig(key)), trusted_at: new Date().toISOString() };
  const others = (await readTrustRecords(env)).filter((r) => r.path !== key);
  const file = await writeTrustRecords(env, [...others, rec].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
  return { ...rec, file };
}

/** `vlt trust --revoke`: forgets the workspace; says whether it was trusted. */
export async function revokeTrust(root: string, env: NodeJS.ProcessEnv): Promise<{ path: string; revoked: boolean }> {
  const key = workspaceKey(root);
  const records = await readTrustRecords(env);
  const kept = records.filter((r) => r.path !== key);
  if (kept.length !== records.length) await writeTrustRecords(env, kept);
  return { path: key, revoked: kept.length !== records.length };
}

/** `vlt trust --list`: every trusted workspace, and whether its vlt.toml is still the one trusted. */
export async function listTrust(env: NodeJS.ProcessEnv): Promise<Array<TrustRecord & { current: boolean; exists: boolean }>> {
  const out: Array<TrustRecord & { current: boolean; exists: boolean }> = [];
  for (const r of await readTrustRecords(env)) {
    const exists = (await fsp.stat(r.path).catch(() => undefined))?.isDirectory() === true;
    const now = exists ? configDigest(await readWorkspaceConfig(r.path).catch(() => undefined)) : null;
    out.push({ ...r, exists, current: exists && now === r.config_sha256 });
  }
  return out;
}
