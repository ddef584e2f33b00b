/**
 * The workspace server core: what every long-lived host of one workspace holds once, whatever
 * its transport (`vlt mcp` over stdio, `vlt serve` over HTTP, `vlt lsp` for the editor):
 * the engine, memory, the oracle, language servers and ctags, the agent tools over one tool
 * context, and the shared session every call is recorded in.
 *
 * - The engine opens on first use (building the index when there is none). A writer host (the
 *   editor's server) keeps a write-mode engine and a {@link DeltaQueue}; it takes the writer
 *   lock only while it has work to write and gives it back after each commit, so that a
 *   terminal's `vlt coderag sync` can write while the editor is open.
 * - Every request runs through {@link WorkspaceServer.read}: before the first request after a
 *   quiet moment, an index committed by another process is loaded, and queued edits are
 *   indexed; both wait for the requests in flight, so that no answer mixes two index states.
 * - Restricted (an untrusted workspace): no model or embedding endpoint is called, and nothing
 *   the workspace could influence runs (no language server, ctags or git process).
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { cancelledError, raceAbort } from '../core/abort';
import { loadConfig } from '../core/config';
import { changedLineCount, DeltaQueue, type DeltaQueueState } from '../core/delta-queue';
import { Engine, type EngineDeps, type StatusReport } from '../core/engine';
import { VltError, errorMessage } from '../core/errors';
import type { IndexReport } from '../core/indexer';
import { chainLanguageServers, type LanguageServerInfo, type LanguageServers } from '../core/intel/lsp';
import type { TagsProvider } from '../core/intel/navigate';
import { DEFAULT_SESSION_ID, recordToolExchange, type Memory, type SessionSummary } from '../core/memory';
import { checkSessionId, type SessionEvent } from '../core/memory/session';
import { INDEX_FILE, VLT_DIR } from '../core/store/store';
import type { Oracle } from '../core/oracle/oracle';
import { languageForPath } from '../core/parse/languages';
import type { Logger, ProgressSink } from '../core/ports';
import { allTools, type ToolInput, type ToolName, type ToolOutput } from '../core/tools';
import { invokeTool, type ToolContext, type ToolDefinition, type ToolOutcome } from '../core/tools/definitions';
import { CtagsProvider } from '../node/ctags';
import { nodeWorkspaceFs } from '../node/fs';
import { createLanguageServers } from '../node/lsp';
import { gitLocateHistory } from '../node/locate-history';
import { gitActivity } from '../node/git-activity';
import { openMemory } from '../node/memory';
import { createNodeModel, createNodeOracle } from '../node/oracle';
import { StateGate } from './gate';
import { publishQueue, takeCommitRequest, unpublishQueue } from './queue-state';

/** How often a paused warm-up looks again whether the server is idle. */
const WARM_POLL_MS = 200;

/** How long the server waits without a call before it folds the session journal. */
const IDLE_FOLD_MS = 1500;
/** How often a writer holding queued edits looks for another process's commit request. */
const COMMIT_REQUEST_POLL_MS = 250;

export interface WorkspaceServerOptions {
  /** The workspace root; relative paths resolve against the current directory. */
  workspace: string;
  logger: Logger;
  /** Progress of index builds (the first one, and reindex without its own sink). */
  onProgress?: ProgressSink;
  /** Overrides parts of the engine's dependencies (tests set the parse workers). */
  deps?: Partial<EngineDeps>;
  /** Keep a write-mode engine and a delta queue (the editor's server); default: a reader. */
  writer?: boolean;
  /** An untrusted workspace: no models, no embeddings, no spawned helper processes. */
  restricted?: boolean;
  /**
   * The host's trust decision for the workspace's own settings and programs (vlt.toml's
   * endpoints and keys, its TypeScript); undefined lets `vlt trust` decide.
   */
  trusted?: boolean;
  /** Spawn headless language servers for navigation (default true). */
  headlessLanguageServers?: boolean;
  /** The editor's live language servers, asked before the headless ones. */
  editorLanguageServers?: LanguageServers;
  /** Overrides the delta queue's thresholds from vlt.toml. */
  queue?: { files?: number; lines?: number; timeoutMs?: number };
  /** Called when the queue's or the index's state changed (status bars). */
  onState?: () => void;
  /** Names this host in `.vlt/queue.json`, where a writer publishes its queue for `vlt coderag status`. */
  hostName?: string;
  /** The shared session to start in (the chat's last one); default `default`. */
  session?: string;
}

/** A client that follows a server's state changes and index progress. */
export interface StateListener {
  onState?: () => void;
  onProgress?: ProgressSink;
}

