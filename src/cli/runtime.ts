/**
 * How a CLI command reaches its workspace. In this process (`--no-daemon`, or the command the
 * daemon could not take) each command opens the index, the language servers and memory it
 * needs, and closes them when it is done. In the workspace daemon the same commands run against
 * the daemon's warm workspace server instead (src/cli/daemon-host.ts); the commands themselves
 * (main.ts) cannot tell the difference.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../core/engine';
import { isVltError, VltError } from '../core/errors';
import type { DryRunReport, IndexReport } from '../core/indexer';
import type { LanguageServers } from '../core/intel/lsp';
import type { Navigator } from '../core/intel/navigate';
import type { Memory } from '../core/memory';
import type { Oracle } from '../core/oracle/oracle';
import type { Logger } from '../core/ports';
import { INDEX_FILE, VLT_DIR } from '../core/store/store';
import { invokeTool, type ToolContext, type ToolDefinition } from '../core/tools/definitions';
import { ALL_TOOLS, type ToolInput, type ToolName, type ToolOutput } from '../core/tools';
import { CtagsProvider } from '../node/ctags';
import { nodeWorkspaceFs } from '../node/fs';
import { gitActivity } from '../node/git-activity';
import { gitLocateHistory } from '../node/locate-history';
import { openMemory } from '../node/memory';
import { createNodeModel, createNodeOracle } from '../node/oracle';
import { formatSeconds, type ProgressReporter } from './progress';
import { readQueue, requestCommit } from '../server/queue-state';

/**
 * The language-server client, loaded when a command asks a language server (the protocol
 * libraries cost about 7 ms of every other command's start).
 */
async function languageServers(): Promise<typeof import('../node/lsp').createLanguageServers> {
  return (await import('../node/lsp')).createLanguageServers;
}

/** The ports one command runs with: its logger and progress, both on the client's stderr. */
export interface CliWiring {
  logger: Logger;
  progress: ProgressReporter;
  signal: AbortSignal;
}

/** One workspace as a command sees it. Every method releases what it opened before it returns. */
export interface CliWorkspace {
  readonly root: string;
  /** Runs `fn` over the index, building it first (with progress) when there is none. */
  query<T>(fn: (engine: Engine) => Promise<T>): Promise<T>;
  /** Runs `fn` over the index as it is; INDEX_MISSING when there is none (`status`). */
  existing<T>(fn: (engine: Engine) => Promise<T>): Promise<T>;
  /** What an index run would do, writing nothing; `listSkipped`: with every skipped file. */
  dryRun(opts?: { listSkipped?: boolean }): Promise<DryRunReport>;
  /** An incremental index run, committed (`init`, `sync`); `force`: every file parsed again (`sync --force`). */
  index(opts?: { force?: boolean }): Promise<IndexReport>;
  /** A navigator over the index; language servers only when `lsp` (ctags always, spawned only when consulted). */
  navigate<T>(opts: { lsp: boolean }, fn: (nav: Navigator, engine: Engine, lsp: LanguageServers | undefined) => Promise<T>): Promise<T>;
  /** The oracle over the index and memory; language servers and ctags only when `lsp`. */
  oracle<T>(opts: { lsp: boolean; noLlm: boolean }, fn: (oracle: Oracle) => Promise<T>): Promise<T>;
  /** The workspace memory (threads, notes, sessions). */
  memory<T>(fn: (memory: Memory) => Promise<T>): Promise<T>;
  /**
   * Runs one agent tool as an agent's call runs it (the same schema, handler, paging and
   * errors), so that the command's `--json` is the tool's answer over MCP. `lsp`: navigation
   * may ask language servers (a tool's own `no_lsp` still applies). Throws the tool's VltError.
   */
  tool<N extends ToolName>(name: N, input: ToolInput<N>, opts?: { lsp?: boolean }): Promise<ToolOutput<N>>;
  /** Several tool calls over what one opens (the index, memory, language servers): a command that pages through a tool's answer. */
  tools<T>(fn: (call: ToolCaller) => Promise<T>, opts?: { lsp?: boolean }): Promise<T>;
}

/** Calls one agent tool by name, as {@link CliWorkspace.tool} does. */
export type ToolCaller = <N extends ToolName>(name: N, input: ToolInput<N>) => Promise<ToolOutput<N>>;

export interface CliRuntime {
  /** Where the commands run: `process` (this one) or `daemon` (for a client). */
  readonly kind: 'process' | 'daemon';
  workspace(root: string, w: CliWiring): CliWorkspace;
}

/** Commands in this process: everything opened per command and closed after it. */
/** How long `vlt coderag sync` waits for a long-lived writer to commit its queued edits and give the index lock back. */
const COMMIT_WAIT_MS = 30_000;

