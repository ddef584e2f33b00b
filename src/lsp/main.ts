/**
 * The LSP host's one wiring file: `vlt lsp --stdio` serves one workspace to an editor. It runs
 * the workspace server core (engine, delta queue, memory, oracle, the agent tools) and, unless
 * the workspace is untrusted, the MCP endpoint on loopback, all in this one process, so that the
 * editor, its chat and external agents share one index and one session.
 *
 * What it speaks (see `src/protocol/lsp.ts` for the custom part; `handlers.ts` answers,
 * `session.ts` holds what one editor's connection knows):
 * - standard LSP: `workspace/symbol` over the index's symbols; `textDocument/definition`,
 *   `references` and `hover` from the index for the languages the client lists as having no
 *   other provider; saves and watched-file events feed the delta queue;
 * - `vlt/*` requests: search, where used / defined, repo map, status, reindex, sync, tool;
 * - the chat (`src/server/chat.ts`): `vlt/ask` streaming `vlt/askEvent`, sessions, citations;
 * - `vlt/editor.*` requests to the client, which answer with the editor's live language
 *   servers: the navigation chain asks them first.
 * Stdout carries the protocol only; logs go to the client (window/logMessage) and stderr.
 */
import { format } from 'node:util';
import { createConnection, ProposedFeatures, type Connection } from 'vscode-languageserver/node';
import { errorMessage } from '../core/errors';
import type { Logger } from '../core/ports';
import { HANDLERS } from './handlers';
import { LspSession, type LspSessionOptions } from './session';

export type { McpEndpoint } from './session';

export interface LspServerOptions extends LspSessionOptions {
  /** Where the protocol runs; default this process's stdin/stdout. */
  connection?: Connection;
  /** Settles when the transport closed without an `exit` (the editor went away). */
  closed?: Promise<void>;
}

/** Runs the server until the client sends `exit` or closes the stream. */
export function runLspServer(opts: LspServerOptions): Promise<void> {
  const connection = opts.connection ?? createConnection(ProposedFeatures.all, process.stdin, process.stdout);
  const logLevel = { debug: false };
  const logger = connectionLogger(connection, logLevel);
  // Anything printed with console.log would corrupt the protocol stream.
  if (!opts.connection) console.log = console.info = console.debug = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);
  const session = new LspSession(connection, logger, logLevel, opts);
  connection.onInitialize((params) => session.initialize(params));
  connection.onInitialized(() => void session.initialized().catch((e: unknown) => logger.error(`start-up failed: ${errorMessage(e)}`)));
  for (const register of HANDLERS) register(connection, session);
  connection.onShutdown(() => session.finish());
  return new Promise<void>((resolve) => {
    connection.onExit(() => void session.finish().then(resolve));
    // The editor went away without `exit` (killed, a closed pipe): leave as after a shutdown.
    void opts.closed?.then(() => session.finish().then(resolve));
    connection.listen();
  });
}

/** Logs to the client's output (window/logMessage); debug lines only when the client asks for them. */
function connectionLogger(connection: Connection, level: { debug: boolean }): Logger {
  const text = (m: string, rest: unknown[]) => (rest.length ? `${m} ${rest.map((r) => (r instanceof Error ? (r.stack ?? r.message) : String(r))).join(' ')}` : m);
  return {
    debug: (m, ...rest) => {
      if (level.debug) connection.console.log(text(m, rest));
    },
    info: (m, ...rest) => connection.console.info(text(m, rest)),
    warn: (m, ...rest) => connection.console.warn(text(m, rest)),
    error: (m, ...rest) => connection.console.error(text(m, rest)),
  };
}
