/**
 * The workspace's state folder (`.vlt/`) is private to its user: it holds the MCP bearer token,
 * the index (every indexed line of code) and the memory (threads, the shared conversation), so
 * other accounts on the machine must not list or read it. It is created 0700, and a folder an
 * older version left group- or world-readable is tightened, whoever created it first.
 */
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import { VltError } from '../errors';

/** The folder's permissions: owner only. */
export const STATE_DIR_MODE = 0o700;

/** Creates `dir` (and missing parents) private to this user, or tightens it when it exists. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await fsp.mkdir(dir, { recursive: true, mode: STATE_DIR_MODE });
    const st = await fsp.stat(dir);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) await fsp.chmod(dir, STATE_DIR_MODE);
  } catch (e) {
    throw new VltError('IO', `could not create ${dir}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: dir }, { cause: e });
  }
}

/** {@link ensurePrivateDir}, synchronously (the daemon's start, before its event loop is busy). */
export function ensurePrivateDirSync(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
    const st = fs.statSync(dir);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) fs.chmodSync(dir, STATE_DIR_MODE);
  } catch (e) {
    throw new VltError('IO', `could not create ${dir}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: dir }, { cause: e });
  }
}
