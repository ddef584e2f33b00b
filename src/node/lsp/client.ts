/**
 * One language server over stdio: spawn, `initialize`, readiness, lazily opened documents,
 * requests with a deadline, crash detection and restart. Every public method resolves to an
 * answer (never rejects) no later than the caller's `timeoutMs`.
 *
 * A running server is a `Session` (one process, one connection); `LspClient` owns the current
 * session and replaces it after a crash, within a restart budget. Answers carry raw LSP shapes,
 * validated; converting them to the engine's positions is the caller's job (see ./index.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  ApplyWorkspaceEditRequest,
  CancellationTokenSource,
  ConfigurationRequest,
  createMessageConnection,
  DefinitionRequest,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DidSaveTextDocumentNotification,
  DocumentDiagnosticRequest,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  LSPErrorCodes,
  PublishDiagnosticsNotification,
  ReferencesRequest,
  RegistrationRequest,
  ResponseError,
  ShowMessageNotification,
  ShowMessageRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  UnregistrationRequest,
  WorkDoneProgressCreateRequest,
  WorkspaceFoldersRequest,
  type CancellationToken,
  type ClientCapabilities,
  type InitializeParams,
  type MessageConnection,
  type ServerCapabilities,
} from 'vscode-languageserver-protocol/node';
import { z } from 'zod';
import type { LanguageServerInfo, LspAnswer, LspCallOptions, LspFailure } from '../../core/intel/lsp';
import { languageForPath } from '../../core/parse/languages';
import type { Logger } from '../../core/ports';
import type { LanguageId } from '../../core/types';
import { ABORTED, CallScope, delay, elapsed, EXPIRED, withTimeout } from './deadline';
import { FramingWatchdog, ProcessGroup } from './process';
import { lspLanguageId, type ServerSpec } from './servers';
import { Diagnostic, DiagnosticReport, HoverResult, hoverMarkdown, LocationsResult, toLocations, type LspDiagnostic, type LspLocation, type LspPosition } from './shapes';
import { errorMessage } from '../../core/errors';

// ---------------------------------------------------------------------------------------------

export interface LspClientOptions {
  spec: ServerSpec;
  /** Absolute workspace root: the server's root URI and working directory. */
  root: string;
  logger: Logger;
  /**
   * Bound on start-up: `initialize` must be answered within it (else the server is killed and
   * counts as crashed), and work-done progress stops holding calls back once it has passed.
   */
  readyTimeoutMs?: number;
  /** Quiet time without outstanding `$/progress` after which a fresh server counts as ready. */
  settleMs?: number;
  /** Quiet time after a `publishDiagnostics` before it is taken as the file's full set. */
  diagnosticsSettleMs?: number;
  /** Documents kept open; the least recently used one is closed beyond this. */
  maxOpenFiles?: number;
  /** Crashes tolerated within `windowMs` before calls answer `unavailable`. */
  restartLimit?: { crashes: number; windowMs: number };
  /** Time `dispose` gives the server to exit after `shutdown`/`exit`, and again after SIGTERM. */
  graceMs?: number;
}

const DEFAULTS = {
  readyTimeoutMs: 30_000,
  settleMs: 200,
  diagnosticsSettleMs: 300,
  maxOpenFiles: 64,
  restartLimit: { crashes: 3, windowMs: 60_000 },
  graceMs: 1_000,
};

/** Internal: a call ends with this failure. */
class CallFailure extends Error {
  constructor(
    readonly failure: LspFailure,
    readonly reason: string,
  ) {
    super(reason);
  }
}

interface Death {
  failure: LspFailure;
  reason: string;
  at: number;
  /** Counted against the restart budget (not a requested stop). */
  crash: boolean;
  /** The binary cannot run at all (ENOENT/EACCES): no point in restarting. */
  permanent: boolean;
}

class SessionDied extends Error {
  constructor(readonly death: Death) {
    super(death.reason);
  }
}

/** One language server, started on first use and restarted after a crash. */
export class LspClient {
  private readonly opts: Required<LspClientOptions>;
  private session: Session | undefined;
  private readonly crashes: Death[] = [];
  private lastDeath: Death | undefined;
  private missing: string | undefined;
  private restarts = 0;
  private disposed = false;

  constructor(opts: LspClientOptions) {
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
    this.opts = { ...DEFAULTS, ...given } as Required<LspClientOptions>;
    this.missing = opts.spec.missing ?? missingExecutable(opts.spec.command);
  }