export const processRuntime: CliRuntime = {
  kind: 'process',
  workspace: (root, w) => new ProcessWorkspace(root, w),
};

class ProcessWorkspace implements CliWorkspace {
  constructor(
    readonly root: string,
    private readonly w: CliWiring,
  ) {}

  private get deps() {
    return { fs: nodeWorkspaceFs, logger: this.w.logger };
  }

  async query<T>(fn: (engine: Engine) => Promise<T>): Promise<T> {
    const engine = await this.openForQuery();
    try {
      return await fn(engine);
    } finally {
      await engine.close();
    }
  }

  async existing<T>(fn: (engine: Engine) => Promise<T>): Promise<T> {
    const engine = await Engine.open(this.root, this.deps, 'read');
    try {
      if (engine.isEmpty) throw new VltError('INDEX_MISSING', `no index in ${engine.root}; run \`vlt coderag init\``);
      return await fn(engine);
    } finally {
      await engine.close();
    }
  }

  async dryRun(opts: { listSkipped?: boolean } = {}): Promise<DryRunReport> {
    const engine = await Engine.open(this.root, this.deps, 'read');
    try {
      return await engine.dryRun(this.w.progress.sink, opts);
    } finally {
      await engine.close();
    }
  }

  async index(opts: { force?: boolean } = {}): Promise<IndexReport> {
    const engine = await this.openWriter();
    try {
      // A rebuild reason was already logged once by the engine when it opened the store.
      return await engine.index({ onProgress: this.w.progress.sink, signal: this.w.signal, ...(opts.force ? { force: true } : {}) });
    } finally {
      await engine.close();
    }
  }

