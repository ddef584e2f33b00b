/**
 * The workspace daemon (`vlt daemon run`): one background process per workspace that keeps
 * the workspace server warm (the index, memory, language servers, ctags) and runs the CLI
 * commands the thin front forwards to it over a local socket, each as the same code would run
 * in a process of its own. It keeps the index current from file events (a writer with the
 * delta queue), and exits after an idle time, when asked, when its workspace goes away, or
 * when a client of another build or environment replaces it.
 *
 * Invariant: the socket is a Unix socket (a named pipe on Windows) created with mode 0600,
 * never a TCP port.
 */
import { ensurePrivateDirSync } from '../core/store/state-dir';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { version as VERSION } from '../../package.json';
import type { CliIo } from '../protocol/cli';
import { VltError, errorMessage } from '../core/errors';
import type { Logger, ProgressSink } from '../core/ports';
import { userConfigDir } from '../core/trust';
import { writeFileAtomic } from '../core/store/atomic';
import { tryLock } from '../core/store/lock';
import type { InitializationOptions } from '../protocol/lsp';
import { publishQueue } from '../server/queue-state';
import { watchFiles, type TreeWatcher } from '../server/watch';
import { WorkspaceServer } from '../server/workspace';
import { remoteStatus, stopRemote } from './client';
import { evictIdleMs, maxDaemons, overBound, register, unregister, type RegisteredDaemon } from './registry';
import { alive, buildId, daemonPaths, ensureSocketDir, envFingerprint, onMessages, ownSocket, readRecord, send, type DaemonPaths } from './socket';
import { PROTOCOL, type ClientMessage, type DaemonRecord, type DaemonStatusInfo } from '../protocol/daemon';

export const DEFAULT_IDLE_MINUTES = 15;
/** How often, at most, a daemon refreshes when it was last used in the registry. */
const REGISTER_EVERY_MS = 1000;
/** How often the daemon looks whether it is idle, or its workspace is gone. */
const CHECK_MS = 15_000;

/**
 * What the daemon serves on its connections, given by the program that runs it (the CLI's
 * wiring): the daemon itself is the process, the socket and the shared workspace server, and
 * knows no command, editor protocol or MCP session (gopls' shape: one server, several
 * transports). `server` gives the daemon's workspace server; it throws while none is open.
 */
export type DaemonHosts = (server: () => WorkspaceServer) => DaemonHost;

export interface DaemonHost {
  /** Where the workspace server reports an index build (the commands waiting on it show it). */
  onProgress: ProgressSink;
  /** Runs one CLI command line for a client; its exit code. */
  runCommand(argv: readonly string[], io: CliIo): Promise<number>;
  /**
   * Serves an editor's LSP session on `stream` until `closed` (an `exit` ends the stream, not
   * the daemon). `shared` says whether the editor joins the daemon's server (undefined: its
   * session opens a server of its own).
   */
  serveLsp(stream: net.Socket, closed: Promise<void>, shared: (init: InitializationOptions, root: string) => Promise<WorkspaceServer | undefined>): Promise<void>;
  /** Serves one MCP session of `ws` over newline-delimited JSON-RPC on `stream` until `closed`. */
  serveMcp(ws: WorkspaceServer, stream: net.Socket, closed: Promise<void>): Promise<void>;
  /** Starts the MCP Streamable HTTP endpoint (and the browser chat) of `ws` on loopback. */
  serveHttp(ws: WorkspaceServer, opts: { port?: number; chat: boolean }): Promise<HttpEndpoint>;
}

export interface HttpEndpoint {
  url: string;
  token_file: string | null;
  pid: number;
  chat_url?: string;
  close(): Promise<void>;
}

export interface DaemonOptions {
  workspace: string;
  logger: Logger;
  idleMinutes?: number;
  hosts: DaemonHosts;
}