  get name(): string {
    return this.opts.spec.name;
  }

  get languages(): LanguageId[] {
    return this.opts.spec.languages;
  }

  /** The process id of the running server, if any (tests use it to check for leaks). */
  get pid(): number | undefined {
    return this.session && !this.session.dead ? this.session.pid : undefined;
  }

  info(): LanguageServerInfo {
    const { spec } = this.opts;
    const base = { name: spec.name, languages: spec.languages, restarts: this.restarts };
    if (this.missing) return { ...base, state: 'not-installed', detail: this.missing };
    const command = [spec.command, ...spec.args].join(' ');
    const s = this.session;
    if (!this.disposed && s && !s.dead) return { ...base, state: s.isReady ? 'ready' : 'starting', detail: command, warm: s.answeredReferences };
    if (!this.disposed && this.lastDeath?.crash) {
      const gaveUp = this.budgetExhausted();
      return { ...base, state: 'crashed', detail: gaveUp ? `gave up: ${gaveUp}` : this.lastDeath.reason, warm: false };
    }
    return { ...base, state: 'stopped', detail: command, warm: false };
  }

  /** `textDocument/definition`; LocationLinks are reduced to their target selection range. */
  definition(file: string, position: LspPosition, opts: LspCallOptions): Promise<LspAnswer<LspLocation[]>> {
    return this.call(file, opts, 'textDocument/definition', async (s, doc, token) => {
      const raw: unknown = await s.connection.sendRequest(DefinitionRequest.type, { textDocument: { uri: doc.uri }, position }, token);
      return toLocations(parse(LocationsResult, raw, 'definition'));
    });
  }

  references(file: string, position: LspPosition, includeDeclaration: boolean, opts: LspCallOptions): Promise<LspAnswer<LspLocation[]>> {
    return this.call(file, opts, 'textDocument/references', async (s, doc, token) => {
      const params = { textDocument: { uri: doc.uri }, position, context: { includeDeclaration } };
      const raw: unknown = await s.connection.sendRequest(ReferencesRequest.type, params, token);
      return toLocations(parse(LocationsResult, raw, 'references'));
    });
  }

  /** Hover contents as markdown, or null when the server has nothing to show. */
  hover(file: string, position: LspPosition, opts: LspCallOptions): Promise<LspAnswer<string | null>> {
    return this.call(file, opts, 'textDocument/hover', async (s, doc, token) => {
      const raw: unknown = await s.connection.sendRequest(HoverRequest.type, { textDocument: { uri: doc.uri }, position }, token);
      return hoverMarkdown(parse(HoverResult, raw, 'hover'));
    });
  }

  /**
   * The file's diagnostics: pulled (`textDocument/diagnostic`) when the server offers it, else
   * the latest `publishDiagnostics` sent after the file was last synchronised.
   */
  diagnostics(file: string, opts: LspCallOptions): Promise<LspAnswer<LspDiagnostic[]>> {
    return this.call(file, opts, 'diagnostics', (s, doc, token, scope) =>
      s.supportsPullDiagnostics() ? s.pullDiagnostics(doc, token) : s.pushedDiagnostics(doc, scope),
    );
  }

  /** Stops the server (shutdown/exit, then SIGTERM, then SIGKILL). Safe to call twice. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const s = this.session;
    this.session = undefined;
    if (s) await s.stop(this.opts.graceMs);
  }

  /**
   * The skeleton of every call: get a live session, wait for `initialize`, synchronise the
   * file, wait for readiness, run the request. Each wait races the deadline and the session's
   * death, so the call ends on time whatever the server does; which wait ran out decides the
   * failure the caller sees.
   */
  private async call<T>(
    file: string,
    opts: LspCallOptions,
    what: string,
    work: (s: Session, doc: OpenDocument, token: CancellationToken, scope: CallScope) => Promise<T>,
  ): Promise<LspAnswer<T>> {
    const t0 = performance.now();
    const scope = new CallScope(opts.timeoutMs, opts.signal);
    const cancel = new CancellationTokenSource();
    let stage: 'start' | 'sync' | 'ready' | 'request' = 'start';
    let session: Session | undefined;
    try {
      session = this.acquire();
      const s = session;
      const wait = <R>(p: Promise<R>): Promise<R> => scope.wait(s.guard(p));
      await wait(s.initialized);
      stage = 'sync';
      const doc = await wait(s.sync(file));
      stage = 'ready';
      await wait(s.ready);
      stage = 'request';
      const value = await wait(work(s, doc, cancel.token, scope));
      if (what === 'textDocument/references') s.answeredReferences = true;
      return { ok: true, value, server: this.name, ms: elapsed(t0) };
    } catch (e) {
      // Tells the server to stop working on a request we no longer wait for ($/cancelRequest).
      cancel.cancel();
      const f = this.classify(e, stage, what, session, elapsed(t0));
      if (f.failure !== 'unavailable') this.opts.logger.debug(`lsp ${this.name}: ${what} ${file}: ${f.failure}: ${f.reason}`);
      return { ok: false, failure: f.failure, reason: f.reason, server: this.name, ms: elapsed(t0) };
    } finally {
      scope.close();
      cancel.dispose();
    }
  }

