/**
 * The MCP host's one wiring file: it creates the engine (lazily, on the first tool call),
 * builds the tool context, and serves the core tools over stdio until the client goes away.
 * Stdout belongs to the protocol alone; every log and progress line goes to stderr through
 * the logger and progress sink the caller passes in.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as path from 'node:path';
import { format } from 'node:util';
import { version as packageVersion } from '../../package.json';
import { Engine, type EngineDeps } from '../core/engine';
import { VltError } from '../core/errors';
import type { Logger, ProgressSink } from '../core/ports';
import { TOOLS, type ToolContext } from '../core/tools/definitions';
import { nodeWorkspaceFs } from '../node/fs';
import { createMcpServer } from './server';

export const MCP_SERVER_NAME = 'vlt-oracle';

const INSTRUCTIONS = [
  'Vlt Oracle indexes the source code of this workspace.',
  'Use search_code to find definitions, implementations and uses by identifier, words, path fragment or pasted error text before opening files; follow next_cursor for more hits.',
  'Use index_status to see what is indexed and what was skipped.',
].join(' ');

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

/**
 * Serves the MCP tools over this process's stdin/stdout. Resolves when the client
 * disconnects (stdin ends) or on SIGINT/SIGTERM, after the engine is closed.
 */
export async function runMcpStdio(opts: McpStdioOptions): Promise<void> {
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
  const ctx: ToolContext = {
    fs: nodeWorkspaceFs,
    logger,
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

  const server = createMcpServer(TOOLS, ctx, { name: MCP_SERVER_NAME, version: packageVersion, instructions: INSTRUCTIONS });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  const stop = (why: string) => {
    if (shutdown.signal.aborted) return;
    logger.debug(`mcp: stopping (${why})`);
    shutdown.abort();
    server.close().catch((e: unknown) => logger.warn(`mcp: closing failed: ${String(e)}`));
  };
  // A long-lived server must not die of one stray rejection: it is logged, and serving goes on.
  const onRejection = (e: unknown) => logger.error(`mcp: unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  // The SDK's stdio transport does not watch for the end of stdin; the client closing its end
  // of the pipe is how an MCP client says goodbye, so watch for it here.
  const onEnd = () => stop('stdin ended');
  const onSignal = (signal: NodeJS.Signals) => stop(signal);
  process.stdin.once('end', onEnd);
  process.stdin.once('close', onEnd);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.on('unhandledRejection', onRejection);
  // Belt and braces: a dependency that prints with console.log (Emscripten runtimes do, when
  // they have something to say) would corrupt the protocol stream, so console goes to stderr.
  const savedConsole = { log: console.log, info: console.info, debug: console.debug };
  const toStderr = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);
  console.log = console.info = console.debug = toStderr;
  try {
    await server.connect(new StdioServerTransport());
    logger.info(`mcp: serving ${TOOLS.map((t) => t.name).join(', ')} for ${root}`);
    await closed;
    logger.debug('mcp: connection closed');
  } finally {
    shutdown.abort();
    process.stdin.off('end', onEnd);
    process.stdin.off('close', onEnd);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('unhandledRejection', onRejection);
    Object.assign(console, savedConsole);
    const open = engine;
    engine = undefined;
    if (open) {
      try {
        await (await open).close();
      } catch {
        // An engine that never opened (or whose build was cancelled) has nothing to close.
      }
    }
    // Stdin was only paused by the transport; let it go so that the process can exit.
    process.stdin.destroy();
    logger.debug('mcp: engine closed');
  }
}
