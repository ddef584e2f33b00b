/**
 * The MCP host's one wiring file: it serves the core tools of one workspace server (the engine,
 * opened on the first call and shared by every session; memory; the oracle) over stdio
 * (`vlt mcp`) or Streamable HTTP (`vlt serve`). Stdout belongs to the protocol (stdio) or to
 * the one line that says where the HTTP server listens; every log and progress line goes to
 * stderr through the logger and progress sink the caller passes in.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { format } from 'node:util';
import type { EngineDeps } from '../core/engine';
import type { Logger, ProgressSink } from '../core/ports';
import { allTools } from '../core/tools';
import { createWebChat } from '../server/web-chat';
import { WorkspaceServer } from '../server/workspace';
import { bearerMatches, DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, resolveBindHost, startMcpHttpServer, type McpHttpLimits } from './http';
import { newMcpServer } from './session';
import { loadOrCreateToken, removeServerRecord, writeServerRecord } from './token';
import { errorMessage } from '../core/errors';

export { MCP_SERVER_NAME } from './session';

/** The names of every tool the server lists, for log lines. */
const TOOL_NAMES = allTools({ memory: true }).map((t) => t.name);

export interface McpStdioOptions {
  /** The workspace root; relative paths resolve against the current directory. */
  workspace: string;
  /** Must write to stderr (or nowhere): stdout carries the protocol. */
  logger: Logger;
  /** Progress of a first index build; must write to stderr as well. */
  onProgress?: ProgressSink;
  /** Overrides parts of the engine's dependencies (tests use it to set the parse workers). */
  deps?: Partial<EngineDeps>;
}

export interface McpHttpOptions extends McpStdioOptions {
  /** Address to listen on; loopback only unless `allowRemote`. Default 127.0.0.1. */
  host?: string;
  /** Port to listen on; 0 picks a free one. Default {@link DEFAULT_MCP_PORT}. */
  port?: number;
  /** Permits a non-loopback `host`: anyone who can reach the port and holds the token can read the code. */
  allowRemote?: boolean;
  limits?: Partial<McpHttpLimits>;
  /** Serve the chat UI at /chat/ too (`vlt serve`; default true). */
  chat?: boolean;
  /** Called once the server listens; the CLI prints it as one line of JSON on stdout. */
  onListening?: (info: McpHttpListening) => void;
}

export interface McpHttpListening {
  /** The MCP endpoint, e.g. http://127.0.0.1:7457/mcp. */
  url: string;
  host: string;
  port: number;
  /** Absolute path of the token file, or null when the token comes from VLT_MCP_TOKEN. */
  token_file: string | null;
  pid: number;
  /** The browser chat's one-time login link (`vlt serve`), when the chat is served. */
  chat_url?: string;
}

/** A running Streamable HTTP endpoint over a workspace server. */
export interface McpHttpEndpoint extends McpHttpListening {
  token: string;
  close(): Promise<void>;
}

/**
 * Starts the Streamable HTTP endpoint over `ws`: reads or creates the bearer token, listens,
 * and records the running server in `.vlt/mcp-server.json` for `vlt mcp info`. `vlt serve` and
 * the editor's server (`vlt lsp`) share it. `close` stops it and removes the record.
 */
export async function startMcpEndpoint(
  ws: WorkspaceServer,
  opts: { host?: string; port?: number; allowRemote?: boolean; limits?: Partial<McpHttpLimits>; logger: Logger; chat?: boolean },
): Promise<McpHttpEndpoint> {
  const { logger } = opts;
  const allowRemote = opts.allowRemote ?? false;
  const bindHost = resolveBindHost(opts.host ?? DEFAULT_MCP_HOST, allowRemote);
  const token = await loadOrCreateToken(ws.root, logger);
  const chat = opts.chat ? createWebChat(ws, logger, { bearerOk: (h) => bearerMatches(h, token.token) }) : undefined;
  const http = await startMcpHttpServer({
    host: bindHost,
    port: opts.port ?? DEFAULT_MCP_PORT,
    token: token.token,
    allowRemote,
    newSession: () => newMcpServer(ws),
    logger,
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(chat ? { routes: (req, res, pathname) => chat.handle(req, res, pathname) } : {}),
  });
  try {
    if (allowRemote) {
      logger.warn(`mcp: WARNING: listening on ${bindHost}, not only on this machine (--allow-remote).`);
      logger.warn('mcp: WARNING: anyone who can reach this port and holds the token can read the indexed code, over plain HTTP.');
      if (chat) logger.warn('mcp: WARNING: the browser chat at /chat/ is exposed too: whoever opens its one-time login link first, from any machine, can read the code through it; pass --no-chat to turn it off.');
    }
    await writeServerRecord(ws.root, { pid: process.pid, url: http.url, host: http.host, port: http.port, started: new Date().toISOString() });
  } catch (e) {
    await http.close();
    throw e;
  }
  const tokenFrom = token.source.kind === 'file' ? token.source.path : `$${token.source.name}`;
  logger.info(`mcp: serving ${TOOL_NAMES.length} tools for ${ws.root} at ${http.url} (bearer token in ${tokenFrom}; see \`vlt mcp info\`)`);
  return {
    url: http.url,
    host: http.host,
    port: http.port,
    token: token.token,
    token_file: token.source.kind === 'file' ? token.source.path : null,
    pid: process.pid,
    ...(chat ? { chat_url: `${http.url.replace(/\/mcp$/, '')}${chat.loginPath()}` } : {}),
    async close() {
      await http.close();
      await removeServerRecord(ws.root);
    },
  };
}