/** Runs the daemon until it stops; resolves once it has closed everything. */
export async function runDaemon(opts: DaemonOptions): Promise<void> {
  const root = fs.realpathSync(path.resolve(opts.workspace));
  const paths = daemonPaths(root);
  ensurePrivateDirSync(paths.dir);
  if (!ensureSocketDir(paths.socket)) throw new VltError('ACCESS_DENIED', `${path.dirname(paths.socket)} is not a private folder of this user`);
  const idleMinutes = opts.idleMinutes ?? envMinutes(process.env.VLT_DAEMON_IDLE_MINUTES) ?? DEFAULT_IDLE_MINUTES;
  const { logger } = opts;

  // One starts at a time; the other steps aside when the first is serving.
  const startLock = await tryLock(paths.startLock, { busyError: () => new VltError('INDEX_LOCKED', 'another daemon of this workspace is starting') }).catch(() => undefined);
  if (!startLock) {
    logger.info('daemon: another daemon of this workspace is starting; leaving it to serve');
    return;
  }
  // Connections are taken from the moment the socket exists; their commands wait until the
  // workspace server is open.
  const daemon = new Daemon(root, paths, logger, idleMinutes, opts.hosts);
  let listener: net.Server;
  try {
    const bound = await bind(paths.socket, (socket) => daemon.accept(socket));
    if (!bound) {
      logger.info('daemon: another daemon serves this workspace already');
      return;
    }
    listener = bound;
    const record: DaemonRecord = { pid: process.pid, version: VERSION, build: buildId(__dirname), protocol: PROTOCOL, socket: paths.socket, workspace: root, started_at: new Date().toISOString() };
    await writeFileAtomic(paths.record, Buffer.from(`${JSON.stringify(record, null, 2)}\n`));
    fs.chmodSync(paths.record, 0o600);
    register({ pid: process.pid, workspace: root, socket: paths.socket, started_at: record.started_at, last_used: record.started_at });
  } finally {
    startLock.release();
  }
  // Past the bound on running daemons, the least recently used idle ones stop.
  void evictIdleDaemons(logger);
  // One client's failure must not take the others' daemon down: a stray rejection is logged.
  const onRejection = (e: unknown) => logger.error(`daemon: unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.on('unhandledRejection', onRejection);
  try {
    await daemon.serve(listener);
  } finally {
    process.off('unhandledRejection', onRejection);
    listener.close();
    if (readRecord(paths.record)?.pid === process.pid) fs.rmSync(paths.record, { force: true });
    unregister(root);
  }
}

/**
 * Stops the least recently used daemons of other workspaces that serve nobody and were not used
 * in the last minute, until at most VLT_DAEMON_MAX (default 4) run; one that cannot be asked
 * (another build) counts as serving.
 */
async function evictIdleDaemons(logger: Logger): Promise<void> {
  const recent = Date.now() - evictIdleMs();
  const busy = async (d: RegisteredDaemon) => {
    if (Date.parse(d.last_used) > recent) return true;
    const st = await remoteStatus(d.workspace, __dirname).catch(() => undefined);
    return !st || st.active > 0 || st.mcp_sessions > 0 || st.editors > 0;
  };
  try {
    for (const d of await overBound(process.pid, maxDaemons(), busy)) {
      logger.info(`daemon: stopping the idle daemon of ${d.workspace} (pid ${d.pid}): more than ${maxDaemons()} daemons would run (VLT_DAEMON_MAX)`);
      await stopRemote(d.workspace, __dirname);
    }
  } catch (e) {
    logger.debug(`daemon: the bound on daemons was not applied: ${errorMessage(e)}`);
  }
}

class Daemon {
  private readonly build = buildId(__dirname);
  private readonly env = envFingerprint(process.env);
  private readonly startedAt = new Date();
  private readonly host: DaemonHost;
  private ws: WorkspaceServer | undefined;
  private watcher: TreeWatcher | undefined;
  private configStamp = '';
  private active = 0;
  /** Sessions connected through the daemon: `vlt mcp`, `vlt serve` and `vlt lsp`. */
  private sessions = 0;
  /** Editors connected through `vlt lsp`, and those that joined the shared server. */
  private editors = 0;
  private editorsShared = 0;
  /** Connections whose session uses the shared server: ended when it is reopened. */
  private readonly attached = new Set<net.Socket>();
  private requests = 0;
  private lastActivity = Date.now();
  private lastRegistered = 0;
  private stopping = false;
  private stopped!: () => void;
  private readonly done = new Promise<void>((resolve) => (this.stopped = resolve));
  private readonly idle: Array<() => void> = [];
  private listener: net.Server | undefined;
  /** Settles once the workspace server first opened (or failed to). */
  private readonly ready: Promise<void>;
  private opened!: (error?: unknown) => void;

  constructor(
    private readonly root: string,
    private readonly paths: DaemonPaths,
    private readonly logger: Logger,
    private readonly idleMinutes: number,
    hosts: DaemonHosts,
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.opened = (e) => (e === undefined ? resolve() : reject(e))));
    this.ready.catch(() => undefined);
    this.host = hosts(() => {
      if (!this.ws) throw new VltError('CANCELLED', 'the daemon is stopping');
      return this.ws;
    });
  }

  async serve(listener: net.Server): Promise<void> {
    this.listener = listener;
    try {
      await this.openServer();
      this.opened();
    } catch (e) {
      this.opened(e);
      throw e;
    }
    const timer = setInterval(() => this.check(), Math.max(100, Math.min(CHECK_MS, (this.idleMinutes * 60_000) / 2)));
    timer.unref();
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => void this.stop(`signal ${sig}`));
    this.logger.info(`daemon: serving ${this.root} on ${this.paths.socket} (pid ${process.pid}, exits after ${this.idleMinutes} idle minutes)`);
    await this.done;
    clearInterval(timer);
  }

  /** Opens the workspace server, its file watching, and starts loading the index. */
  private async openServer(): Promise<void> {
    this.configStamp = configStamp(this.root);
    const ws = await WorkspaceServer.open({ workspace: this.root, logger: this.logger, writer: true, hostName: 'vlt daemon', onProgress: this.host.onProgress });
    this.ws = ws;
    // `vlt coderag status` names the process that keeps this index current from the first moment.
    if (ws.queue) publishQueue(this.root, 'vlt daemon', ws.queue.state());
    // The index is loaded now, so that the first command finds it open; then its directories are watched.
    void this.watchWhenOpen(ws);
  }

  /** Watching that failed to start: the index did not open (another process was building it). */
  private watchFailures = 0;
  private startingWatch: Promise<void> | undefined;

  /**
   * Watches the workspace's directories once the index opens. When it cannot open yet (another
   * process holds the writer lock for a first build), the next command that finds it open
   * starts the watching.
   */
  private watchWhenOpen(ws: WorkspaceServer): Promise<void> {
    if (this.watcher || this.ws !== ws || this.stopping) return Promise.resolve();
    if (this.startingWatch) return this.startingWatch;
    this.startingWatch = watchFiles(ws, this.logger)
      .then(
        (w) => {
          if (this.ws === ws && !this.stopping) {
            this.watcher = w;
            if (this.watchFailures > 0) this.logger.info('daemon: the index opened; watching files now');
          } else w.close();
        },
        (e: unknown) => {
          const first = this.watchFailures++ === 0;
          (first ? (m: string) => this.logger.warn(m) : (m: string) => this.logger.debug(m))(`daemon: files are not watched yet, so edits reach the index through \`vlt coderag sync\` until it opens: ${errorMessage(e)}`);
        },
      )
      .finally(() => (this.startingWatch = undefined));
    return this.startingWatch;
  }

  private async closeServer(): Promise<void> {
    this.watcher?.close();
    this.watcher = undefined;
    const ws = this.ws;
    this.ws = undefined;
    await ws?.close();
  }

  accept(socket: net.Socket): void {
    this.lastActivity = Date.now();
    let begun = false;
    let request: { abort: AbortController; stdin?: (data: string | undefined) => void } | undefined;
    socket.on('error', () => undefined);
    // A client that goes away (Ctrl-C twice, a closed terminal) cancels its command.
    socket.once('close', () => request?.abort.abort());
    const reader = onMessages<ClientMessage>(socket, (m) => {
      if (m.t === 'hello') {
        if (begun) return;
        begun = true;
        const answer = this.greet(socket, m, () => reader.detach());
        if (answer) request = answer;
      } else if (m.t === 'cancel') request?.abort.abort();
      else if (m.t === 'stdin') request?.stdin?.(m.data ?? undefined);
    });
  }

  /** Answers a client's hello; starts its command when it is one. */
  private greet(socket: net.Socket, m: Extract<ClientMessage, { t: 'hello' }>, detach: () => Buffer): { abort: AbortController; stdin?: (data: string | undefined) => void } | undefined {
    const refuse = (reason: 'protocol' | 'build' | 'env' | 'stopping', detail: string) => {
      // Another build or environment: stop listening at once, so that the client's new
      // daemon can bind, and leave after the commands in flight.
      if (reason !== 'stopping') void this.stop(`replaced by a client of another ${reason}`);
      send(socket, { t: 'refused', reason, detail });
      socket.end();
      return undefined;
    };
    if (this.stopping) return refuse('stopping', 'this daemon is stopping');
    if (m.protocol !== PROTOCOL) return refuse('protocol', `protocol ${m.protocol}, this daemon speaks ${PROTOCOL}`);
    // Status and stop are answered whatever the client's build and environment.
    if (m.kind === 'stop' || m.kind === 'status') {
      if (m.kind === 'stop') {
        send(socket, { t: 'ok', pid: process.pid });
        void this.stop('asked to stop');
      } else send(socket, { t: 'status', status: this.status() });
      socket.end();
      return undefined;
    }
    if (m.build !== this.build) return refuse('build', `program ${m.build}, this daemon runs ${this.build}`);
    if (m.env !== this.env) return refuse('env', 'the environment differs from the one this daemon started with');
    send(socket, { t: 'ok', pid: process.pid });
    if (m.kind === 'mcp') {
      void this.serveMcp(socket, detach());
      return undefined;
    }
    if (m.kind === 'lsp') {
      void this.serveLsp(socket, detach());
      return undefined;
    }
    if (m.kind === 'serve') {
      void this.serveHttp(socket, m);
      return undefined;
    }
    const abort = new AbortController();
    const request: { abort: AbortController; stdin?: (data: string | undefined) => void } = { abort };
    const io: CliIo = {
      stdout: { write: (data) => send(socket, { t: 'out', data }), isTTY: m.stdoutTTY },
      stderr: { write: (data) => send(socket, { t: 'err', data }), isTTY: m.stderrTTY },
      cwd: m.cwd,
      term: m.term,
      signal: abort.signal,
      readStdin: () =>
        new Promise((resolve) => {
          request.stdin = resolve;
          send(socket, { t: 'stdin?' });
        }),
    };
    void this.runCommand(socket, m.argv, io);
    return request;
  }

  /**
   * `vlt mcp` through the daemon: the connection becomes an MCP stdio stream to a session of
   * the shared workspace server, until the client closes it.
   */
  private serveMcp(socket: net.Socket, rest: Buffer): Promise<void> {
    return this.serveSession(socket, rest, 'an MCP session', async (ws, closed) => {
      this.attached.add(socket);
      await this.host.serveMcp(ws, socket, closed);
    });
  }

  /**
   * `vlt lsp --stdio` through the daemon: the connection carries an editor's LSP session. The
   * editor joins the shared workspace server when it may (see {@link shareable}); else its
   * session gets a server of its own in this process, as `vlt lsp` without a daemon has.
   * The LSP library's own process watch is not used: an `exit` ends the connection, not the daemon.
   */
  private async serveLsp(socket: net.Socket, rest: Buffer): Promise<void> {
    this.editors++;
    let shared = false;
    try {
      await this.serveSession(socket, rest, 'an editor session', (ws, closed) =>
        this.host.serveLsp(socket, closed, async (init, root) => {
          const why = await this.shareable(ws, init, root);
          if (why !== undefined) {
            this.logger.info(`daemon: the editor gets an index of its own: ${why}`);
            return undefined;
          }
          shared = true;
          this.editorsShared++;
          this.attached.add(socket);
          return ws;
        }),
      );
    } finally {
      if (shared) this.editorsShared--;
      this.editors--;
    }
  }

  /**
   * One forwarded session on `socket`, counted while it lasts: once the workspace server is
   * open, the stream (with the bytes already read past the hello) goes to `run` until the client
   * ends it; a failure ends the connection, never the daemon.
   */
  private async serveSession(socket: net.Socket, rest: Buffer, what: string, run: (ws: WorkspaceServer, closed: Promise<void>) => Promise<void>): Promise<void> {
    this.sessions++;
    try {
      await this.ready;
      const ws = this.ws;
      if (!ws || socket.destroyed) return;
      const closed = ended(socket);
      if (rest.length) socket.unshift(rest);
      this.logger.info(`daemon: ${what} began`);
      await run(ws, closed);
      socket.end();
      this.logger.info(`daemon: ${what} ended`);
    } catch (e) {
      this.logger.warn(`daemon: ${what} failed: ${errorMessage(e)}`);
      socket.destroy();
    } finally {
      this.attached.delete(socket);
      this.sessions--;
      this.finished();
    }
  }

  /**
   * Why an editor may not join the shared server, or undefined when it may. The index is the
   * same whatever the trust; what trust changes is which endpoints, keys and programs the
   * workspace's vlt.toml may choose. So an editor joins unless it is in Restricted Mode (nothing
   * may run for it), has index settings of its own, or trusts the workspace while the daemon
   * does not and vlt.toml holds settings that trust would let through.
   */
  private async shareable(ws: WorkspaceServer, init: InitializationOptions, root: string): Promise<string | undefined> {
    let real: string;
    try {
      real = fs.realpathSync(root);
    } catch {
      return `its folder ${root} cannot be read`;
    }
    if (real !== this.root) return `its folder ${root} is not this daemon's workspace`;
    if (init.restricted) return 'the workspace is in Restricted Mode';
    if (init.include || init.exclude) return "the editor's settings set index include or exclude globs";
    const engine = await ws.getEngine().catch(() => undefined);
    if (!engine) return 'the index did not open';
    const trust = engine.config.trust;
    if (init.trusted !== undefined && init.trusted !== trust.trusted && trust.ignored.length > 0) {
      return `the editor ${init.trusted ? 'trusts' : 'does not trust'} the workspace and the daemon ${trust.trusted ? 'does' : 'does not'} (${trust.ignored.join(', ')} in vlt.toml); \`vlt trust\` makes them agree`;
    }
    return undefined;
  }

  /**
   * `vlt serve` through the daemon: the MCP Streamable HTTP endpoint (and the browser chat) of
   * the shared workspace server, on loopback, until the client's connection closes.
   */
  private async serveHttp(socket: net.Socket, m: { port?: number; chat: boolean }): Promise<void> {
    this.sessions++;
    let endpoint: HttpEndpoint | undefined;
    try {
      await this.ready;
      const ws = this.ws;
      if (!ws || socket.destroyed) return;
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      endpoint = await this.host.serveHttp(ws, { ...(m.port !== undefined ? { port: m.port } : {}), chat: m.chat && !ws.restricted });
      const { url, token_file, pid, chat_url } = endpoint;
      send(socket, { t: 'serving', listening: { url, token_file, pid, ...(chat_url ? { chat_url } : {}) } });
      await closed;
    } catch (e) {
      const err = e instanceof VltError ? e : new VltError('INTERNAL', errorMessage(e));
      send(socket, { t: 'err', data: `vlt: ${err.message}\n` });
      send(socket, { t: 'exit', code: err.code === 'USAGE' ? 2 : 1 });
      socket.end();
    } finally {
      await endpoint?.close().catch(() => undefined);
      this.sessions--;
      this.finished();
    }
  }

  private async runCommand(socket: net.Socket, argv: string[], io: CliIo): Promise<void> {
    this.active++;
    this.requests++;
    let code = 1;
    const t0 = performance.now();
    try {
      await this.ready;
      await this.reloadIfConfigChanged();
      code = await this.host.runCommand(argv, io);
      // The command that found the index open at last: the watching starts before its answer
      // goes out, so that an edit made right after it is seen.
      if (this.ws?.opened) await this.watchWhenOpen(this.ws);
    } catch (e) {
      io.stderr.write(`vlt: ${errorMessage(e)}\n`);
    } finally {
      this.logger.debug(`daemon: ${argv.join(' ').slice(0, 200)} → ${code} in ${(performance.now() - t0).toFixed(1)} ms`);
      this.active--;
      send(socket, { t: 'exit', code });
      socket.end();
      this.finished();
    }
  }

  /** A command or session ended: the idle clock restarts, and a stop waiting for the last one goes on. */
  private finished(): void {
    this.lastActivity = Date.now();
    // When it was last used decides which daemon the bound stops first (registry.ts).
    if (this.lastActivity - this.lastRegistered > REGISTER_EVERY_MS) {
      this.lastRegistered = this.lastActivity;
      register({ pid: process.pid, workspace: this.root, socket: this.paths.socket, started_at: this.startedAt.toISOString(), last_used: new Date(this.lastActivity).toISOString() });
    }
    if (this.active === 0 && this.sessions === 0) for (const wake of this.idle.splice(0)) wake();
  }

  /**
   * vlt.toml, the user's config or the trust records changed (`vlt trust`, an edit): the next
   * command, once none runs, gets a workspace server opened with the new configuration.
   */
  private async reloadIfConfigChanged(): Promise<void> {
    await this.reopening;
    const stamp = configStamp(this.root);
    if (stamp === this.configStamp || this.active > 1) return;
    this.logger.info('daemon: the configuration changed; reopening the workspace');
    // Sessions on the old server end (an editor restarts its server, an agent its MCP
    // server) and come back to the new one.
    if (this.attached.size) this.logger.info(`daemon: ending ${this.attached.size} session(s) of the old configuration`);
    for (const socket of this.attached) socket.destroy();
    this.reopening = this.closeServer().then(() => this.openServer());
    try {
      await this.reopening;
    } finally {
      this.reopening = undefined;
    }
  }

  /** A reopen after a configuration change, which commands arriving meanwhile wait for. */
  private reopening: Promise<void> | undefined;

  private check(): void {
    if (!fs.existsSync(this.paths.dir)) return void this.stop('its workspace is gone');
    // The record was replaced by another daemon (a start raced this one's): leave it the socket.
    const rec = readRecord(this.paths.record);
    if (rec && rec.pid !== process.pid && alive(rec.pid)) return void this.stop('another daemon took over');
    if (this.active === 0 && this.sessions === 0 && Date.now() - this.lastActivity >= this.idleMinutes * 60_000) void this.stop(`idle for ${this.idleMinutes} minutes`);
  }

  private status(): DaemonStatusInfo {
    const s = this.ws?.status();
    return {
      pid: process.pid,
      version: VERSION,
      build: this.build,
      protocol: PROTOCOL,
      workspace: this.root,
      socket: this.paths.socket,
      started_at: this.startedAt.toISOString(),
      uptime_s: Math.round((Date.now() - this.startedAt.getTime()) / 1000),
      idle_minutes: this.idleMinutes,
      rss_bytes: process.memoryUsage().rss,
      requests: this.requests,
      active: this.active,
      mcp_sessions: this.sessions - this.editors,
      editors: this.editors,
      editors_shared: this.editorsShared,
      index: s ? `${s.state}${s.index ? `, ${s.index.files} files, generation ${s.generation}` : ''}` : 'closed',
      warming: this.ws?.busy ?? false,
    };
  }

  /** Stops listening at once; finishes the commands in flight, commits queued edits, exits. */
  private async stop(why: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.logger.info(`daemon: stopping (${why})`);
    this.listener?.close();
    const rec = readRecord(this.paths.record);
    if (rec?.pid === process.pid) fs.rmSync(this.paths.record, { force: true });
    // Commands in flight finish; MCP sessions end when their clients go (a replacement by a
    // client of another build waits for them, as a client that stops the daemon does not).
    if (this.active > 0 || (this.sessions > 0 && !why.startsWith('asked') && !why.startsWith('signal'))) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.closeServer().catch((e: unknown) => this.logger.warn(`daemon: closing: ${errorMessage(e)}`));
    this.stopped();
  }
}