/** What {@link WorkspaceServer.status} reports: the index, the queue, and the helpers seen. */
export interface WorkspaceStatus {
  state: 'starting' | 'indexing' | 'ready' | 'error';
  index: StatusReport | null;
  generation: number;
  queue: DeltaQueueState | null;
  languageServers: LanguageServerInfo[];
  restricted: boolean;
  error: { code: string; message: string } | null;
  progress: IndexProgress | null;
  /**
   * The index holds only the files a build saved before it was cancelled (or stopped): their
   * number, else null. Searches say so; a sync or re-index finishes the build.
   */
  partialFiles: number | null;
}

/** An index run's progress: files done of all, and once it has run a while, its rate and time left. */
export interface IndexProgress {
  phase: string;
  done: number;
  total: number;
  /** Items per second in this phase (set after the first seconds). */
  rate?: number;
  /** Seconds this phase needs at that rate. */
  secondsLeft?: number;
}

/** Seconds of a phase before its rate is reported: the first files are not representative. */
const RATE_AFTER_SECONDS = 1;

/** How a host's own client calls a tool. */
export interface CallOptions {
  author: string;
  signal?: AbortSignal;
  onEvent?: ToolContext['onEvent'];
  chat?: ToolContext['chat'];
  /** Record the call in the shared session (default true). */
  record?: boolean;
}

export class WorkspaceServer {
  readonly root: string;
  /** The tool context every transport's calls run in. */
  readonly ctx: ToolContext;
  readonly queue: DeltaQueue | undefined;
  private readonly deps: EngineDeps;
  private readonly logger: Logger;
  private readonly shutdown = new AbortController();
  /** Cancels the index build in progress (the user pressed Cancel on its progress). */
  private indexAbort = new AbortController();
  private readonly gate = new StateGate();
  private engine: Promise<Engine> | undefined;
  private memory: Promise<Memory> | undefined;
  private lsp: LanguageServers | undefined;
  /** The editors' live language servers, the most recently attached first. */
  private readonly editors: LanguageServers[] = [];
  /** Clients that follow the state and progress (each editor attached to a shared server). */
  private readonly listeners = new Set<StateListener>();
  private readonly tagsByEngine = new WeakMap<Engine, CtagsProvider>();
  private readonly oracles = new WeakMap<Engine, Oracle>();
  private recorded: Promise<void> = Promise.resolve();
  /** The shared session every call is recorded in and ask_oracle reads; the chat can switch it. */
  private activeSession: string;
  private idleFold: NodeJS.Timeout | undefined;
  private phase: WorkspaceStatus['state'] = 'starting';
  private lastError: VltError | null = null;
  private progress: WorkspaceStatus['progress'] = null;
  /** When the current phase's progress was first seen, and how far it was then (for its rate). */
  private progressClock: { phase: string; at: number; done: number } | undefined;
  /**
   * The user cancelled the first build: the index opens with what it saved, and is not caught up
   * in the background until a sync or re-index asks for it.
   */
  private buildPaused = false;
  /** Polls for another process's commit request while the queue holds edits (see {@link watchCommitRequests}). */
  private commitRequests: ReturnType<typeof setInterval> | undefined;

  private constructor(private readonly opts: WorkspaceServerOptions, root: string) {
    this.root = root;
    if (opts.editorLanguageServers) this.editors.push(opts.editorLanguageServers);
    this.logger = opts.logger;
    this.activeSession = opts.session !== undefined ? checkSessionId(opts.session) : DEFAULT_SESSION_ID;
    this.deps = { fs: nodeWorkspaceFs, logger: opts.logger, ...(opts.restricted ? { embeddingProvider: null } : {}), ...(this.hostTrust !== undefined ? { trusted: this.hostTrust } : {}), ...opts.deps };
    if (opts.writer) {
      this.queue = new DeltaQueue({
        logger: this.logger,
        ...(opts.queue ? { thresholds: { ...(opts.queue.files ? { maxFiles: opts.queue.files } : {}), ...(opts.queue.lines ? { maxLines: opts.queue.lines } : {}), ...(opts.queue.timeoutMs ? { timeoutMs: opts.queue.timeoutMs } : {}) } } : {}),
        onState: (state) => {
          publishQueue(this.root, opts.hostName ?? 'vlt', state);
          this.watchCommitRequests(state.uncommittedFiles > 0 || state.pending > 0);
          this.stateChanged();
        },
        target: {
          apply: (paths) => this.gate.exclusive(() => this.applyPaths(paths)),
          commit: () => this.gate.exclusive(() => this.commitWriter()),
        },
      });
    }
    const getOracle = (e: Engine): Promise<Oracle> => {
      let o = this.oracles.get(e);
      if (!o) {
        o = createNodeOracle({ engine: e, logger: this.logger, getMemory: () => this.getMemory(), intel: this.intel(e), toolContext: this.ctx, restricted: this.restricted });
        this.oracles.set(e, o);
      }
      return Promise.resolve(o);
    };
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context's getter reads the server's current session
    const server = this;
    this.ctx = {
      fs: nodeWorkspaceFs,
      logger: this.logger,
      intel: (e) => this.intel(e),
      get session() {
        return server.activeSession;
      },
      sessionSettled: () => this.recorded,
      getOracle,
      getEngine: () => this.getEngine(),
      peekEngine: () => (this.opened || existsSync(path.join(this.root, VLT_DIR, INDEX_FILE)) ? this.getEngine() : Promise.resolve(undefined)),
      getMemory: () => this.getMemory(),
      // git is not run for a restricted (untrusted) workspace, as for the oracle's history.
      ...(opts.restricted
        ? {}
        : {
            locateHistory: (e: Engine, signal?: AbortSignal) => gitLocateHistory(e.root, this.logger).get(signal),
            gitActivity: (e: Engine, signal?: AbortSignal) => gitActivity(e.root, this.logger).read(signal),
            // No model is called for an untrusted workspace.
            getModel: async () => createNodeModel((await this.getEngine()).config, this.logger),
          }),
    };
  }

