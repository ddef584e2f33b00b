/**
 * The MCP host's one wiring file: it creates the engine (lazily, on the first tool call, and
 * shared by every session), builds the tool context, and serves the core tools over stdio
 * (`vlt mcp`) or Streamable HTTP (`vlt serve`). Stdout belongs to the protocol (stdio) or to
 * the one line that says where the HTTP server listens; every log and progress line goes to
 * stderr through the logger and progress sink the caller passes in.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as path from 'node:path';
import { format } from 'node:util';
import { version as packageVersion } from '../../package.json';
import { Engine, type EngineDeps } from '../core/engine';
import { VltError } from '../core/errors';
import type { Logger, ProgressSink } from '../core/ports';
import type { LanguageServers } from '../core/intel/lsp';
import { agentIdFromClientInfo, DEFAULT_SESSION_ID, recordToolExchange, type Memory } from '../core/memory';
import type { ToolContext, ToolDefinition } from '../core/tools/definitions';
import { allTools } from '../core/tools';
import { CtagsProvider } from '../node/ctags';
import { createLanguageServers } from '../node/lsp';
import { openMemory } from '../node/memory';
import { createNodeOracle } from '../node/oracle';
import type { Oracle } from '../core/oracle/oracle';
import { nodeWorkspaceFs } from '../node/fs';
import { DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, resolveBindHost, startMcpHttpServer, type McpHttpLimits } from './http';
import { createMcpServer } from './server';
import { loadOrCreateToken, removeServerRecord, writeServerRecord } from './token';

export const MCP_SERVER_NAME = 'vlt-oracle';

/** How long the server waits without a call before it folds the session journal. */
const IDLE_FOLD_MS = 1500;

const INSTRUCTIONS = [
  'Vlt Oracle indexes the source code of this workspace and keeps its notes and development threads.',
  'Start with ask_oracle for any question about how this codebase works, where something is used, or why it changed: one call returns a short answer citing [path:line], instead of many file reads.',
  'Use search_code to find definitions, implementations and uses by identifier, words, path fragment or pasted error text before opening files; follow next_cursor for more hits.',
  'Use find_definition and find_references for exact navigation (a language server when one runs, else the index, with provenance on every answer), and get_repo_map for an overview ranked by importance.',
  'Notes (search_notes, read_note, ...) hold the project knowledge; threads (thread_push, thread_read, thread_seek) are development memory across sessions.',
  'Use index_status to see what is indexed and what was skipped.',
].join(' ');

/** The names of every tool the server lists, for log lines. */
const TOOL_NAMES = allTools({ getMemory: () => Promise.reject(new Error('unused')) }).map((t) => t.name);

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
}

/** What both transports share: the workspace, one tool context over one engine, and its end. */
interface McpHost {
  root: string;
  ctx: ToolContext;
  /** A fresh MCP server over the shared context: one per stdio connection or HTTP session. */
  newServer(): McpServer;
  /** Refuses further engine opens and cancels a first index build in progress. */
  abort(): void;
  /** Closes the engine, if it was opened. */
  close(): Promise<void>;
}

