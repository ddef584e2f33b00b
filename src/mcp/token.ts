/**
 * What the HTTP transport keeps on disk under the workspace's `.vlt/`: the bearer token a client
 * must present (`mcp-token`, mode 0600), and a record of the running server (`mcp-server.json`)
 * so that `vlt mcp info` can tell a client where to connect.
 *
 * A token file is trusted only when it looks like one this machine made: a regular file of ours,
 * readable by us alone, and not the copy committed to the repository. A token that others can
 * read (a checkout or a copy: vlt creates it 0600) or that git tracks with this very content
 * (anyone with the repository knows it) is replaced by a new one, with a warning.
 */
import { ensurePrivateDir } from '../core/store/state-dir';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { VltError } from '../core/errors';
import type { Logger } from '../core/ports';
import { isPidAlive, tempPathFor, writeFileAtomic } from '../core/store/atomic';
import { VLT_DIR } from '../core/store/store';

export const TOKEN_FILE = 'mcp-token';
export const SERVER_FILE = 'mcp-server.json';
/** Overrides the token file, for setups that keep secrets in the environment (CI, containers). */
export const TOKEN_ENV = 'VLT_MCP_TOKEN';

/** 32 random bytes, as base64url: 43 characters. */
const TOKEN_BYTES = 32;
/** A token from the environment shorter than this is refused: it could be guessed. */
const MIN_TOKEN_CHARS = 24;
const TOKEN_SHAPE = /^[A-Za-z0-9._~+/=-]+$/;

export interface McpToken {
  token: string;
  /** Where it came from: the file (absolute path) or the environment variable. */
  source: { kind: 'file'; path: string } | { kind: 'env'; name: string };
}

export function tokenFilePath(root: string): string {
  return path.join(root, VLT_DIR, TOKEN_FILE);
}

/**
 * The token of this workspace's server: `VLT_MCP_TOKEN` when set, else the one stored in
 * `.vlt/mcp-token`, which is created (owner-only) on first use and reused afterwards, so that a
 * client configured once keeps working across restarts.
 */
export async function loadOrCreateToken(root: string, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<McpToken> {
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    const token = fromEnv.trim();
    if (token.length < MIN_TOKEN_CHARS || !TOKEN_SHAPE.test(token)) {
      throw new VltError('USAGE', `${TOKEN_ENV} must be at least ${MIN_TOKEN_CHARS} characters of letters, digits and -._~+/=; unset it to use the generated token in ${tokenFilePath(root)}`);
    }
    return { token, source: { kind: 'env', name: TOKEN_ENV } };
  }
  const file = tokenFilePath(root);
  const existing = await readTokenFile(file, logger);
  if (existing !== undefined && !(await isCommittedToken(root, file, existing, logger))) return { token: existing, source: { kind: 'file', path: file } };
  await ensurePrivateDir(path.dirname(file));
  await ignoreVltDir(path.dirname(file));
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  // Written whole to a private temporary file, then linked into place: a link fails when the
  // name exists, so two servers starting at once agree on one token, and a reader never sees
  // a half-written file.
  const tmp = tempPathFor(file);
  try {
    await fsp.writeFile(tmp, `${token}\n`, { mode: 0o600, flag: 'wx' });
    await fsp.link(tmp, file).catch(async (e: NodeJS.ErrnoException) => {
      // A file system without hard links: an exclusive create is the next best thing.
      if (e.code === 'EEXIST') throw e;
      await fsp.writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    });
    logger.info(`mcp: generated a bearer token in ${file}`);
    return { token, source: { kind: 'file', path: file } };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      const winner = await readTokenFile(file, logger);
      if (winner !== undefined) return { token: winner, source: { kind: 'file', path: file } };
    }
    throw new VltError('IO', `could not create ${file}: ${(e as Error).message}`, { path: file }, { cause: e });
  } finally {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
  }
}

/**
 * The token in `file`, or undefined when there is none (or none to keep). A file others can
 * read is not one vlt made (it creates it 0600): a checkout or a copy, or a token that may have
 * leaked. It is removed, with a warning, and a new one is made. Anything that is not a plain
 * file of ours holding a token is refused rather than trusted.
 */
async function readTokenFile(file: string, logger: Logger): Promise<string | undefined> {
  let st;
  try {
    st = await fsp.lstat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VltError('IO', `could not read ${file}: ${(e as Error).message}`, { path: file }, { cause: e });
  }
  if (!st.isFile()) throw new VltError('USAGE', `${file} is not a regular file (a link?); remove it and a new token is generated`);
  if (process.platform !== 'win32' && typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new VltError('USAGE', `${file} belongs to another user (uid ${st.uid}); remove it and a new token is generated`);
  }
  const token = (await fsp.readFile(file, 'utf8')).trim();
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    logger.warn(`mcp: ${file} was readable by others (mode ${(st.mode & 0o777).toString(8)}), so it is not a token this machine made or it may have leaked; it is replaced by a new one (\`vlt mcp info\` prints it for your clients)`);
    await discardToken(file, token);
    return undefined;
  }
  if (token.length < MIN_TOKEN_CHARS || !TOKEN_SHAPE.test(token)) {
    throw new VltError('USAGE', `${file} does not hold a valid token; remove it and a new one is generated`);
  }
  return token;
}