  private classify(e: unknown, stage: string, what: string, s: Session | undefined, ms: number): CallFailure {
    if (e instanceof CallFailure) return e;
    if (e instanceof SessionDied) return new CallFailure(e.death.failure, e.death.reason);
    if (e === ABORTED) return new CallFailure('timeout', 'cancelled by the caller');
    if (e === EXPIRED) {
      if (stage === 'start') return new CallFailure('not-ready', `${this.name} is starting: initialize not answered after ${ms} ms`);
      if (stage === 'ready') return new CallFailure('not-ready', `${this.name} is busy (${s?.busyWith() ?? 'starting'}) after ${ms} ms`);
      // Progress can begin after the settle window (tsserver starts loading the project a
      // moment after the first didOpen): a request stuck behind it is "not ready", not slow.
      if (s?.isBusy()) return new CallFailure('not-ready', `${this.name} is busy (${s.busyWith()}): no answer to ${what} within ${ms} ms`);
      return new CallFailure('timeout', `${this.name} did not answer ${what} within ${ms} ms`);
    }
    if (e instanceof ResponseError) {
      // Both mean "ask again later": the server was busy or its state changed under the request.
      const busy = e.code === LSPErrorCodes.ContentModified || e.code === LSPErrorCodes.ServerCancelled;
      return new CallFailure(busy ? 'not-ready' : 'error', `${this.name} answered ${what} with error ${e.code}: ${e.message}`);
    }
    return new CallFailure('error', `${this.name}: ${what}: ${errorMessage(e)}`);
  }

  /** The live session, starting one when there is none (or the last one died). */
  private acquire(): Session {
    if (this.disposed) throw new CallFailure('unavailable', `${this.name} was stopped`);
    if (this.missing) throw new CallFailure('unavailable', this.missing);
    if (this.session && !this.session.dead) return this.session;
    const gaveUp = this.budgetExhausted();
    if (gaveUp) throw new CallFailure('unavailable', gaveUp);
    if (this.session) this.restarts++;
    try {
      this.session = new Session(this.opts, (death) => this.onDeath(death));
    } catch (e) {
      // spawn() throws synchronously only for arguments it cannot use at all.
      this.missing = `cannot start ${this.name}: ${errorMessage(e)}`;
      throw new CallFailure('unavailable', this.missing);
    }
    return this.session;
  }

  private onDeath(death: Death): void {
    this.lastDeath = death;
    if (death.permanent) this.missing = death.reason;
    if (!death.crash) return;
    this.crashes.push(death);
    this.opts.logger.warn(`language server ${this.name}: ${death.reason}`);
  }

  /** Why no restart is attempted now, or undefined while the budget allows one. */
  private budgetExhausted(): string | undefined {
    const { crashes, windowMs } = this.opts.restartLimit;
    while (this.crashes.length && Date.now() - this.crashes[0]!.at >= windowMs) this.crashes.shift();
    const recent = this.crashes;
    if (recent.length < crashes) return undefined;
    const last = recent[recent.length - 1];
    return `${this.name} crashed ${recent.length} times within ${Math.round(windowMs / 1000)} s; last: ${last?.reason ?? 'unknown'}`;
  }
}

// ---------------------------------------------------------------------------------------------

interface OpenDocument {
  path: string;
  uri: string;
  version: number;
  mtimeMs: number;
  size: number;
  /** Bumped at every didOpen/didChange: a diagnostics publish is fresh when it matches. */
  generation: number;
}

interface Published {
  items: unknown[];
  at: number;
  generation: number;
}

