/**
 * A `vlt lsp --stdio` session driven as an editor drives it: the built CLI as a child
 * process, a real JSON-RPC connection, the initialize handshake, and the status the server
 * pushes. Shared by the LSP host's tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter, type ProtocolConnection } from 'vscode-languageserver-protocol/node';
import { didChangeStatusNotification, type InitializationOptions, type ServerStatus } from '../../src/protocol/lsp';
import { CLI, copyFixture } from './cli';

export interface Session {
  conn: ProtocolConnection;
  child: ChildProcess;
  dir: string;
  statuses: ServerStatus[];
  stderr: () => string;
  logs: string[];
  /** Resolves with the first pushed status that satisfies `pred`. */
  waitStatus(pred: (s: ServerStatus) => boolean, timeoutMs?: number): Promise<ServerStatus>;
  close(): Promise<void>;
  cleanup(): void;
}

const open: Session[] = [];

export async function start(fixture: string, init: InitializationOptions, onConn?: (c: ProtocolConnection) => void, env: Record<string, string> = {}): Promise<Session> {
  const { dir, cleanup } = copyFixture(fixture);
  const child = spawn(process.execPath, [CLI, 'lsp', '--stdio'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const statuses: ServerStatus[] = [];
  const waiters: Array<{ pred: (s: ServerStatus) => boolean; resolve: (s: ServerStatus) => void }> = [];
  const logs: string[] = [];
  conn.onNotification('window/logMessage', (p: { message: string }) => void logs.push(p.message));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('client/registerCapability', () => null);
  conn.onNotification(didChangeStatusNotification, (s) => {
    statuses.push(s);
    for (const w of waiters.splice(0)) {
      if (w.pred(s)) w.resolve(s);
      else waiters.push(w);
    }
  });
  onConn?.(conn);
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).toString(),
    workspaceFolders: [{ uri: pathToFileURL(dir).toString(), name: 'ws' }],
    capabilities: { window: { workDoneProgress: true }, workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
    clientInfo: { name: 'node-test-client', version: '1.0' },
    initializationOptions: init,
  });
  await conn.sendNotification('initialized', {});
  let closed = false;
  const session: Session = {
    conn,
    child,
    dir,
    statuses,
    logs,
    stderr: () => stderr,
    waitStatus(pred, timeoutMs = 60_000) {
      const last = statuses.at(-1);
      if (last && pred(last)) return Promise.resolve(last);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no matching status in ${timeoutMs} ms; last: ${JSON.stringify(statuses.at(-1))}\nlogs: ${logs.join('\n')}`)), timeoutMs);
        waiters.push({ pred, resolve: (s) => (clearTimeout(t), resolve(s)) });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await conn.sendRequest('shutdown').catch(() => undefined);
      await conn.sendNotification('exit').catch(() => undefined);
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => (child.kill('SIGKILL'), resolve()), 5000);
        child.once('exit', () => (clearTimeout(t), resolve()));
      });
      conn.dispose();
    },
    cleanup,
  };
  open.push(session);
  return session;
}

/** Closes every session started since the last call (each test file calls it in afterEach). */
export async function closeSessions(): Promise<void> {
  for (const s of open.splice(0)) {
    await s.close();
    s.cleanup();
  }
}
