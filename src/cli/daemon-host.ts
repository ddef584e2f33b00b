/**
 * What the CLI gives the workspace daemon to serve (`vlt daemon run`): its commands, each run
 * against the daemon's warm workspace server (the index, memory, language servers and ctags
 * stay open between commands) instead of opening them itself, so that what a command prints is
 * the same either way; and the sessions of `vlt lsp`, `vlt mcp` and `vlt serve` forwarded to it.
 */
import * as fs from 'node:fs';
import type * as net from 'node:net';
import * as path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createConnection, ProposedFeatures, type WatchDog } from 'vscode-languageserver';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node';
import type { DaemonHost, DaemonHosts } from '../daemon/server';
import type { Logger } from '../core/ports';
import { runLspServer } from '../lsp/main';
import { startMcpEndpoint } from '../mcp/main';
import { newMcpServer } from '../mcp/session';
import type { CliIo } from '../protocol/cli';
import { runCommand } from './main';
import { processRuntime, type CliRuntime, type CliWiring, type CliWorkspace, type ToolCaller } from './runtime';
import type { Engine } from '../core/engine';
import { VltError } from '../core/errors';
import type { DryRunReport, IndexReport } from '../core/indexer';
import type { LanguageServers } from '../core/intel/lsp';
import type { Navigator } from '../core/intel/navigate';
import type { Memory } from '../core/memory';
import type { Oracle } from '../core/oracle/oracle';
import type { ProgressSink } from '../core/ports';
import { INDEX_FILE } from '../core/store/store';
import type { ToolContext } from '../core/tools/definitions';
import type { ToolInput, ToolName, ToolOutput } from '../core/tools';
import { createNodeOracle } from '../node/oracle';
import type { WorkspaceServer } from '../server/workspace';

/** The daemon's hosts: the CLI's commands, editor sessions, MCP sessions and the HTTP endpoint. */
export function daemonHosts(logger: Logger): DaemonHosts {
  return (server): DaemonHost => {
    const runtime = new DaemonRuntime(server);
    return {
      onProgress: runtime.onProgress,
      runCommand: (argv: readonly string[], io: CliIo) => runCommand(argv, io, runtime),
      serveLsp: async (stream, closed, shared) => {
        // The LSP library's own process watch is not used: an `exit` ends the stream, not the daemon.
        const watchDog: WatchDog = { shutdownReceived: false, initialize: () => undefined, exit: () => void stream.end() };
        const connection = createConnection((l) => createProtocolConnection(new StreamMessageReader(stream), new StreamMessageWriter(stream), l), watchDog, ProposedFeatures.all);
        stream.resume();
        try {
          await runLspServer({ connection, closed, shared, startMcp: (ws, o) => startMcpEndpoint(ws, o) });
        } finally {
          connection.dispose();
        }
      },
      serveMcp: async (ws, stream: net.Socket, closed) => {
        const mcp = newMcpServer(ws);
        await mcp.connect(new StdioServerTransport(stream, stream));
        stream.resume();
        await closed;
        await mcp.close().catch(() => undefined);
      },
      serveHttp: (ws, opts) => startMcpEndpoint(ws, { logger, ...opts }),
    };
  };
}

class DaemonRuntime implements CliRuntime {
  readonly kind = 'daemon' as const;
  /** The progress of every command waiting on an index build, which the build reports to. */
  private readonly watchers = new Set<ProgressSink>();

  constructor(private readonly server: () => WorkspaceServer) {}

  /** The workspace server's progress sink: an index build shows on each waiting command's stderr. */
  readonly onProgress: ProgressSink = (ev) => {
    for (const w of this.watchers) w(ev);
  };

  workspace(root: string, w: CliWiring): CliWorkspace {
    const ws = this.server();
    // Another workspace than the daemon's (the front forwards only its own): run it here.
    if (realpath(root) !== ws.root) return processRuntime.workspace(root, w);
    return new DaemonWorkspace(ws, w, this.watchers);
  }
}