/** One server process and its connection, from spawn to death. */
class Session {
  readonly connection: MessageConnection;
  readonly initialized: Promise<void>;
  readonly ready: Promise<void>;
  /** A references request was answered: the server has loaded what references need. */
  answeredReferences = false;
  /** Rejects with SessionDied when the process dies or its stream breaks; never resolves. */
  readonly died: Promise<never>;
  dead = false;
  isReady = false;

  private readonly child: ChildProcess;
  private readonly name: string;
  private readonly logger: Logger;
  private readonly group: ProcessGroup | undefined;
  private readonly startedAt = Date.now();
  private capabilities: ServerCapabilities | undefined;
  private stopping = false;
  private initializeAnswered = false;
  private exited = false;
  private readonly exitWaiters = new Set<() => void>();
  private rejectDied!: (e: SessionDied) => void;
  private markReadyNow!: () => void;
  private readonly stderrTail: string[] = [];
  // Readiness: work-done progress tokens begun and not yet ended, and the last sign of work.
  private readonly progress = new Map<string, string>();
  private lastActivity = Date.now();
  private readyTimer: NodeJS.Timeout | undefined;
  private readonly registrations = new Map<string, string>();
  // Documents, oldest first (a Map keeps insertion order; touching re-inserts).
  private readonly docs = new Map<string, OpenDocument>();
  private syncChain: Promise<unknown> = Promise.resolve();
  private readonly published = new Map<string, Published>();
  private readonly publishWaiters = new Set<() => void>();