/** Removes the token file, unless another process has replaced it meanwhile. */
async function discardToken(file: string, token: string): Promise<void> {
  const now = await fsp.readFile(file, 'utf8').catch(() => undefined);
  if (now !== undefined && now.trim() === token) await fsp.rm(file, { force: true });
}

/**
 * Whether git tracks the token file with exactly this content: then everyone who has the
 * repository has the token, and it is discarded (true: make a new one). A tracked file with other
 * content is a token made here, kept with a warning that a commit would publish it. No git, or
 * no repository, means not tracked.
 */
async function isCommittedToken(root: string, file: string, token: string, logger: Logger): Promise<boolean> {
  const rel = path.relative(root, file).split(path.sep).join('/');
  // `ls-files -s`: "<mode> <object id> <stage>\t<path>". No optional locks and no fsmonitor
  // hook: reading the index must not run anything the repository configures.
  const out = await new Promise<string | undefined>((resolve) => {
    execFile('git', ['--no-optional-locks', '-c', 'core.fsmonitor=false', 'ls-files', '-s', '--', `:(literal)${rel}`], { cwd: root, timeout: 5000, windowsHide: true }, (err, stdout) => resolve(err ? undefined : stdout));
  });
  const id = /^\d+ ([0-9a-f]{40}|[0-9a-f]{64}) /m.exec(out ?? '')?.[1];
  if (!id) return false;
  const bytes = await fsp.readFile(file);
  const blob = createHash(id.length === 64 ? 'sha256' : 'sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  if (blob !== id) {
    logger.warn(`mcp: ${rel} is tracked by git; a commit would publish the token. Remove it from version control: git rm --cached ${rel}`);
    return false;
  }
  logger.warn(`mcp: ${rel} is tracked by git with this token, so everyone with the repository knows it; it is replaced by a new one. Remove it from version control: git rm --cached ${rel}`);
  await discardToken(file, token);
  return true;
}

/**
 * A token inside a source tree is one `git add .` away from being published: the index folder
 * gets its own `.gitignore` unless it has one. The top-level ignore files are the user's and
 * are left alone.
 */
async function ignoreVltDir(dir: string): Promise<void> {
  try {
    await fsp.writeFile(path.join(dir, '.gitignore'), '# Written by vlt: the index and the MCP token stay out of version control.\n*\n', { flag: 'wx' });
  } catch {
    // Already there (ours or the user's), or not writable: either way nothing to add.
  }
}

/** What a running `vlt serve` records about itself in `.vlt/mcp-server.json`. */
export interface ServerRecord {
  pid: number;
  url: string;
  host: string;
  port: number;
  started: string;
}

export function serverFilePath(root: string): string {
  return path.join(root, VLT_DIR, SERVER_FILE);
}

export async function writeServerRecord(root: string, rec: ServerRecord): Promise<void> {
  await ensurePrivateDir(path.join(root, VLT_DIR));
  await writeFileAtomic(serverFilePath(root), new TextEncoder().encode(`${JSON.stringify(rec, null, 2)}\n`));
}

/** Removes the record, unless another server has written its own since. */
export async function removeServerRecord(root: string, pid: number = process.pid): Promise<void> {
  const rec = await readServerRecordRaw(root);
  if (rec && rec.pid !== pid) return;
  await fsp.rm(serverFilePath(root), { force: true }).catch(() => undefined);
}

/**
 * The record of the server running for this workspace, or undefined when none runs: a record
 * whose process is gone (killed without cleaning up) is stale and ignored.
 */
export async function readServerRecord(root: string): Promise<ServerRecord | undefined> {
  const rec = await readServerRecordRaw(root);
  return rec && isPidAlive(rec.pid) ? rec : undefined;
}

async function readServerRecordRaw(root: string): Promise<ServerRecord | undefined> {
  try {
    const v = JSON.parse(await fsp.readFile(serverFilePath(root), 'utf8')) as Partial<ServerRecord>;
    if (typeof v.pid !== 'number' || typeof v.url !== 'string' || typeof v.port !== 'number' || typeof v.host !== 'string') return undefined;
    return { pid: v.pid, url: v.url, host: v.host, port: v.port, started: typeof v.started === 'string' ? v.started : '' };
  } catch {
    return undefined;
  }
}