  /** Checks the workspace and prepares the server; nothing is opened until first use. */
  static async open(opts: WorkspaceServerOptions): Promise<WorkspaceServer> {
    const root = path.resolve(opts.workspace);
    // A workspace that is not there is a configuration mistake: fail at once, where the client
    // shows the server as failed with this message, rather than on every call.
    const st = await nodeWorkspaceFs.stat(root).catch(() => undefined);
    if (!st) throw new VltError('PATH_NOT_FOUND', `workspace ${root} does not exist`);
    if (st.kind !== 'dir') throw new VltError('NOT_A_DIRECTORY', `workspace ${root} is not a directory`);
    if (!opts.writer) return new WorkspaceServer(opts, root);
    // The queue's thresholds: vlt.toml's [index] queue_*, each overridden by the host's own.
    const q = (await loadConfig(root, process.env, opts.restricted ? { trusted: false } : opts.trusted !== undefined ? { trusted: opts.trusted } : {})).index.queue;
    return new WorkspaceServer({ ...opts, queue: { files: q.files, lines: q.lines, timeoutMs: q.timeoutSeconds * 1000, ...opts.queue } }, root);
  }

  get restricted(): boolean {
    return this.opts.restricted === true;
  }

  /** The host's trust decision: a restricted server is never trusted; undefined lets `vlt trust` decide. */
  private get hostTrust(): boolean | undefined {
    return this.opts.restricted ? false : this.opts.trusted;
  }

  /** The engine, opened (and the index built, when there is none) on first use. */
  getEngine(): Promise<Engine> {
    if (this.shutdown.signal.aborted) return Promise.reject(new VltError('CANCELLED', 'the server is shutting down'));
    // Concurrent first calls share one open; a failed open (the writer lock held by a
    // terminal's `vlt coderag init`, say) is forgotten so that the next call tries again.
    this.engine ??= this.openEngine().catch((e: unknown) => {
      this.engine = undefined;
      this.phase = 'error';
      this.lastError = e instanceof VltError ? e : new VltError('INTERNAL', String(e));
      this.stateChanged();
      throw e;
    });
    return this.engine;
  }

