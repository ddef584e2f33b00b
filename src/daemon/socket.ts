/**
 * The workspace daemon's socket and files, shared by the thin front (client.ts) and the daemon
 * (server.ts): where a workspace's socket and records live, who may use them, and the framing
 * of the messages of `src/protocol/daemon.ts` (one JSON object per line). Kept free of engine
 * code: the front loads it on every command.
 *
 * Invariant: the socket's path is derived from the workspace's real path, never read from a
 * file in the workspace; a socket is used only when it belongs to this user.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Socket } from 'node:net';
import type { ClientMessage, DaemonMessage, DaemonRecord } from '../protocol/daemon';

export interface DaemonPaths {
  /** `.vlt/` of the workspace. */
  dir: string;
  record: string;
  log: string;
  /** Taken while a daemon starts, so that two starting at once do not both serve. */
  startLock: string;
  socket: string;
}

/** Longest socket path used inside the workspace; Linux allows 107 bytes, macOS 103. */
const MAX_SOCKET_PATH = 100;

/** The daemon's files for a workspace root (an absolute, real path). */
export function daemonPaths(root: string): DaemonPaths {
  const dir = path.join(root, '.vlt');
  const inside = path.join(dir, 'daemon.sock');
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 16);
  let socket: string;
  if (process.platform === 'win32') socket = `\\\\.\\pipe\\vlt-${hash}`;
  else if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) socket = inside;
  // A deep workspace: a private folder of this user's under the temporary directory.
  else socket = path.join(privateSocketDir(), `${hash}.sock`);
  return { dir, record: path.join(dir, 'daemon.json'), log: path.join(dir, 'daemon.log'), startLock: path.join(dir, 'daemon.lock'), socket };
}

/** This user's private folder under the temporary directory (sockets of deep workspaces, the daemon registry). */
export function privateSocketDir(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return path.join(os.tmpdir(), `vlt-${uid}`);
}

/** Creates the private socket folder when the socket lives outside the workspace; false when it is not ours. */
export function ensureSocketDir(socket: string): boolean {
  const dir = path.dirname(socket);
  if (process.platform === 'win32' || dir !== privateSocketDir()) return true;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
}

/**
 * True when `socket` is a socket owned by this user: a socket another user placed there (or a
 * file a cloned repository brought along) is never connected to.
 */
export function ownSocket(socket: string): boolean {
  if (process.platform === 'win32') return true;
  try {
    const st = fs.lstatSync(socket);
    return st.isSocket() && st.uid === process.getuid?.();
  } catch {
    return false;
  }
}

/**
 * The environment a daemon's answers depend on (configuration and keys), hashed: a command from
 * a shell with another environment gets a daemon started with its own, not answers computed
 * with someone else's. PATH is left out on purpose: an agent's MCP server and the user's
 * terminal rarely share it, and one daemon should serve both; language servers are looked up
 * on the PATH of the command that started the daemon.
 */
export function envFingerprint(env: NodeJS.ProcessEnv): string {
  const keys = Object.keys(env)
    .filter((k) => (/^(VLT_|OPENAI_|OPENROUTER_)/.test(k) || /_API_KEY$/.test(k) || k === 'HOME' || k === 'XDG_CONFIG_HOME') && !/^VLT_DAEMON/.test(k))
    .sort();
  const h = createHash('sha256');
  for (const k of keys) h.update(`${k}=${env[k] ?? ''}\0`);
  return h.digest('hex').slice(0, 32);
}

/**
 * Identifies the program: the size and modification time of the bundle that holds the daemon
 * (`cli-main.js` next to the front). A rebuilt or upgraded program replaces a running daemon.
 */
export function buildId(bundleDir: string): string {
  try {
    const st = fs.statSync(path.join(bundleDir, 'cli-main.js'));
    return `${st.size}-${Math.round(st.mtimeMs)}`;
  } catch {
    return 'source';
  }
}

export function readRecord(file: string): DaemonRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DaemonRecord>;
    if (typeof r.pid !== 'number' || typeof r.build !== 'string' || typeof r.protocol !== 'number') return undefined;
    return r as DaemonRecord;
  } catch {
    return undefined;
  }
}

/** Sends one message. */
export function send(socket: Socket, m: ClientMessage | DaemonMessage): void {
  if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(m)}\n`);
}

/**
 * Calls `onMessage` for each complete line that parses as a JSON object; a bad line ends the
 * connection. `detach` stops reading messages and gives back the bytes received after the last
 * line (a connection that switches to another protocol, such as MCP, goes on with them).
 */
export function onMessages<M>(socket: Socket, onMessage: (m: M) => void): { detach(): Buffer } {
  let buf: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      const line = buf.subarray(0, nl).toString('utf8');
      buf = buf.subarray(nl + 1);
      if (!line) continue;
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        socket.destroy();
        return;
      }
      if (m && typeof m === 'object') onMessage(m as M);
      // The handler may have detached: the rest belongs to whoever reads next.
      if (detached) return;
    }
  };
  let detached = false;
  socket.on('data', onData);
  return {
    detach() {
      detached = true;
      socket.off('data', onData);
      // Held until the next reader resumes it: data that arrives meanwhile is not lost.
      socket.pause();
      const rest = Buffer.from(buf);
      buf = Buffer.alloc(0);
      return rest;
    },
  };
}

/** Whether the process `pid` is alive (a signal 0 probe). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