  constructor(
    private readonly opts: Required<LspClientOptions>,
    private readonly onDeath: (d: Death) => void,
  ) {
    const { spec, root } = opts;
    this.name = spec.name;
    this.logger = opts.logger;
    this.died = new Promise<never>((_, reject) => (this.rejectDied = reject));
    this.died.catch(() => {});
    this.ready = new Promise<void>((resolve) => (this.markReadyNow = resolve));

    this.child = spawn(spec.command, spec.args, {
      cwd: root,
      env: { ...process.env, ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so that stopping it also stops what it spawned (tsserver,
      // workers) instead of leaving them orphaned.
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    this.group = this.child.pid !== undefined ? ProcessGroup.track(this.child.pid) : undefined;
    // Pipes and the process must not keep a host alive that forgot to dispose; the exit hook
    // still kills the group when that host ends.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
      stream?.on('error', (err) => this.logger.debug(`lsp ${this.name}: stdio: ${err.message}`));
    }
    this.child.on('error', (err: NodeJS.ErrnoException) => {
      // ENOENT also means a missing working directory, which is no reason to give up for good.
      const permanent = (err.code === 'ENOENT' || err.code === 'EACCES') && existsSync(root);
      this.die({ failure: 'unavailable', reason: `cannot start ${spec.name} (${spec.command}): ${err.message}`, crash: !permanent, permanent });
    });
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      for (const w of this.exitWaiters) w();
      // stderr often carries the reason and may still be in flight when 'exit' fires.
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      setTimeout(() => this.die(this.deathAfter(how)), 50).unref();
    });
    this.drainStderr();

    const stdout = this.child.stdout!;
    const watchdog = new FramingWatchdog();
    stdout.on('data', (chunk: Buffer) => {
      const bad = watchdog.feed(chunk);
      if (bad) this.die({ failure: 'error', reason: `${this.name} wrote non-LSP output on stdout: ${bad}`, crash: true, permanent: false });
    });
    this.connection = createMessageConnection(new StreamMessageReader(stdout), new StreamMessageWriter(this.child.stdin!), {
      error: (m) => this.logger.debug(`lsp ${this.name}: jsonrpc: ${m}`),
      warn: (m) => this.logger.debug(`lsp ${this.name}: jsonrpc: ${m}`),
      info: () => {},
      log: () => {},
    });
    this.connection.onError(([err]) => this.die({ failure: 'error', reason: `${this.name} broke the protocol: ${err.message}`, crash: true, permanent: false }));
    this.connection.onClose(() => {
      // The exit event usually follows with a better reason (code, stderr); give it a moment.
      setTimeout(() => this.die(this.deathAfter('closed its output')), 100).unref();
    });
    this.handleServerMessages();
    this.connection.listen();

    this.initialized = this.initialize();
    this.initialized.catch(() => {});
    const bound = setTimeout(() => {
      if (!this.initializeAnswered) this.die({ failure: 'unavailable', reason: `${this.name} did not answer initialize within ${opts.readyTimeoutMs} ms`, crash: true, permanent: false });
    }, opts.readyTimeoutMs);
    bound.unref();
    void this.initialized.then(() => clearTimeout(bound), () => clearTimeout(bound));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Races `p` against this session's death. */
  guard<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.died]);
  }

  /** Whether work-done progress is under way (project loading, indexing). */
  isBusy(): boolean {
    return this.progress.size > 0;
  }

  /** What still keeps the server from counting as ready, for a `not-ready` reason. */
  busyWith(): string {
    const titles = [...new Set(this.progress.values())];
    return titles.length ? titles.join(', ') : 'settling';
  }

  supportsPullDiagnostics(): boolean {
    return !!this.capabilities?.diagnosticProvider || [...this.registrations.values()].includes('textDocument/diagnostic');
  }

  /** Opens the file on the server, or re-sends it when it changed on disk since. */
  sync(file: string): Promise<OpenDocument> {
    // One at a time: two calls on the same new file must not both send didOpen.
    const next = this.syncChain.then(() => this.syncNow(file));
    this.syncChain = next.catch(() => {});
    return next;
  }

  async pullDiagnostics(doc: OpenDocument, token: CancellationToken): Promise<LspDiagnostic[]> {
    const raw: unknown = await this.connection.sendRequest(DocumentDiagnosticRequest.type, { textDocument: { uri: doc.uri } }, token);
    const report = parse(DiagnosticReport, raw, 'diagnostic');
    // We never send a previousResultId, so "unchanged" should not happen; be lenient anyway.
    return report.kind === 'full' ? report.items : parse(z.array(Diagnostic), this.published.get(doc.path)?.items ?? [], 'diagnostic');
  }

  /**
   * Waits for a `publishDiagnostics` sent after the file's last sync, then for a quiet spell:
   * typescript-language-server publishes syntax errors first and type errors a moment later.
   * Near the deadline the latest fresh set is returned rather than nothing.
   */
  async pushedDiagnostics(doc: OpenDocument, scope: CallScope): Promise<LspDiagnostic[]> {
    for (;;) {
      // The call may have ended (deadline) while this loop slept: stop, do not wait on.
      if (scope.signal.aborted || this.dead) throw new CallFailure('timeout', 'no longer waiting for diagnostics');
      const p = this.published.get(doc.path);
      if (p && p.generation === doc.generation) {
        const settleLeft = this.opts.diagnosticsSettleMs - (Date.now() - p.at);
        if (settleLeft <= 0 || scope.remaining() <= settleLeft + 25) return parse(z.array(Diagnostic), p.items, 'publishDiagnostics');
        await Promise.race([this.nextPublish(scope.signal), delay(settleLeft)]);
      } else {
        await this.nextPublish(scope.signal);
      }
    }
  }

  /** Asks the server to exit, then signals its process group until it is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (!this.dead && this.initializeAnswered) {
      try {
        await withTimeout(this.connection.sendRequest(ShutdownRequest.type), graceMs / 2);
        await withTimeout(this.connection.sendNotification(ExitNotification.type), graceMs / 2);
      } catch {
        // Unresponsive or gone: the signals below take over.
      }
    }
    if (!(await this.waitExit(graceMs))) {
      this.group?.signal('SIGTERM');
      if (!(await this.waitExit(graceMs))) {
        this.group?.signal('SIGKILL');
        await this.waitExit(graceMs);
      }
    }
    // Children the server spawned may outlive it; they share its process group.
    await this.group?.reap(graceMs);
    this.die({ failure: 'unavailable', reason: `${this.name} was stopped`, crash: false, permanent: false });
    this.connection.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private async initialize(): Promise<void> {
    const { root, spec } = this.opts;
    const rootUri = pathToFileURL(root).href;
    const params: InitializeParams = {
      // Servers built on vscode-languageserver exit by themselves when this process is gone.
      processId: process.pid,
      clientInfo: { name: 'vlt-oracle' },
      rootUri,
      rootPath: root,
      workspaceFolders: [{ uri: rootUri, name: path.basename(root) }],
      capabilities: CLIENT_CAPABILITIES,
      initializationOptions: spec.initializationOptions,
    };
    const result = await this.connection.sendRequest(InitializeRequest.type, params);
    this.initializeAnswered = true;
    this.capabilities = (result as { capabilities?: ServerCapabilities } | null)?.capabilities ?? {};
    await this.connection.sendNotification(InitializedNotification.type, {});
    this.lastActivity = Date.now();
    this.checkReady();
  }

  private handleServerMessages(): void {
    const c = this.connection;
    const { settings } = this.opts.spec;
    c.onRequest(ConfigurationRequest.type, (params) => params.items.map((item) => lookupSection(settings, item.section) ?? {}));
    // By id: pyright registers pull diagnostics again before unregistering the old id.
    c.onRequest(RegistrationRequest.type, (params) => {
      for (const r of params.registrations) this.registrations.set(r.id, r.method);
    });
    c.onRequest(UnregistrationRequest.type, (params) => {
      for (const u of params.unregisterations) this.registrations.delete(u.id);
    });
    c.onRequest(WorkDoneProgressCreateRequest.type, () => undefined);
    c.onRequest(ShowMessageRequest.type, () => null);
    c.onRequest(WorkspaceFoldersRequest.type, () => [{ uri: pathToFileURL(this.opts.root).href, name: path.basename(this.opts.root) }]);
    c.onRequest(ApplyWorkspaceEditRequest.type, () => ({ applied: false, failureReason: 'read-only client' }));
    // Refresh requests (semantic tokens, inlay hints, diagnostics...) concern editors only.
    c.onRequest((method) => {
      if (method.endsWith('/refresh')) return null;
      return new ResponseError(-32601, `vlt does not handle ${method}`);
    });
    c.onNotification(LogMessageNotification.type, (p) => this.logger.debug(`lsp ${this.name}: ${p.message}`));
    c.onNotification(ShowMessageNotification.type, (p) => this.logger.debug(`lsp ${this.name}: ${p.message}`));
    c.onNotification(PublishDiagnosticsNotification.type, (p) => this.onPublish(p.uri, p.version, p.diagnostics));
    c.onUnhandledProgress(({ token, value }) => this.onProgress(String(token), value));
  }

  private onProgress(token: string, value: unknown): void {
    const v = value as { kind?: string; title?: string } | null;
    if (v?.kind === 'begin') this.progress.set(token, v.title ?? token);
    else if (v?.kind === 'end') this.progress.delete(token);
    this.lastActivity = Date.now();
    this.checkReady();
  }

  /**
   * Ready when the first burst of work-done progress is over: nothing begun and not ended, and
   * quiet for `settleMs`. After `readyTimeoutMs`, ready regardless: some servers report
   * progress for minutes (background indexing) while answering well enough.
   */
  private checkReady(): void {
    if (this.isReady || this.dead || !this.initializeAnswered) return;
    const now = Date.now();
    const boundLeft = this.startedAt + this.opts.readyTimeoutMs - now;
    const quietLeft = this.opts.settleMs - (now - this.lastActivity);
    if (boundLeft <= 0 || (this.progress.size === 0 && quietLeft <= 0)) {
      if (boundLeft <= 0 && this.progress.size) this.logger.debug(`lsp ${this.name}: readiness bound passed while busy (${this.busyWith()})`);
      this.isReady = true;
      clearTimeout(this.readyTimer);
      this.markReadyNow();
      return;
    }
    clearTimeout(this.readyTimer);
    this.readyTimer = setTimeout(() => this.checkReady(), this.progress.size ? boundLeft : Math.min(quietLeft, boundLeft));
    this.readyTimer.unref();
  }

  private async syncNow(file: string): Promise<OpenDocument> {
    let st;
    try {
      st = await stat(file);
    } catch (e) {
      throw new CallFailure('error', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    if (!st.isFile()) throw new CallFailure('error', `${file} is not a file`);
    const known = this.docs.get(file);
    if (known && known.mtimeMs === st.mtimeMs && known.size === st.size) {
      this.docs.delete(file);
      this.docs.set(file, known);
      return known;
    }
    const text = await readFile(file, 'utf8');
    const c = this.connection;
    if (known) {
      known.version++;
      known.generation++;
      known.mtimeMs = st.mtimeMs;
      known.size = st.size;
      await c.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: known.uri, version: known.version }, contentChanges: [{ text }] });
      if (this.wantsSave()) await c.sendNotification(DidSaveTextDocumentNotification.type, { textDocument: { uri: known.uri }, text });
      return known;
    }
    const language = languageForPath(file) ?? this.opts.spec.languages[0] ?? 'typescript';
    const doc: OpenDocument = { path: file, uri: pathToFileURL(file).href, version: 1, mtimeMs: st.mtimeMs, size: st.size, generation: 1 };
    await c.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: doc.uri, languageId: lspLanguageId(language, file), version: doc.version, text },
    });
    this.docs.set(file, doc);
    if (!this.isReady) {
      // Opening the first file is what makes some servers (tsserver) load the project.
      this.lastActivity = Date.now();
      this.checkReady();
    }
    await this.evict();
    return doc;
  }

  private async evict(): Promise<void> {
    while (this.docs.size > this.opts.maxOpenFiles) {
      const oldest = this.docs.values().next().value;
      if (!oldest) return;
      this.docs.delete(oldest.path);
      this.published.delete(oldest.path);
      await this.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri: oldest.uri } });
    }
  }

  private wantsSave(): boolean {
    const sync = this.capabilities?.textDocumentSync;
    return typeof sync === 'object' && !!sync.save;
  }

  private onPublish(uri: string, version: number | undefined, items: unknown[]): void {
    const file = uriToPath(uri);
    if (!file) return;
    const doc = this.docs.get(file);
    // A versioned publish for older content than we last sent is stale.
    if (doc && typeof version === 'number' && version < doc.version) return;
    this.published.set(file, { items, at: Date.now(), generation: doc?.generation ?? 0 });
    for (const w of [...this.publishWaiters]) w();
  }

  private nextPublish(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        this.publishWaiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.publishWaiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private waitExit(ms: number): Promise<boolean> {
    if (this.exited || this.child.pid === undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.exitWaiters.delete(done);
        resolve(this.exited);
      };
      const timer = setTimeout(done, ms);
      this.exitWaiters.add(done);
    });
  }

  private deathAfter(how: string): Omit<Death, 'at'> {
    const tail = this.stderrTail.slice(-3).join(' | ');
    const reason = `${this.name} ${how}${tail ? ` (stderr: ${tail})` : ''}`;
    // Dying before answering initialize is failing to start; after, it is a crash.
    return this.initializeAnswered
      ? { failure: 'crashed', reason, crash: true, permanent: false }
      : { failure: 'unavailable', reason: `${this.name} failed to start: ${how}${tail ? ` (stderr: ${tail})` : ''}`, crash: true, permanent: false };
  }

  private die(d: Omit<Death, 'at'>): void {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.readyTimer);
    const death: Death = { ...d, at: Date.now(), crash: d.crash && !this.stopping };
    this.rejectDied(new SessionDied(death));
    for (const w of [...this.publishWaiters]) w();
    this.onDeath(death);
    if (!this.stopping) {
      // A server that broke its stream may still be running; its children may be orphaned.
      const group = this.group;
      group?.signal('SIGTERM');
      void group?.reap(this.opts.graceMs).then(() => this.connection.dispose());
    }
  }

  private drainStderr(): void {
    let partial = '';
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        const clipped = line.length > 300 ? `${line.slice(0, 300)}…` : line;
        this.logger.debug(`lsp ${this.name} stderr: ${clipped}`);
        this.stderrTail.push(clipped);
        if (this.stderrTail.length > 10) this.stderrTail.shift();
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------

const CLIENT_CAPABILITIES: ClientCapabilities = {
  general: { positionEncodings: ['utf-16'] },
  window: { workDoneProgress: true, showMessage: {} },
  workspace: { configuration: true, workspaceFolders: true, didChangeConfiguration: { dynamicRegistration: true } },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true },
    definition: { dynamicRegistration: true, linkSupport: true },
    references: { dynamicRegistration: true },
    hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
    publishDiagnostics: { versionSupport: true, codeDescriptionSupport: true },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
  },
};

// ---------------------------------------------------------------------------------------------

function parse<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new CallFailure('error', `invalid ${what} result${issue ? ` at ${issue.path.join('.') || '(root)'}: ${issue.message}` : ''}`);
}

function lookupSection(settings: Record<string, unknown> | undefined, section: string | undefined): unknown {
  if (!settings) return undefined;
  if (!section) return settings;
  let node: unknown = settings;
  for (const key of section.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The absolute path of a `file:` URI, or undefined for other schemes. */
export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** Why a command cannot be spawned, when that is known without trying. */
function missingExecutable(command: string): string | undefined {
  return path.isAbsolute(command) && !existsSync(command) ? `${command} does not exist` : undefined;
}