class DaemonWorkspace implements CliWorkspace {
  constructor(
    private readonly ws: WorkspaceServer,
    private readonly w: CliWiring,
    private readonly watchers: Set<ProgressSink>,
  ) {}

  get root(): string {
    return this.ws.root;
  }

  query<T>(fn: (engine: Engine) => Promise<T>): Promise<T> {
    return this.watching(() => this.ws.read(fn));
  }

  existing<T>(fn: (engine: Engine) => Promise<T>): Promise<T> {
    if (!this.ws.opened && !fs.existsSync(path.join(this.ws.root, '.vlt', INDEX_FILE))) {
      return Promise.reject(new VltError('INDEX_MISSING', `no index in ${this.ws.root}; run \`vlt coderag init\``));
    }
    return this.query(fn);
  }

  dryRun(opts: { listSkipped?: boolean } = {}): Promise<DryRunReport> {
    // Reads the workspace, not the index: the same as in a process of its own.
    return processRuntime.workspace(this.ws.root, this.w).dryRun(opts);
  }

  async index(opts: { force?: boolean } = {}): Promise<IndexReport> {
    const fresh = !this.ws.opened && !fs.existsSync(path.join(this.ws.root, '.vlt', INDEX_FILE));
    await this.watching(() => this.ws.getEngine());
    // There was no index: opening built it, and that build is this command's answer.
    if (fresh && this.ws.firstBuild) return this.ws.firstBuild;
    return this.ws.reindex({ onProgress: this.w.progress.sink, signal: this.w.signal, ...(opts.force ? { force: true } : {}) });
  }

  navigate<T>(opts: { lsp: boolean }, fn: (nav: Navigator, engine: Engine, lsp: LanguageServers | undefined) => Promise<T>): Promise<T> {
    return this.query((engine) => {
      const intel = this.ws.intel(engine);
      const lsp = opts.lsp ? intel.lsp : undefined;
      return fn(engine.navigator({ ...(lsp ? { lsp } : {}), ...(intel.tags ? { tags: intel.tags } : {}) }), engine, lsp);
    });
  }

  oracle<T>(opts: { lsp: boolean; noLlm: boolean }, fn: (oracle: Oracle) => Promise<T>): Promise<T> {
    return this.query((engine) => {
      const { logger, signal } = this.w;
      const intel = opts.lsp ? this.ws.intel(engine) : undefined;
      const ctx: ToolContext = {
        getEngine: () => Promise.resolve(engine),
        fs: this.ws.ctx.fs,
        logger,
        author: 'user',
        signal,
        ...(intel ? { intel: () => intel } : {}),
      };
      return fn(createNodeOracle({ engine, logger, getMemory: () => this.ws.getMemory(), toolContext: ctx, noLlm: opts.noLlm, ...(intel ? { intel } : {}) }));
    });
  }

  async memory<T>(fn: (memory: Memory) => Promise<T>): Promise<T> {
    // The daemon's memory stays open for the next command.
    return fn(await this.ws.getMemory());
  }

  tool<N extends ToolName>(name: N, input: ToolInput<N>): Promise<ToolOutput<N>> {
    // Language servers: the daemon's warm ones (a tool's own `no_lsp` still applies). A
    // terminal's command is not recorded in the shared session, as in a process of its own.
    return this.watching(() => this.ws.call(name, input, { author: 'user', signal: this.w.signal, record: false }));
  }

  tools<T>(fn: (call: ToolCaller) => Promise<T>): Promise<T> {
    // The daemon keeps what a call opens: each call is one tool call to its warm workspace.
    return fn((name, input) => this.tool(name, input));
  }

  /** Runs `fn` with this command's progress shown for an index build it waits on. */
  private async watching<T>(fn: () => Promise<T>): Promise<T> {
    // Only a build shows: catching up with edits made while no daemon ran is the daemon's own business.
    if (this.ws.opened || fs.existsSync(path.join(this.ws.root, '.vlt', INDEX_FILE))) return fn();
    const sink = this.w.progress.sink;
    this.watchers.add(sink);
    try {
      return await fn();
    } finally {
      this.watchers.delete(sink);
    }
  }
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