/**
 * Guards a long-lived server process until the returned function is called: a stray rejection
 * is logged instead of killing it, and `console` output goes to stderr. The latter is belt and
 * braces: a dependency that prints with console.log (Emscripten runtimes do, when they have
 * something to say) would corrupt the stdio protocol stream, or the HTTP server's one line.
 */
function guardProcess(logger: Logger): () => void {
  const onRejection = (e: unknown) => logger.error(`mcp: unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.on('unhandledRejection', onRejection);
  const savedConsole = { log: console.log, info: console.info, debug: console.debug };
  const toStderr = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);
  console.log = console.info = console.debug = toStderr;
  return () => {
    process.off('unhandledRejection', onRejection);
    Object.assign(console, savedConsole);
  };
}

/**
 * Watches for SIGINT, SIGTERM and SIGHUP until disposed. Installed before a server announces
 * itself: a signal that arrives while no listener is registered kills the process outright,
 * skipping the cleanup (the lock, the server record) that a listener runs.
 */
function watchSignals(): { signalled: Promise<string>; dispose(): void } {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let dispose = () => {};
  const signalled = new Promise<string>((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      dispose();
      resolve(signal);
    };
    dispose = () => {
      for (const s of signals) process.off(s, done);
    };
    for (const s of signals) process.once(s, done);
  });
  return { signalled, dispose };
}

/**
 * Serves the MCP tools over this process's stdin/stdout. Resolves when the client
 * disconnects (stdin ends) or on SIGINT/SIGTERM, after the engine is closed.
 */
export async function runMcpStdio(opts: McpStdioOptions): Promise<void> {
  const { logger } = opts;
  const host = await WorkspaceServer.open(opts);
  const server = newMcpServer(host);
  const closed = new Promise<string>((resolve) => {
    server.server.onclose = () => resolve('connection closed');
  });
  // The SDK's stdio transport does not watch for the end of stdin; the client closing its end
  // of the pipe is how an MCP client says goodbye, so watch for it here.
  const stdinEnded = new Promise<string>((resolve) => {
    process.stdin.once('end', () => resolve('stdin ended'));
    process.stdin.once('close', () => resolve('stdin ended'));
  });
  const signals = watchSignals();
  const restore = guardProcess(logger);
  try {
    await server.connect(new StdioServerTransport());
    logger.info(`mcp: serving ${TOOL_NAMES.length} tools for ${host.root}`);
    // A client starts its servers ahead of its first call: open the index now (building it when
    // there is none), and the warm-up that follows readies navigation. A failure is logged and
    // retried on a call.
    host.getEngine().catch((e: unknown) => logger.warn(`mcp: could not open the index yet: ${errorMessage(e)}`));
    logger.debug(`mcp: stopping (${await Promise.race([closed, stdinEnded, signals.signalled])})`);
    host.abort();
    await server.close().catch((e: unknown) => logger.warn(`mcp: closing failed: ${String(e)}`));
  } finally {
    signals.dispose();
    restore();
    await host.close();
    // Stdin was only paused by the transport; let it go so that the process can exit.
    process.stdin.destroy();
    logger.debug('mcp: engine closed');
  }
}

/**
 * Serves the MCP tools over Streamable HTTP until SIGINT/SIGTERM/SIGHUP, one MCP session per
 * client over one shared engine. Refuses a non-loopback address without `allowRemote`
 * (`USAGE`), reads or creates the bearer token, records the running server in
 * `.vlt/mcp-server.json` for `vlt mcp info`, and on the way out closes every session, the
 * engine, and removes the record.
 */
export async function runMcpHttp(opts: McpHttpOptions): Promise<void> {
  const { logger } = opts;
  // Argument mistakes first, before anything is created on disk.
  resolveBindHost(opts.host ?? DEFAULT_MCP_HOST, opts.allowRemote ?? false);
  const host = await WorkspaceServer.open(opts);
  const signals = watchSignals();
  const restore = guardProcess(logger);
  try {
    const endpoint = await startMcpEndpoint(host, {
      logger,
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.allowRemote !== undefined ? { allowRemote: opts.allowRemote } : {}),
      ...(opts.limits ? { limits: opts.limits } : {}),
      chat: opts.chat !== false && !host.restricted,
    });
    try {
      const { token: _token, close: _close, ...listening } = endpoint;
      if (listening.chat_url) logger.info(`chat: open ${listening.chat_url} in a browser (a one-time link; the session cookie it sets keeps you in)`);
      opts.onListening?.(listening);
      // A server is started ahead of its clients: open the index now (building it when there is
      // none), so that the first call does not wait. A failure is logged and retried on a call.
      host.getEngine().catch((e: unknown) => logger.warn(`mcp: could not open the index yet: ${errorMessage(e)}`));
      logger.debug(`mcp: stopping (${await signals.signalled})`);
      host.abort();
    } finally {
      await endpoint.close();
    }
  } finally {
    signals.dispose();
    restore();
    await host.close();
    logger.debug('mcp: engine closed');
  }
}