  /**
   * Opens the index to write. While a long-lived writer (`vlt coderag watch`, an editor's server
   * of its own) holds the lock with queued edits, it is asked to commit them and give the lock
   * back (queue-state.ts), and the run waits for it, up to {@link COMMIT_WAIT_MS}.
   */
  private async openWriter(): Promise<Engine> {
    const t0 = Date.now();
    let asked = false;
    for (;;) {
      try {
        return await Engine.open(this.root, this.deps, 'write');
      } catch (e) {
        const holder = isVltError(e) && e.code === 'INDEX_LOCKED' ? readQueue(this.root) : undefined;
        if (!holder || Date.now() - t0 > COMMIT_WAIT_MS || this.w.signal.aborted) throw e;
        if (!asked) {
          requestCommit(this.root);
          this.w.logger.info(`${holder.host} (pid ${holder.pid}) holds ${holder.queue.uncommittedFiles + holder.queue.pending} edited file(s) not yet committed; asking it to commit them`);
          asked = true;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async navigate<T>(opts: { lsp: boolean }, fn: (nav: Navigator, engine: Engine, lsp: LanguageServers | undefined) => Promise<T>): Promise<T> {
    const { logger } = this.w;
    const engine = await this.openForQuery();
    const trusted = engine.config.trust.trusted;
    const lsp = opts.lsp ? (await languageServers())({ root: engine.root, logger, trusted }) : undefined;
    const tags = this.tags(engine);
    try {
      return await fn(engine.navigator({ ...(lsp ? { lsp } : {}), tags }), engine, lsp);
    } finally {
      await lsp?.dispose();
      await engine.close();
    }
  }

  async oracle<T>(opts: { lsp: boolean; noLlm: boolean }, fn: (oracle: Oracle) => Promise<T>): Promise<T> {
    const { logger } = this.w;
    const engine = await this.openForQuery();
    const lsp = opts.lsp ? (await languageServers())({ root: engine.root, logger, trusted: engine.config.trust.trusted }) : undefined;
    const tags = opts.lsp ? this.tags(engine) : undefined;
    const memory = openMemory(engine.root, logger);
    memory.catch(() => undefined);
    const intel = lsp && tags ? { lsp, tags } : undefined;
    const ctx: ToolContext = { getEngine: () => Promise.resolve(engine), fs: nodeWorkspaceFs, logger, author: 'user', signal: this.w.signal, ...(intel ? { intel: () => intel } : {}) };
    try {
      return await fn(createNodeOracle({ engine, logger, getMemory: () => memory, toolContext: ctx, noLlm: opts.noLlm, ...(intel ? { intel } : {}) }));
    } finally {
      await lsp?.dispose();
      await (await memory.catch(() => undefined))?.close();
      await engine.close();
    }
  }

  async memory<T>(fn: (memory: Memory) => Promise<T>): Promise<T> {
    const memory = await openMemory(this.root, this.w.logger);
    try {
      return await fn(memory);
    } finally {
      await memory.close();
    }
  }

  tool<N extends ToolName>(name: N, input: ToolInput<N>, opts: { lsp?: boolean } = {}): Promise<ToolOutput<N>> {
    return this.tools((call) => call(name, input), opts);
  }

  async tools<T>(fn: (call: ToolCaller) => Promise<T>, opts: { lsp?: boolean } = {}): Promise<T> {
    const { logger, signal } = this.w;
    // Opened on first use: a memory tool never opens the index, a code tool never the memory.
    let engine: Promise<Engine> | undefined;
    let memory: Promise<Memory> | undefined;
    let lsp: LanguageServers | undefined;
    let tags: CtagsProvider | undefined;
    const ctx: ToolContext = {
      getEngine: () => (engine ??= this.openForQuery()),
      // An index that exists, opened to read (no catch-up, no build): what a memory tool needs
      // to say which code an entry or note names has changed since.
      peekEngine: async () => (engine ?? (existsSync(path.join(this.root, VLT_DIR, INDEX_FILE)) ? (engine = Engine.open(this.root, this.deps, 'read')) : undefined)),
      getMemory: () => (memory ??= openMemory(this.root, logger)),
      fs: nodeWorkspaceFs,
      logger,
      signal,
      author: 'user',
      intel: (e) => ({ ...(lsp ? { lsp } : {}), tags: (tags ??= this.tags(e)) }),
      // What the workspace server's tools read too, so that an answer is the same from either.
      locateHistory: (e, s) => gitLocateHistory(e.root, logger).get(s),
      gitActivity: (e, s) => gitActivity(e.root, logger).read(s),
      getModel: async () => createNodeModel((await ctx.getEngine()).config, logger),
    };
    try {
      if (opts.lsp) {
        const e = await ctx.getEngine();
        lsp = (await languageServers())({ root: e.root, logger, trusted: e.config.trust.trusted });
      }
      const call: ToolCaller = async (name, input) => {
        const def = ALL_TOOLS.find((t) => t.name === name);
        if (!def) throw new VltError('USAGE', `no tool named ${name}`);
        const outcome = await invokeTool(def as ToolDefinition, ctx, input);
        if (!outcome.ok) throw outcome.error;
        return outcome.value as ToolOutput<typeof name>;
      };
      return await fn(call);
    } finally {
      await lsp?.dispose();
      await (await memory?.catch(() => undefined))?.close();
      await (await engine?.catch(() => undefined))?.close();
    }
  }

  private tags(engine: Engine): CtagsProvider {
    return new CtagsProvider({
      root: engine.root,
      files: () => engine.store.listFiles().map((f) => f.path),
      generation: () => engine.store.generation,
      logger: this.w.logger,
      trusted: engine.config.trust.trusted,
    });
  }

  /** Opens the index for reading; if there is none yet, builds it first with progress. */
  private openForQuery(): Promise<Engine> {
    const { logger, progress, signal } = this.w;
    return Engine.openOrBuild(this.root, this.deps, {
      keep: 'writer',
      onProgress: progress.sink,
      signal,
      onBuilding: () => logger.info(`no index in ${this.root} yet; building it first`),
      onBuilt: (report) => logger.info(summarizeIndexLine(report)),
    });
  }
}

/** One line about an index run, as `init` prints it and a first build logs it. */
export function summarizeIndexLine(r: IndexReport): string {
  const secs = r.ms.total / 1000;
  const parts = [
    `indexed ${r.filesParsed} files (${r.filesUnchanged} unchanged, ${r.filesRemoved} removed, ${r.filesSkipped} skipped${r.filesNavigationOnly ? `, ${r.filesNavigationOnly} generated for navigation only` : ''})`,
    `${r.chunksAdded} chunks`,
  ];
  if (r.embedded || r.embeddingCacheHits) parts.push(`${r.embedded} embedded, ${r.embeddingCacheHits} from cache`);
  if (r.vectorsPending) parts.push(`${r.vectorsPending} without a vector yet (the embedding endpoint failed; the next sync embeds them)`);
  parts.push(`in ${secs < 10 ? `${r.ms.total.toFixed(0)} ms` : formatSeconds(secs)}`);
  const line = parts.join(', ');
  return r.resumed !== undefined ? `resumed a build that had stopped (${r.resumed} files were already indexed); ${line}` : line;
}

/**
 * An engine over a tree the CLI made itself (the history eval's scratch checkout of a parent
 * commit): a writer, with vectors only when asked for.
 */
export function openScratchEngine(root: string, logger: Logger, opts: { embeddings: boolean }): Promise<Engine> {
  return Engine.open(root, { fs: nodeWorkspaceFs, logger, ...(opts.embeddings ? {} : { embeddingProvider: null }) }, 'write');
}
