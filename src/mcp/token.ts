/**
 * What the HTTP transport keeps on disk under the workspace's `.vlt/`: the bearer token a client
 * must present (`mcp-token`, mode 0600), and a record of the running server (`mcp-server.json`)
 * so that `vlt mcp info` can tell a client where to connect.
 */
import { randomBytes } from 'node:crypto';
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
  if (existing !== undefined) return { token: existing, source: { kind: 'file', path: file } };
  await fsp.mkdir(path.dirname(file), { recursive: true });
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
 * The token in `file`, or undefined when there is none. A file others can read is tightened
 * to 0600 (with a warning: the token may have leaked, and deleting the file makes a new one);
 * anything that is not a plain file of ours holding a token is refused rather than trusted.
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
  if (process.platform !== 'win32') {
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new VltError('USAGE', `${file} belongs to another user (uid ${st.uid}); remove it and a new token is generated`);
    }
    if ((st.mode & 0o077) !== 0) {
      try {
        await fsp.chmod(file, 0o600);
      } catch (e) {
        throw new VltError('USAGE', `${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}) and could not be made private: ${(e as Error).message}`, { path: file }, { cause: e });
      }
      logger.warn(`mcp: ${file} was readable by others (mode ${(st.mode & 0o777).toString(8)}); it is now 0600. Delete it to get a new token if it may have leaked.`);
    }
  }
  const token = (await fsp.readFile(file, 'utf8')).trim();
  if (token.length < MIN_TOKEN_CHARS || !TOKEN_SHAPE.test(token)) {
    throw new VltError('USAGE', `${file} does not hold a valid token; remove it and a new one is generated`);
  }
  return token;
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
  await fsp.mkdir(path.join(root, VLT_DIR), { recursive: true });
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