/**
 * Settles when a session's connection ends: closed, or the client closed its side (for MCP, its
 * stdin; the SDK's transport does not watch for that).
 */
function ended(socket: net.Socket): Promise<void> {
  return new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.once('end', () => resolve());
  });
}

/** Listens on the socket path with mode 0600; undefined when a live daemon listens there already. */
async function bind(socketPath: string, onConnection: (socket: net.Socket) => void): Promise<net.Server | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const server = net.createServer(onConnection);
    // The socket file is created with the process umask: 0600 from its first moment.
    const umask = process.platform === 'win32' ? undefined : process.umask(0o177);
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      server.once('error', (e: NodeJS.ErrnoException) => resolve(e));
      server.listen(socketPath, () => resolve(undefined));
    }).finally(() => {
      if (umask !== undefined) process.umask(umask);
    });
    if (!error) {
      if (process.platform !== 'win32') fs.chmodSync(socketPath, 0o600);
      return server;
    }
    if (error.code !== 'EADDRINUSE') throw new VltError('IO', `cannot listen on ${socketPath}: ${error.message}`, undefined, { cause: error });
    // Something is there: a live daemon of this user's, or a stale socket (a crash, kill -9),
    // or a file that is no socket at all.
    if (ownSocket(socketPath) && (await answers(socketPath))) return undefined;
    fs.rmSync(socketPath, { force: true });
  }
  throw new VltError('IO', `cannot listen on ${socketPath}: the address stays in use`);
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Sizes and times of the files the configuration is read from. */
function configStamp(root: string): string {
  const dir = userConfigDir(process.env);
  const files = [path.join(root, 'vlt.toml'), ...(dir ? [path.join(dir, 'config.toml'), path.join(dir, 'trusted.json')] : [])];
  return files
    .map((f) => {
      const st = fs.statSync(f, { throwIfNoEntry: false });
      return st ? `${st.size}:${st.mtimeMs}` : '-';
    })
    .join('|');
}

function envMinutes(v: string | undefined): number | undefined {
  const n = Number(v);
  return v && Number.isFinite(n) && n > 0 ? n : undefined;
}