async function openHost(opts: McpStdioOptions): Promise<McpHost> {
  const root = path.resolve(opts.workspace);
  const { logger } = opts;
  const deps: EngineDeps = { fs: nodeWorkspaceFs, logger, ...opts.deps };
  const shutdown = new AbortController();
  // A workspace that is not there is a configuration mistake: fail at once, where the client
  // shows the server as failed with this message, rather than on every tool call.
  const st = await nodeWorkspaceFs.stat(root).catch(() => undefined);
  if (!st) throw new VltError('PATH_NOT_FOUND', `workspace ${root} does not exist`);
  if (st.kind !== 'dir') throw new VltError('NOT_A_DIRECTORY', `workspace ${root} is not a directory`);

  /**
   * Opens the index for reading. With no index yet, a writer builds it first and is closed
   * again at once: a long-lived server must not hold the writer lock, or `vlt coderag sync`
   * in a terminal would fail for as long as the agent runs.
   */
  const openEngine = async (): Promise<Engine> => {
    const reader = await Engine.open(root, deps, 'read');
    if (!reader.isEmpty) return reader;
    await reader.close();
    logger.info(`no index in ${root} yet; building it first`);
    const writer = await Engine.open(root, deps, 'write');
    try {
      const r = await writer.index({ signal: shutdown.signal, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
      logger.info(`indexed ${r.filesParsed} files, ${r.chunksAdded} chunks in ${r.ms.total.toFixed(0)} ms`);
    } finally {
      await writer.close();
    }
    return Engine.open(root, deps, 'read');
  };

  let engine: Promise<Engine> | undefined;
  let memory: Promise<Memory> | undefined;
  const getMemory = (): Promise<Memory> => {
    if (shutdown.signal.aborted) return Promise.reject(new VltError('CANCELLED', 'the server is shutting down'));
    memory ??= openMemory(root, logger).catch((e: unknown) => {
      memory = undefined;
      throw e;
    });
    return memory;
  };
  // Language servers start on the first navigation call that needs one; ctags runs once per
  // index generation. Both belong to the host, which ends them when it stops.
  let lsp: LanguageServers | undefined;
  const tagsByEngine = new WeakMap<Engine, CtagsProvider>();
  const intel = (e: Engine) => {
    lsp ??= createLanguageServers({ root, logger });
    let tags = tagsByEngine.get(e);
    if (!tags) {
      tags = new CtagsProvider({ root, files: () => e.store.listFiles().map((f) => f.path), generation: () => e.store.generation, logger });
      tagsByEngine.set(e, tags);
    }
    return { lsp, tags };
  };
  /** Every call and its result go into the shared session context, attributed to the client. */
  // Calls are recorded one after another, and ask_oracle waits for the earlier ones, so that a
  // follow-up ("what calls it?") always sees the call it follows.
  let recorded: Promise<void> = Promise.resolve();
  // A record is one append to the session journal; folding the journal into the store
  // (token counts, compression, a rewrite of memory.db) is work for when the server is idle,
  // so that it never lands between an agent's calls.
  let idleFold: NodeJS.Timeout | undefined;
  const foldWhenIdle = () => {
    clearTimeout(idleFold);
    idleFold = setTimeout(() => {
      recorded = recorded.then(() =>
        getMemory()
          .then((m) => m.session(DEFAULT_SESSION_ID).settle())
          .catch((e: unknown) => logger.warn(`mcp: could not fold the session journal: ${e instanceof Error ? e.message : String(e)}`)),
      );
    }, IDLE_FOLD_MS);
    idleFold.unref();
  };
  const onCall = (call: { tool: string; author: string; input: unknown; outcome: { ok: true; value: object } | { ok: false; error: VltError } }) => {
    // Queued after the answer has gone out: recording must not delay it.
    setImmediate(() => {
      recorded = recorded.then(() => record(call));
      foldWhenIdle();
    });
  };
  const record = (call: Parameters<typeof onCall>[0]): Promise<void> =>
    getMemory()
      .then((m) =>
        recordToolExchange(m.session(DEFAULT_SESSION_ID), {
          tool: call.tool,
          author: call.author,
          input: call.input,
          output: call.outcome.ok ? call.outcome.value : undefined,
          ...(call.outcome.ok ? {} : { error: `${call.outcome.error.code}: ${call.outcome.error.message}` }),
        }),
      )
      .catch((e: unknown) => logger.warn(`mcp: could not record ${call.tool} in the session: ${e instanceof Error ? e.message : String(e)}`));
  const oracles = new WeakMap<Engine, Oracle>();
  const ctx: ToolContext = {
    fs: nodeWorkspaceFs,
    logger,
    intel,
    session: DEFAULT_SESSION_ID,
    sessionSettled: () => recorded,
    getOracle(e) {
      let o = oracles.get(e);
      if (!o) {
        o = createNodeOracle({ engine: e, logger, getMemory, intel: intel(e), toolContext: ctx });
        oracles.set(e, o);
      }
      return Promise.resolve(o);
    },
    getEngine() {
      if (shutdown.signal.aborted) return Promise.reject(new VltError('CANCELLED', 'the server is shutting down'));
      // Concurrent first calls share one open; a failed open (the writer lock held by a
      // terminal's `vlt coderag init`, say) is forgotten so that the next call tries again.
      engine ??= openEngine().catch((e: unknown) => {
        engine = undefined;
        throw e;
      });
      return engine;
    },
  };
  return {
    root,
    ctx,
    newServer: () => {
      // The author of a thread entry defaults to the client of the session that wrote it.
      const session: { server?: McpServer } = {};
      const author = () => {
        const v = session.server?.server.getClientVersion();
        return v ? agentIdFromClientInfo(v) : undefined;
      };
      const tools: readonly ToolDefinition[] = allTools({ getMemory, memory: { author } });
      session.server = createMcpServer(tools, ctx, { name: MCP_SERVER_NAME, version: packageVersion, instructions: INSTRUCTIONS, onCall });
      return session.server;
    },
    abort: () => shutdown.abort(),
    async close() {
      clearTimeout(idleFold);
      shutdown.abort();
      await lsp?.dispose();
      const openMem = memory;
      memory = undefined;
      if (openMem) await openMem.then((m) => m.close()).catch(() => undefined);
      const open = engine;
      engine = undefined;
      if (!open) return;
      try {
        await (await open).close();
      } catch {
        // An engine that never opened (or whose build was cancelled) has nothing to close.
      }
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
  const host = await openHost(opts);
  const server = host.newServer();
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
  const allowRemote = opts.allowRemote ?? false;
  // Argument mistakes first, before anything is created on disk.
  const bindHost = resolveBindHost(opts.host ?? DEFAULT_MCP_HOST, allowRemote);
  const port = opts.port ?? DEFAULT_MCP_PORT;
  const host = await openHost(opts);
  const signals = watchSignals();
  const restore = guardProcess(logger);
  try {
    const token = await loadOrCreateToken(host.root, logger);
    const http = await startMcpHttpServer({ host: bindHost, port, token: token.token, allowRemote, newSession: host.newServer, logger, ...(opts.limits ? { limits: opts.limits } : {}) });
    try {
      if (allowRemote) {
        logger.warn(`mcp: WARNING: listening on ${bindHost}, not only on this machine (--allow-remote).`);
        logger.warn('mcp: WARNING: anyone who can reach this port and holds the token can read the indexed code, over plain HTTP.');
      }
      await writeServerRecord(host.root, { pid: process.pid, url: http.url, host: http.host, port: http.port, started: new Date().toISOString() });
      const tokenFile = token.source.kind === 'file' ? token.source.path : null;
      const tokenFrom = token.source.kind === 'file' ? token.source.path : `$${token.source.name}`;
      logger.info(`mcp: serving ${TOOL_NAMES.length} tools for ${host.root} at ${http.url} (bearer token in ${tokenFrom}; see \`vlt mcp info\`)`);
      opts.onListening?.({ url: http.url, host: http.host, port: http.port, token_file: tokenFile, pid: process.pid });
      // A server is started ahead of its clients: open the index now (building it when there is
      // none), so that the first call does not wait. A failure is logged and retried on a call.
      host.ctx.getEngine().catch((e: unknown) => logger.warn(`mcp: could not open the index yet: ${e instanceof Error ? e.message : String(e)}`));
      logger.debug(`mcp: stopping (${await signals.signalled})`);
      host.abort();
    } finally {
      await http.close();
      await removeServerRecord(host.root);
    }
  } finally {
    signals.dispose();
    restore();
    await host.close();
    logger.debug('mcp: engine closed');
  }
}