  /**
   * Runs one request against a consistent index state: queued edits are indexed first (just
   * in time), and a commit of another process is loaded when no other request is in flight.
   */
  async read<T>(fn: (engine: Engine) => Promise<T>): Promise<T> {
    // Counted from the start, before any wait: the warm-up yields to a request from the moment
    // it arrives, not only once it runs.
    this.requests++;
    try {
      const engine = await this.getEngine();
      if (this.queue && this.queue.state().pending > 0) await this.queue.applyPending();
      if (this.gate.idle && (await engine.changedOnDisk().catch(() => false))) {
        await this.gate.exclusive(async () => {
          if (await engine.refresh()) {
            this.logger.info(`index: loaded generation ${engine.store.generation}, committed by another process`);
            this.stateChanged();
            this.warm(engine, true);
          }
        });
      }
      return await this.gate.read(() => fn(engine));
    } finally {
      this.requests--;
      if (this.requests === 0 && this.gate.idle) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** Requests begun and not yet answered. */
  private requests = 0;
  private idleWaiters: Array<() => void> = [];
  /** The warm-up in progress, so that a new one replaces it and close() can wait for it. */
  private warming: { abort: AbortController; done: Promise<void> } | undefined;
  /** A full warm-up (grammars included) has completed once; later ones re-warm only the graph. */
  private warmedOnce = false;

  /**
   * Resolves once no request is in flight and no exclusive step runs, after letting the event
   * loop take in what has arrived (a request's first bytes): the warm-up's turn.
   */
  private async whenIdle(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      // Shutting down: the warm-up sees it and stops.
      if ((this.requests === 0 && this.gate.idle) || this.shutdown.signal.aborted) return;
      // Woken when the last request ends; an exclusive step alone (catching up, a reload) is
      // polled, since it ends inside a request or in the background.
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, WARM_POLL_MS).unref();
      });
    }
  }

  /**
   * Warms navigation in the background (Engine.warmNavigation: the code graph, the grammars of
   * the index's languages, then ctags' tags): only while no request runs, cancelled on
   * shutdown and by a newer warm-up. `reloaded`: after a reload of a new index state, only the
   * graph, and only when that is cheap.
   */
  private warm(engine: Engine, reloaded = false): void {
    if (this.shutdown.signal.aborted) return;
    this.warming?.abort.abort();
    // A reload that interrupts the first warm-up warms everything, not only the graph.
    const graphOnly = reloaded && this.warmedOnce;
    const abort = new AbortController();
    const signal = AbortSignal.any([abort.signal, this.shutdown.signal]);
    const done = (async () => {
      const r = await engine.warmNavigation({ whenIdle: () => this.whenIdle(), signal, graphOnly });
      if (!graphOnly && !r.stopped) {
        this.warmedOnce = true;
        // Ctags runs as its own process; its tags are read into this one once, here.
        const tags = this.restricted ? undefined : this.intel(engine).tags;
        await this.whenIdle();
        if (!signal.aborted && tags instanceof CtagsProvider) await tags.warm(() => this.whenIdle());
      }
      this.logger.debug(`warm-up: graph ${r.graph}, grammars ${r.languages.join(', ') || 'none'} in ${r.ms.toFixed(0)} ms${r.stopped ? ` (stopped: ${r.stopped})` : ''}`);
    })().catch((e: unknown) => this.logger.debug(`warm-up failed: ${errorMessage(e)}`));
    const entry = { abort, done };
    this.warming = entry;
    void done.finally(() => {
      if (this.warming === entry) this.warming = undefined;
    });
  }

  /** The tools every transport offers, each call run through {@link read} and recorded in the session. */
  tools(): readonly ToolDefinition[] {
    const read = <T>(fn: () => Promise<T>) => this.read(fn);
    return allTools({ memory: true }).map(
      (def): ToolDefinition => ({
        ...def,
        handler: (ctx, input) => read(() => def.handler(ctx, input)),
      }),
    );
  }

  /**
   * Runs one tool for a host's own client (the editor, the chat, a browser): with the
   * shared context, recorded in the session like an agent's call unless `record` is false.
   * Failures throw the tool's VltError.
   */
  call<N extends ToolName>(name: N, input: ToolInput<N>, opts: CallOptions): Promise<ToolOutput<N>> {
    return this.callByName(name, input, opts) as Promise<ToolOutput<N>>;
  }

  /**
   * {@link call} for a tool named at run time (a client's `vlt/tool` request, the editor's
   * language-model tools): the name and arguments are checked here, not by the compiler.
   */
  async callByName(name: string, input: unknown, opts: CallOptions): Promise<object> {
    const def = this.tools().find((t) => t.name === name);
    if (!def) throw new VltError('USAGE', `no tool named ${name.slice(0, 100)}`);
    const ctx: ToolContext = { ...this.ctx, author: opts.author, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.onEvent ? { onEvent: opts.onEvent } : {}), ...(opts.chat ? { chat: opts.chat } : {}) };
    const outcome = await invokeTool(def, ctx, input);
    if (opts.record !== false) this.onCall({ tool: name, author: opts.author, input, outcome });
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /**
   * Records one call of any client in the shared session, after its answer has gone out.
   * Calls are recorded in order, and ask_oracle waits for the earlier ones, so that a
   * follow-up ("what calls it?") always sees the call it follows.
   */
  onCall(call: { tool: string; author: string; input: unknown; outcome: ToolOutcome<object> }): void {
    const session = this.activeSession;
    setImmediate(() => {
      this.recorded = this.recorded.then(() => this.record(session, call));
      this.foldWhenIdle(session);
    });
  }

  /** The shared session calls are recorded in now. */
  get session(): string {
    return this.activeSession;
  }

  /**
   * Makes `id` the shared session (a new one, named by the time, without `id`): every later
   * call of every client (the chat, MCP agents, language-model tools) is recorded there.
   */
  useSession(id?: string): string {
    if (id === undefined) {
      const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
      id = `chat-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
    }
    this.activeSession = checkSessionId(id);
    this.logger.info(`session: now ${this.activeSession}`);
    return this.activeSession;
  }

  /**
   * An editor joins this server (the workspace daemon's, shared with the terminal and agents):
   * its live language servers are asked first, by every client, until it leaves; `listener`
   * follows the state and the index progress. Returns the detach.
   */
  attachEditor(servers: LanguageServers | undefined, listener: StateListener): () => void {
    if (servers) this.editors.unshift(servers);
    this.listeners.add(listener);
    return () => {
      const at = servers ? this.editors.indexOf(servers) : -1;
      if (at >= 0) this.editors.splice(at, 1);
      this.listeners.delete(listener);
    };
  }

  private stateChanged(): void {
    this.opts.onState?.();
    for (const l of this.listeners) l.onState?.();
  }

  /** Recent sessions for a picker; the current one first when it has recorded nothing yet. */
  async listSessions(limit = 20): Promise<SessionSummary[]> {
    await this.recorded;
    const list = await (await this.getMemory()).listSessions(limit);
    if (list.some((s) => s.id === this.activeSession)) return list;
    const now = new Date().toISOString();
    return [{ id: this.activeSession, title: '(new session)', created_at: now, updated_at: now, exchanges: 0 }, ...list];
  }

  /** The events a session holds verbatim, oldest first, once every earlier call is recorded. */
  async sessionEvents(id: string = this.activeSession): Promise<SessionEvent[]> {
    await this.recorded;
    return (await this.getMemory()).session(checkSessionId(id)).events();
  }

  getMemory(): Promise<Memory> {
    if (this.shutdown.signal.aborted) return Promise.reject(new VltError('CANCELLED', 'the server is shutting down'));
    this.memory ??= openMemory(this.root, this.logger, { models: !this.restricted, ...(this.hostTrust !== undefined ? { trusted: this.hostTrust } : {}) }).catch((e: unknown) => {
      this.memory = undefined;
      throw e;
    });
    return this.memory;
  }

  /** Language servers (the editor's, then headless ones) and ctags, as the navigation chain reaches them. */
  intel(e: Engine): { lsp?: LanguageServers; tags?: TagsProvider } {
    if (this.restricted) return this.opts.editorLanguageServers ? { lsp: this.opts.editorLanguageServers } : {};
    if (!this.lsp) {
      // Editors come and go (attachEditor): the chain reads the current ones at each call.
      const headless = this.opts.headlessLanguageServers !== false ? createLanguageServers({ root: this.root, logger: this.logger, trusted: e.config.trust.trusted }) : undefined;
      if (headless) this.lsp = chainLanguageServers(() => [...this.editors, headless], (p) => languageForPath(p));
      else if (this.editors.length > 0) this.lsp = chainLanguageServers(() => this.editors, (p) => languageForPath(p));
    }
    let tags = this.tagsByEngine.get(e);
    if (!tags) {
      tags = new CtagsProvider({ root: this.root, files: () => e.store.listFiles().map((f) => f.path), generation: () => e.store.generation, logger: this.logger, trusted: e.config.trust.trusted });
      this.tagsByEngine.set(e, tags);
    }
    return { ...(this.lsp ? { lsp: this.lsp } : {}), tags };
  }

  /** Queues changed files (saves, file events); a writer host only. Paths are absolute or workspace-relative. */
  enqueue(paths: readonly string[]): void {
    if (!this.queue) return;
    // Only files the index could hold: an event for anything else (editor state, build output,
    // .git) would make a targeted run walk the whole workspace for nothing.
    const rel = paths
      .map((p) => (path.isAbsolute(p) ? path.relative(this.root, p) : p).split(path.sep).join('/'))
      .filter((p) => p && !p.startsWith('..') && !/(^|\/)(\.vlt|\.git|node_modules)\//.test(p) && languageForPath(p) !== undefined);
    if (rel.length) this.queue.enqueue(rel);
  }

  /**
   * While the queue holds edits not on disk (and so the index lock), another process's
   * `vlt coderag sync` may ask for them to be committed (queue-state.ts): checked four times a
   * second, the queue is then flushed and the lock given back.
   */
  private watchCommitRequests(holding: boolean): void {
    if (!holding) {
      clearInterval(this.commitRequests);
      this.commitRequests = undefined;
      return;
    }
    if (this.commitRequests) return;
    this.commitRequests = setInterval(() => {
      if (!takeCommitRequest(this.root)) return;
      this.logger.info('another process asked for the queued edits to be committed');
      this.queue?.flush().catch((e: unknown) => this.logger.warn(`could not commit the queued edits when asked: ${errorMessage(e)}`));
    }, COMMIT_REQUEST_POLL_MS);
    this.commitRequests.unref();
  }

  /** Indexes everything queued and commits ("Sync Index Now"). */
  async sync(): Promise<DeltaQueueState | null> {
    await this.getEngine();
    // A cancelled first build is finished first: the edits queued since then are part of it.
    if (this.buildPaused) await this.reindex();
    return this.queue ? this.queue.flush() : null;
  }

  /** A full incremental index run over the whole workspace, committed at the end; `force`: every file parsed again. */
  async reindex(opts: { signal?: AbortSignal; onProgress?: ProgressSink; force?: boolean } = {}): Promise<IndexReport> {
    // The caller's cancel, or the user's (cancelIndexing).
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.indexAbort.signal]) : this.indexAbort.signal;
    // A cancel stops the run at once, also while it waits: for the engine to open, for the
    // watcher's queued edits to be indexed, or for its turn at the gate. What it waited for is
    // the server's own work and goes on; only this run is given up.
    const engine = await raceAbort(this.getEngine(), signal, 'indexing');
    if (engine.mode !== 'write') throw new VltError('USAGE', 'this server reads the index; run `vlt coderag sync` to update it');
    this.buildPaused = false;
    await raceAbort(this.queue?.applyPending() ?? Promise.resolve(), signal, 'indexing');
    let admit!: () => void;
    const admitted = new Promise<void>((resolve) => (admit = resolve));
    const run = this.gate.exclusive(async () => {
      admit();
      if (signal?.aborted) throw cancelledError('indexing', signal.reason);
      await engine.acquireWriteLock();
      this.phase = 'indexing';
      this.stateChanged();
      try {
        const report = await engine.index({ onProgress: this.progressSink(opts.onProgress), signal, ...(opts.force ? { force: true } : {}) });
        await engine.commit();
        // The watcher's edits indexed before this run are committed with it.
        this.queue?.committedElsewhere();
        return report;
      } finally {
        this.phase = 'ready';
        this.clearProgress();
        if (!this.queue?.dirty) this.releaseLock(engine);
        this.stateChanged();
      }
    });
    // Once admitted, the run answers for itself: the indexer stops at its next file, and a
    // commit under way finishes (the answer then says what it committed).
    try {
      await raceAbort(admitted, signal, 'indexing');
    } catch (e) {
      run.catch(() => undefined);
      throw e;
    }
    return run;
  }

  status(): WorkspaceStatus {
    let index: StatusReport | null = null;
    let generation = 0;
    const open = this.phase === 'ready' ? this.openedEngine : undefined;
    if (open) {
      index = open.status();
      generation = open.store.generation;
    }
    return {
      state: this.phase,
      index,
      generation,
      queue: this.queue?.state() ?? null,
      languageServers: this.lsp?.status() ?? [],
      restricted: this.restricted,
      error: this.lastError ? { code: this.lastError.code, message: this.lastError.message } : null,
      progress: this.progress,
      partialFiles: open?.store.partialBuildFiles() ?? null,
    };
  }

  /**
   * Cancels the index run in progress (a first build, a re-index, or the catching up after a
   * restart) and says whether one ran. What it indexed is kept; the index answers from it and is
   * not caught up again until a sync or re-index asks.
   */
  cancelIndexing(): boolean {
    // A first build, a re-index, or the catching up after a restart (which reports progress).
    const building = this.phase === 'indexing' || this.phase === 'starting' || this.progress !== null;
    if (building) this.buildPaused = true;
    this.indexAbort.abort();
    this.indexAbort = new AbortController();
    return building;
  }

  /** Refuses further opens and cancels a first index build in progress. */
  abort(): void {
    this.shutdown.abort();
  }

  /** Commits queued work when possible, then closes everything this server opened. */
  async close(): Promise<void> {
    clearTimeout(this.idleFold);
    if (this.queue?.dirty && !this.shutdown.signal.aborted) {
      await this.queue.flush().catch((e: unknown) => this.logger.warn(`could not commit queued edits before stopping: ${String(e)}`));
    }
    this.queue?.dispose();
    clearInterval(this.commitRequests);
    if (this.queue) unpublishQueue(this.root);
    this.shutdown.abort();
    // The warm-up stops at its next slice (a ctags run it started is stopped); the engine must
    // not close under it. One waiting for an idle moment is woken now: its poll timer does not
    // keep the process alive, and with nothing else left the process would end mid-close.
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.openedEngine) this.tagsByEngine.get(this.openedEngine)?.dispose();
    await this.warming?.done;
    await this.recorded;
    await this.lsp?.dispose();
    const mem = this.memory;
    this.memory = undefined;
    if (mem) await mem.then((m) => m.close()).catch(() => undefined);
    const open = this.engine;
    this.engine = undefined;
    if (!open) return;
    try {
      await (await open).close();
    } catch {
      // An engine that never opened (or whose build was cancelled) has nothing to close.
    }
  }

  // -- internals -------------------------------------------------------------------------------

  private openedEngine: Engine | undefined;

  /** Whether background work runs: catching up with edits, or warming navigation (graph, grammars, ctags). */
  get busy(): boolean {
    return this.warming !== undefined || !this.gate.idle || this.phase !== 'ready';
  }

  /** Whether the engine is open (the index loaded, or built by this server). */
  get opened(): boolean {
    return this.openedEngine !== undefined;
  }

  /** The report of the index build this server ran because there was no index, if it ran one. */
  firstBuild: IndexReport | undefined;

  /** No index run goes on: no progress, and the next run's rate starts afresh. */
  private clearProgress(): void {
    this.progress = null;
    this.progressClock = undefined;
  }

  private progressSink(extra?: ProgressSink): ProgressSink {
    return (ev) => {
      const now = Date.now();
      let clock = this.progressClock;
      if (!clock || clock.phase !== ev.phase || ev.done < clock.done) this.progressClock = clock = { phase: ev.phase, at: now, done: ev.done };
      const seconds = (now - clock.at) / 1000;
      const rate = seconds >= RATE_AFTER_SECONDS && ev.done > clock.done ? (ev.done - clock.done) / seconds : undefined;
      this.progress = { phase: ev.phase, done: ev.done, total: ev.total, ...(rate !== undefined ? { rate: Math.round(rate * 10) / 10, secondsLeft: Math.ceil(Math.max(0, ev.total - ev.done) / rate) } : {}) };
      this.opts.onProgress?.(ev);
      for (const l of this.listeners) l.onProgress?.(ev);
      extra?.(ev);
      this.stateChanged();
    };
  }

  /**
   * A reader host opens the index read-only; with no index yet, a writer builds it first and is
   * closed again at once, so that a long-lived reader never holds the writer lock. A writer
   * host keeps its write-mode engine, brings the index up to date, and gives the lock back.
   */
  private async openEngine(): Promise<Engine> {
    this.phase = 'starting';
    this.lastError = null;
    this.stateChanged();
    const signal = AbortSignal.any([this.shutdown.signal, this.indexAbort.signal]);
    let engine: Engine;
    if (this.opts.writer) {
      engine = await Engine.open(this.root, this.deps, 'write');
      if (engine.isEmpty) {
        try {
          this.phase = 'indexing';
          this.stateChanged();
          this.logger.info(`no index in ${this.root} yet; building it`);
          let r: IndexReport;
          try {
            r = await engine.index({ signal, onProgress: this.progressSink() });
          } catch (e) {
            if (!this.buildPaused || !(e instanceof VltError) || e.code !== 'CANCELLED') throw e;
            // Cancelled by the user: the indexer saved what it had; answer from that part.
            this.logger.info(`indexing cancelled; the index holds the ${engine.store.partialBuildFiles() ?? 0} files saved so far (a sync or re-index finishes it)`);
            engine.releaseWriteLock();
            await engine.releaseParseWorkers();
            return this.becomeReady(engine);
          }
          await engine.commit();
          this.firstBuild = r;
          this.logger.info(`indexed ${r.filesParsed} files, ${r.chunksAdded} chunks in ${r.ms.total.toFixed(0)} ms`);
          engine.releaseWriteLock();
          // The workers' memory goes back; saves are parsed in this thread from now on.
          await engine.releaseParseWorkers();
          engine.warmUp();
        } catch (e) {
          await engine.close().catch(() => undefined);
          throw e;
        }
      } else if (this.buildPaused) {
        this.logger.info('the index build was cancelled: answering from what it saved until a sync or re-index finishes it');
      } else {
        // An index exists: it answers at once, and what changed while no writer ran (a branch
        // switch, edits in another editor) is caught up in the background, before the next
        // request is answered.
        void this.gate.exclusive(() => this.catchUp(engine, signal));
      }
    } else {
      engine = await Engine.openOrBuild(this.root, this.deps, {
        keep: 'reader',
        signal,
        onProgress: this.progressSink(),
        onBuilding: () => {
          this.logger.info(`no index in ${this.root} yet; building it first`);
          this.phase = 'indexing';
          this.stateChanged();
        },
        onBuilt: (r) => {
          this.firstBuild = r;
          this.logger.info(`indexed ${r.filesParsed} files, ${r.chunksAdded} chunks in ${r.ms.total.toFixed(0)} ms`);
        },
      });
    }
    return this.becomeReady(engine);
  }

  /** The engine is open: the server is ready and answers from it. */
  private becomeReady(engine: Engine): Engine {
    this.clearProgress();
    this.phase = 'ready';
    this.openedEngine = engine;
    this.stateChanged();
    this.warm(engine);
    return engine;
  }

  private async catchUp(engine: Engine, signal: AbortSignal): Promise<void> {
    // The gate is already held (requests queue behind it); the work itself starts after the
    // "ready" status has gone out, since loading the search snapshot blocks for a while.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const r = await engine.index({ signal, onProgress: this.progressSink() });
      await engine.commit();
      this.logger.info(`index caught up: ${r.filesParsed} files parsed, ${r.filesRemoved} removed, ${r.filesUnchanged} unchanged in ${r.ms.total.toFixed(0)} ms`);
      await engine.releaseParseWorkers();
      // Loading the search snapshot and building the symbol name map take about a second on
      // the Go standard library: not while the requests that queued behind the catching up
      // wait (the first command that started this daemon among them), but once they are done.
      void this.whenIdle().then(() => {
        if (!this.shutdown.signal.aborted && this.openedEngine === engine) engine.warmUp();
      });
    } catch (e) {
      this.lastError = e instanceof VltError ? e : new VltError('INTERNAL', String(e));
      this.logger.error(`index: catching up failed: ${this.lastError.code}: ${this.lastError.message}`);
    } finally {
      this.clearProgress();
      this.releaseLock(engine);
      this.stateChanged();
    }
  }

  /** Delta queue step: indexes `paths` in memory under the writer lock, counting changed lines. */
  private async applyPaths(paths: readonly string[]): Promise<{ changed: readonly string[]; lines: number }> {
    const engine = await this.getEngine();
    await engine.acquireWriteLock();
    const before = new Map<string, string>();
    for (const p of paths) {
      const f = engine.store.getFile(p);
      before.set(p, f ? engine.store.chunksOfFile(f.id).map((c) => c.text).join('\n') : '');
    }
    const report = await engine.index({ paths: [...paths], persist: false });
    if (report.changed.length > 0) this.warm(engine, true);
    let lines = 0;
    for (const p of report.changed) {
      const f = engine.store.getFile(p);
      const after = f ? engine.store.chunksOfFile(f.id).map((c) => c.text).join('\n') : '';
      lines += changedLineCount(before.get(p) ?? '', after);
    }
    if (report.changed.length === 0 && !this.queue?.dirty) {
      // Nothing to queue. A path the index did not know makes the run walk the workspace, which
      // refreshes the index's bookkeeping (skip lists): write that now, so the lock can go back.
      if (engine.store.hasUnsavedChanges) await engine.commit();
      this.releaseLock(engine);
    }
    return { changed: report.changed, lines };
  }

  private async commitWriter(): Promise<void> {
    const engine = await this.getEngine();
    if (!engine.holdsWriteLock) return;
    await engine.commit();
    this.releaseLock(engine);
    this.stateChanged();
  }

  private releaseLock(engine: Engine): void {
    try {
      engine.releaseWriteLock();
    } catch (e) {
      this.logger.warn(`index: kept the writer lock: ${errorMessage(e)}`);
    }
  }

  private foldWhenIdle(session: string): void {
    // A record is one append to the session journal; folding the journal into the store
    // (token counts, compression, a rewrite of memory.db) is work for when the server is idle,
    // so that it never lands between an agent's calls.
    clearTimeout(this.idleFold);
    this.idleFold = setTimeout(() => {
      this.recorded = this.recorded.then(() =>
        this.getMemory()
          .then((m) => m.session(session).settle())
          .catch((e: unknown) => this.logger.warn(`session: could not fold the journal: ${errorMessage(e)}`)),
      );
    }, IDLE_FOLD_MS);
    this.idleFold.unref();
  }

  private record(session: string, call: { tool: string; author: string; input: unknown; outcome: ToolOutcome<object> }): Promise<void> {
    return this.getMemory()
      .then((m) =>
        recordToolExchange(m.session(session), {
          tool: call.tool,
          author: call.author,
          input: call.input,
          output: call.outcome.ok ? call.outcome.value : undefined,
          ...(call.outcome.ok ? {} : { error: `${call.outcome.error.code}: ${call.outcome.error.message}` }),
        }),
      )
      .catch((e: unknown) => this.logger.warn(`session: could not record ${call.tool}: ${errorMessage(e)}`));
  }
}
